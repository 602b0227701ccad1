package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tool"
)

// pdfSchema is written as a real PDF reader's MCP server writes its page
// parameter: draft-04's boolean exclusiveMinimum beside the bound, which
// JSON Schema 2020-12, the draft providers read, writes as a number.
const pdfSchema = `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"page":{"type":"number","minimum":0,"exclusiveMinimum":true}},"required":["page"]}`

// TestDraft04SchemaThroughTheAdapters registers a tool with a draft-04
// schema the emulator refuses as it is written, runs a conversation
// through the agent and each adapter against the emulator, and checks
// that every request is accepted (the adapters send the schema in its
// 2020-12 form), that the arguments are validated by draft-04 (page 0 is
// refused, page 1 runs) and that the transcript keeps the schema as
// declared.
func TestDraft04SchemaThroughTheAdapters(t *testing.T) {
	t.Parallel()
	probe := newEmulator(t, emulator.Echo{})
	if status, body := probe.sendTool(t, "Read one page.", json.RawMessage(pdfSchema)); status != http.StatusBadRequest ||
		!strings.Contains(body, "JSON schema is invalid") {
		t.Fatalf("the emulator accepts the declared schema as it is: %d %.300s", status, body)
	}
	for _, m := range []struct {
		name  string
		model func(string) llm.Model
	}{
		{"anthropic", anthropicModel(t, "claude-opus-5-5", nil)},
		{"responses", responsesModel(t, "gpt-5.5", nil)},
		{"chat", chatModel(t, "gpt-5.5", nil)},
	} {
		t.Run(m.name, func(t *testing.T) {
			var mu sync.Mutex
			var pages []string
			reg := tool.NewRegistry()
			pdf := tool.Tool{Name: "read_page", Description: "Read one page of a PDF file.", Parameters: json.RawMessage(pdfSchema),
				Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
					mu.Lock()
					pages = append(pages, string(args))
					mu.Unlock()
					return tool.TextResult("page text"), nil
				})}
			if err := reg.Register(pdf); err != nil {
				t.Fatalf("registering the draft-04 tool: %v", err)
			}
			es := newEmulator(t, emulator.NewScripted(
				emulator.Reply{Calls: []emulator.Call{{ID: "call_0", Name: "read_page", Arguments: json.RawMessage(`{"page":0}`)}}},
				emulator.Reply{Calls: []emulator.Call{{ID: "call_1", Name: "read_page", Arguments: json.RawMessage(`{"page":1}`)}}},
				emulator.Reply{Text: "Read it."}))
			a, err := agent.New(agent.Config{Model: m.model(es.URL), Tools: reg})
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range a.Run(context.Background(), llm.UserText("read the first page", 1)) {
				if err != nil {
					t.Fatalf("run: %v", err)
				}
			}
			recs := es.records()
			if len(recs) != 3 {
				t.Fatalf("%d requests, want 3", len(recs))
			}
			for _, r := range recs {
				if r.Status != http.StatusOK {
					t.Fatalf("request %d: %d %s", r.Seq, r.Status, r.Error)
				}
				if !bytes.Contains(r.Body, []byte(`"exclusiveMinimum":0`)) || bytes.Contains(r.Body, []byte(`"exclusiveMinimum":true`)) {
					t.Errorf("request %d does not declare the 2020-12 form:\n%s", r.Seq, r.Body)
				}
			}
			var results []llm.Message
			for _, msg := range a.Messages() {
				if msg.Role == llm.RoleToolResult {
					results = append(results, msg)
				}
			}
			if len(results) != 2 {
				t.Fatalf("%d tool results, want 2", len(results))
			}
			if text := llm.ContentText(results[0].Content, ""); !results[0].IsError || !strings.Contains(text, `Invalid arguments for tool "read_page": at /page:`) {
				t.Errorf("page 0: %q (error %v), want an invalid-arguments error", text, results[0].IsError)
			}
			if text := llm.ContentText(results[1].Content, ""); results[1].IsError || text != "page text" {
				t.Errorf("page 1: %q (error %v)", text, results[1].IsError)
			}
			if len(pages) != 1 || pages[0] != `{"page":1}` {
				t.Errorf("the tool ran with %q, want page 1 only", pages)
			}
			// The transcript declares the schema as the server wrote it.
			for _, msg := range a.Messages() {
				for _, d := range msg.ToolsAdded {
					if d.Name == "read_page" && string(d.Parameters) != pdfSchema {
						t.Errorf("the transcript declares %s", d.Parameters)
					}
				}
			}
		})
	}
}

// TestRenderedSchemasPassTheEmulator checks schemas written for older
// drafts, as servers write them: each passes tool.CheckDefinition, needs
// repairs, and its rendered form passes the emulator, which checks
// schemas the way Anthropic does.
func TestRenderedSchemasPassTheEmulator(t *testing.T) {
	t.Parallel()
	es := newEmulator(t, emulator.Echo{})
	const d4, d7 = `"$schema":"http://json-schema.org/draft-04/schema#",`, `"$schema":"http://json-schema.org/draft-07/schema#",`
	for _, s := range []string{
		pdfSchema,
		`{"type":"object","properties":{"n":{"type":"integer","maximum":10,"exclusiveMaximum":true}}}`,
		`{` + d7 + `"type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}],"additionalItems":false}}}`,
		`{` + d4 + `"id":"http://example.com/tool","type":"object","definitions":{"s":{"id":"#str","type":"string"}},"properties":{"a":{"$ref":"#str"}}}`,
		`{` + d7 + `"type":"object","properties":{"a":{"$ref":"#/definitions/s","maxLength":1}},"definitions":{"s":{"type":"string"}},"dependencies":{"a":["b"],"b":{"required":["a"]}}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","properties":{"kids":{"type":"array","items":{"$recursiveRef":"#"}}}}`,
	} {
		if err := tool.CheckDefinition("Does things.", json.RawMessage(s)); err != nil {
			t.Errorf("CheckDefinition refuses %s: %v", s, err)
			continue
		}
		r, err := tool.RenderSchema(json.RawMessage(s))
		if err != nil || len(r.Repairs) == 0 {
			t.Errorf("RenderSchema(%s) = %s, %v: want repairs", s, r.Schema, err)
			continue
		}
		if status, body := es.sendTool(t, "Does things.", r.Schema); status != http.StatusOK {
			t.Errorf("the emulator refuses the rendered %s: %d %.300s", r.Schema, status, body)
		}
	}
}
