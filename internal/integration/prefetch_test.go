package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// TestPrefetchKeepsThePrefix runs a conversation with prompt prefetch
// through the front door and every adapter and class of
// TestPrefixInvariant: the first prompt names a tool, which the prefetch
// declares with the first request (the model calls it at once); the
// second loads another with tool_search. Every class renders the
// prefetch's update from the first request, and each request extends the
// one before, except where the class rewrites for the tool_search load
// (text and none, at request 4) as it would without prefetch.
func TestPrefetchKeepsThePrefix(t *testing.T) {
	t.Parallel()
	for _, c := range invariantCases(t) {
		t.Run(c.name, func(t *testing.T) {
			bodies := runPrefetch(t, c.newModel, c.class == llm.ToolsBridge)
			if len(bodies) != 6 {
				t.Fatalf("%d requests, want 6", len(bodies))
			}
			// The description is in a request only when it declares the
			// tool (the prompt names it too).
			if !bytes.Contains(bodies[0], []byte("The notes create tool.")) {
				t.Errorf("the first request does not declare notes_create:\n%s", bodies[0])
			}
			var want []int
			if c.class == llm.ToolsText || c.class == llm.ToolsNone {
				want = []int{4}
			}
			var got []int
			breaks := breaks(t, bodies)
			for n := range breaks {
				got = append(got, n)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("requests that do not extend the previous one: %v, want %v", got, want)
				for _, n := range got {
					t.Logf("request %d: %v", n, breaks[n])
				}
			}
		})
	}
}

// runPrefetch plays the prefetch conversation and returns the request
// bodies.
func runPrefetch(t *testing.T, newModel func(baseURL string) llm.Model, bridge bool) [][]byte {
	t.Helper()
	check, err := emulator.New(emulator.Config{Responder: emulator.Echo{}, ContextWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := &server{t: t, bridge: bridge, check: check, replies: []reply{
		{tool: "notes_create", args: `{"text":"hi"}`}, {text: "created"},
		{tool: toolsearch.Name, args: `{"query":"select:calendar_list"}`}, {tool: "calendar_list", args: `{"text":"today"}`}, {text: "listed"},
		{text: "bye"},
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	var tools []tool.Tool
	for _, name := range shelfTools {
		tools = append(tools, tool.Tool{
			Name:        name,
			Description: "The " + strings.ReplaceAll(name, "_", " ") + " tool.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"Input."}},"required":["text"]}`),
			Exposure:    tool.Deferred,
			Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				return tool.TextResult(name + " ran with " + string(args)), nil
			}),
		})
	}
	shelf, err := toolshelf.New(context.Background(), toolshelf.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	a, err := shelf.Agent(context.Background(), toolshelf.AgentConfig{Model: newModel(hs.URL), SystemPrompt: "You are a test agent.",
		Prefetch: &toolsearch.Prefetch{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, prompt := range []string{"Run notes_create with the text hi.", "Now list my calendar.", "Thanks."} {
		for _, err := range a.Run(context.Background(), prompt) {
			if err != nil {
				t.Fatalf("%q: %v", prompt, err)
			}
		}
	}
	for _, m := range a.Messages() {
		if m.Role == llm.RoleToolResult && m.IsError {
			t.Errorf("tool %s failed: %s", m.ToolName, llm.ContentText(m.Content, " "))
		}
	}
	return srv.bodies
}
