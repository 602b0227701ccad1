package anthropic_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider/anthropic"
)

// The body Stream would send for a transcript whose last message is a
// system update adding a tool, rendered without a key or a network. In
// the changes class the head's tool list never changes (the deferred
// placeholder is there from the first request, so the first real change
// keeps the cache); the update travels in place as a system message with
// a tool_addition block. Cache breakpoints (cache_control) mark the
// system text, the last head tool and the ends of the trailing messages.
// The body is shown one block per line, without model, max_tokens and
// stream.
func ExampleModel_RequestBody() {
	m, err := anthropic.New(anthropic.Config{Model: "claude-opus-5-5"})
	if err != nil {
		fmt.Println(err)
		return
	}
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("You file bugs.")}, ToolsAdded: []llm.Tool{{Name: "read",
			Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}},
		llm.UserText("File a bug.", 1),
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("Tracker connected.")}, ToolsAdded: []llm.Tool{{Name: "create_issue",
			Description: "Create an issue.", Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)}}},
	}
	body, err := m.RequestBody(&llm.Request{Messages: msgs})
	if err != nil {
		fmt.Println(err)
		return
	}

	var req struct {
		System, Tools []json.RawMessage
		Messages      []struct {
			Role    string
			Content []json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range req.System {
		fmt.Printf("system: %s\n", b)
	}
	for _, t := range req.Tools {
		fmt.Printf("tool: %s\n", t)
	}
	for _, msg := range req.Messages {
		for _, b := range msg.Content {
			fmt.Printf("%s: %s\n", msg.Role, b)
		}
	}
	// Output:
	// system: {"text":"You file bugs.","cache_control":{"type":"ephemeral"},"type":"text"}
	// tool: {"input_schema":{"type":"object","properties":{"path":{"type":"string"}}},"name":"read","description":"Read a file.","cache_control":{"type":"ephemeral"}}
	// tool: {"input_schema":{"type":"object","properties":{},"required":[]},"name":"__toolshelf_deferred_placeholder__","defer_loading":true,"description":"Reserved placeholder. Never available. Never call this."}
	// user: {"text":"File a bug.","cache_control":{"type":"ephemeral"},"type":"text"}
	// system: {"text":"Tracker connected.","type":"text"}
	// system: {"tool":{"definition":{"input_schema":{"type":"object","properties":{"title":{"type":"string"}}},"name":"create_issue","description":"Create an issue."},"type":"tool_definition"},"cache_control":{"type":"ephemeral"},"type":"tool_addition"}
}
