package provider_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// One transcript, planned for each tool support class. Its head declares
// read; after a call of read, a system update adds create_issue. What a
// class makes of that update decides whether the request's prefix is kept:
// changes and additions declare the tool in place, after the history;
// text and none resend the whole tool list at the top (none also folds
// the update's text into the head); bridge keeps the head's tools (and
// call_tool) for ever and describes the new tool in the update's text.
func ExampleBuild() {
	read := llm.Tool{Name: "read", Description: "Read a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	createIssue := llm.Tool{Name: "create_issue", Description: "Create an issue.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)}
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("You file bugs.")}, ToolsAdded: []llm.Tool{read}},
		llm.UserText("File a bug.", 1),
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Part{{Type: llm.PartToolCall,
			ToolCall: &llm.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"log.txt"}`)}}}},
		{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []llm.Part{llm.Text("panic: nil map")}},
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("Tracker connected.")}, ToolsAdded: []llm.Tool{createIssue}},
	}

	for _, class := range []llm.ToolSupport{llm.ToolsChanges, llm.ToolsAdditions, llm.ToolsText, llm.ToolsNone, llm.ToolsBridge} {
		caps := provider.Capabilities{Tools: class, MidConversationText: true, Anchor: provider.AnchorAdditionalTools}
		p := provider.Build(msgs, caps)
		var tools, entries []string
		for _, t := range p.Tools {
			tools = append(tools, t.Name)
		}
		for _, e := range p.Items {
			if e.Message != nil {
				entries = append(entries, string(e.Message.Role))
				continue
			}
			var what []string
			for _, t := range e.Update.Added {
				what = append(what, "+"+t.Name)
			}
			if e.Update.Text != "" {
				what = append(what, "text")
			}
			entries = append(entries, "update("+strings.Join(what, ", ")+")")
		}
		fmt.Printf("%s: system %q, tools %v\n  %s\n", p.Class, p.System, tools, strings.Join(entries, ", "))
	}

	// The bridge's update, as the model reads it.
	p := provider.Build(msgs, provider.Capabilities{Tools: llm.ToolsBridge, MidConversationText: true})
	fmt.Println(p.Items[len(p.Items)-1].Update.Text)
	// Output:
	// changes: system "You file bugs.", tools [read]
	//   user, assistant, toolResult, update(+create_issue, text)
	// additions: system "You file bugs.", tools [read]
	//   user, assistant, toolResult, update(+create_issue, text)
	// text: system "You file bugs.", tools [read create_issue]
	//   user, assistant, toolResult, update(text)
	// none: system "You file bugs.\n\nTracker connected.", tools [read create_issue]
	//   user, assistant, toolResult
	// bridge: system "You file bugs.", tools [read call_tool]
	//   user, assistant, toolResult, update(text)
	// Tracker connected.
	//
	// Tools loaded. Call them with call_tool {"name": ..., "arguments": {...}}; each line is a tool's name, description and JSON Schema:
	// {"name":"create_issue","description":"Create an issue.","parameters":{"type":"object","properties":{"title":{"type":"string"}}}}
}
