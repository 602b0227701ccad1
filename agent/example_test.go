package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// One run with one Go tool. The agent declares the registry's active tools
// in the transcript's head, runs the tool the model calls, sends its result
// back and stops when the model answers with text. The model here is a
// script (llmtest); a real program passes a provider adapter instead.
func ExampleAgent_Run() {
	reg := tool.NewRegistry()
	err := reg.Register(tool.Tool{
		Name:        "add",
		Description: "Add two integers.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`),
		Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			var in struct{ A, B int }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return tool.TextResult(strconv.Itoa(in.A + in.B)), nil
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	model := llmtest.New(
		llmtest.Call(llm.ToolCall{ID: "call_1", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}),
		llmtest.Say("2 + 3 = 5."),
	)
	a, err := agent.New(agent.Config{Model: model, Tools: reg, SystemPrompt: "You are a calculator."})
	if err != nil {
		fmt.Println(err)
		return
	}

	// The events are what a user interface shows.
	for ev, err := range a.Run(context.Background(), llm.UserText("What is 2 + 3?", 1)) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Type {
		case agent.EventToolStart:
			fmt.Printf("tool %s %s\n", ev.Call.Name, ev.Call.Arguments)
		case agent.EventToolEnd:
			fmt.Printf("  -> %s\n", llm.ContentText(ev.Message.Content, ""))
		case agent.EventTurnEnd:
			if text := llm.ContentText(ev.Message.Content, ""); text != "" {
				fmt.Println("answer:", text)
			}
		}
	}

	// The transcript is the agent's only state: save it to resume later.
	fmt.Println()
	for _, m := range a.Messages() {
		switch m.Role {
		case llm.RoleSystem:
			fmt.Printf("system %q tools=%d\n", llm.ContentText(m.Content, ""), len(m.ToolsAdded))
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls() {
				fmt.Printf("assistant calls %s\n", c.Name)
			}
			if text := llm.ContentText(m.Content, ""); text != "" {
				fmt.Printf("assistant %q\n", text)
			}
		default:
			fmt.Printf("%s %q\n", m.Role, llm.ContentText(m.Content, ""))
		}
	}
	// Output:
	// tool add {"a":2,"b":3}
	//   -> 5
	// answer: 2 + 3 = 5.
	//
	// system "You are a calculator." tools=1
	// user "What is 2 + 3?"
	// assistant calls add
	// toolResult "5"
	// assistant "2 + 3 = 5."
}

// A tool on the shelf, loaded mid-conversation. The server tool is
// deferred: the head declares only tool_search. When the model's search
// activates the tool, the agent declares it before the next request by
// appending a system message with ToolsAdded; nothing earlier in the
// transcript changes, so each request extends the previous one and the
// provider's prompt cache keeps serving the prefix.
func ExampleAgent_Run_toolSearch() {
	reg := tool.NewRegistry()
	ranker, _ := search.NewBM25F(nil)
	searcher := toolsearch.New(reg, ranker)
	err := reg.Register(searcher.Tool(), tool.Tool{
		Name:        "mcp__tracker__create_issue",
		Description: "Create an issue in the tracker.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`),
		Exposure:    tool.Deferred,
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("created issue #7"), nil
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	model := llmtest.New(
		llmtest.Call(llm.ToolCall{ID: "s1", Name: "tool_search", Arguments: json.RawMessage(`{"query":"create an issue"}`)}),
		llmtest.Call(llm.ToolCall{ID: "c1", Name: "mcp__tracker__create_issue", Arguments: json.RawMessage(`{"title":"crash on start"}`)}),
		llmtest.Say("Filed issue #7."),
	)
	a, err := agent.New(agent.Config{Model: model, Tools: reg, SystemPrompt: "You file bugs."})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, err := range a.Run(context.Background(), llm.UserText("File a bug: crash on start.", 1)) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
	}

	for _, m := range a.Messages() {
		line := string(m.Role)
		if text := llm.ContentText(m.Content, ""); text != "" {
			line += fmt.Sprintf(" %q", text)
		}
		for _, t := range m.ToolsAdded {
			line += " +" + t.Name
		}
		for _, c := range m.ToolCalls() {
			line += " calls " + c.Name
		}
		fmt.Println(line)
	}
	reqs := model.Requests()
	for i := 1; i < len(reqs); i++ {
		prev, next := reqs[i-1].Messages, reqs[i].Messages
		fmt.Printf("request %d extends request %d: %v\n", i+1, i, reflect.DeepEqual(prev, next[:len(prev)]))
	}
	// Output:
	// system "You file bugs." +tool_search
	// user "File a bug: crash on start."
	// assistant calls tool_search
	// toolResult "Loaded 1 tool. They are available from your next call:\n- mcp__tracker__create_issue: Create an issue in the tracker."
	// system +mcp__tracker__create_issue
	// assistant calls mcp__tracker__create_issue
	// toolResult "created issue #7"
	// assistant "Filed issue #7."
	// request 2 extends request 1: true
	// request 3 extends request 2: true
}

// Resuming a saved transcript in a fresh registry. The agent keeps the
// tools the transcript declared: a tool whose server has not reconnected
// yet stays declared as a pending name, and becomes callable when it
// registers. Nothing is removed, so the provider's cached prefix holds.
func ExampleNew_resume() {
	saved := []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("You file bugs.")}, ToolsAdded: []llm.Tool{
			{Name: toolsearch.Name, Description: toolsearch.Description, Parameters: json.RawMessage(toolsearch.Parameters)}}},
		llm.UserText("Find the issue tool.", 1),
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Timestamp: 2, Content: []llm.Part{{Type: llm.PartToolCall,
			ToolCall: &llm.ToolCall{ID: "s1", Name: toolsearch.Name, Arguments: json.RawMessage(`{"query":"issue"}`)}}}},
		{Role: llm.RoleToolResult, ToolCallID: "s1", ToolName: toolsearch.Name, Timestamp: 3,
			Content: []llm.Part{llm.Text("Loaded 1 tool. They are available from your next call:\n- mcp__tracker__create_issue: Create an issue in the tracker.")}},
		{Role: llm.RoleSystem, Timestamp: 4, ToolsAdded: []llm.Tool{{Name: "mcp__tracker__create_issue",
			Description: "Create an issue in the tracker.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("It is loaded.")}, StopReason: llm.StopEnd, Timestamp: 5},
	}
	// A fresh process: tool_search is back, the tracker server is still
	// connecting, so its tool is not registered yet.
	reg := tool.NewRegistry()
	ranker, _ := search.NewBM25F(nil)
	reg.Register(toolsearch.New(reg, ranker).Tool())
	a, err := agent.New(agent.Config{Model: llmtest.New(llmtest.Say("Ready.")), Tools: reg, Messages: saved})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, err := range a.Run(context.Background(), llm.UserText("File one more.", 6)) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
	}
	fmt.Println("pending:", reg.Pending())
	fmt.Print("appended:")
	for _, m := range a.Messages()[len(saved):] {
		fmt.Print(" ", m.Role)
		for _, r := range m.ToolsRemoved {
			fmt.Print(" -", r.Name)
		}
	}
	fmt.Println()
	// Output:
	// pending: [mcp__tracker__create_issue]
	// appended: user assistant
}
