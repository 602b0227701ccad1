package openai_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider/openai"
)

// The body Stream would send to the Responses API for a transcript whose
// last message is a system update adding a tool, rendered without a key or
// a network. For gpt-5.5 the capability table gives the additions class
// with the tool_search anchor: the top-level tools stay the head's, and the
// new tool arrives in place as a completed client tool_search call and its
// output (the call id is a hash of the position and the names, so every
// later request repeats it byte for byte), followed by the update's text
// in the developer role. The body is shown one item per line, without
// model and stream.
func ExampleResponses_RequestBody() {
	m, err := openai.NewResponses(openai.Config{Model: "gpt-5.5"})
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

	var req struct{ Tools, Input []json.RawMessage }
	if err := json.Unmarshal(body, &req); err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range req.Tools {
		fmt.Printf("tool: %s\n", t)
	}
	for _, item := range req.Input {
		fmt.Printf("input: %s\n", item)
	}
	// Output:
	// tool: {"type":"function","name":"read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}},"strict":false}
	// input: {"content":"You file bugs.","role":"developer"}
	// input: {"content":[{"text":"File a bug.","type":"input_text"}],"role":"user"}
	// input: {"arguments":{"query":"create_issue","limit":1},"call_id":"toolshelf_load_17lg331hqrodx","status":"completed","execution":"client","type":"tool_search_call"}
	// input: {"tools":[{"type":"function","name":"create_issue","description":"Create an issue.","parameters":{"type":"object","properties":{"title":{"type":"string"}}},"strict":false,"defer_loading":true}],"call_id":"toolshelf_load_17lg331hqrodx","status":"completed","execution":"client","type":"tool_search_output"}
	// input: {"content":"Tracker connected.","role":"developer"}
}
