package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// This file runs a 100-request session through the front door with a
// budget of declared tool tokens (toolshelf.UnloadConfig), the real
// adapters and the prefix-invariant server: 33 prompts each load a tool
// with tool_search and call it, cycling through 11 tools with room for
// about three, so the budget is passed again and again and every tool is
// unloaded and loaded again.

// unloadTools are the tools on the shelf of the unload session.
var unloadTools = []string{"notes_create", "calendar_list", "mail_send", "files_read", "issues_open", "chat_post",
	"weather_get", "maps_route", "tickets_close", "wiki_edit", "builds_run"}

// unloadRun is what a budgeted session did.
type unloadRun struct {
	bodies  [][]byte
	stats   toolshelf.UnloadStats
	budget  int
	msgs    []llm.Message
	expired int // prompts sent after the clock passed the cache lifetime
}

// runUnload plays the session on the front door, with the clock moved
// past the cache lifetime before every seventh prompt.
func runUnload(t *testing.T, newModel func(baseURL string) llm.Model, class llm.ToolSupport) unloadRun {
	t.Helper()
	check, err := emulator.New(emulator.Config{Responder: emulator.Echo{}, ContextWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	bridge := class == llm.ToolsBridge
	srv := &server{t: t, bridge: bridge, check: check}
	const prompts = 33
	for i := range prompts {
		srv.replies = append(srv.replies, load(unloadTools[i%len(unloadTools)]).replies...)
	}
	srv.replies = append(srv.replies, reply{text: "done"})
	hs := httptest.NewServer(srv)
	defer hs.Close()

	var tools []tool.Tool
	for _, name := range unloadTools {
		tools = append(tools, tool.Tool{
			Name:        name,
			Description: "The " + strings.ReplaceAll(name, "_", " ") + " tool: it does what its name says, for the test's one user.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"Input."}},"required":["text"]}`),
			Exposure:    tool.Deferred,
			Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				return tool.TextResult(name + " ran with " + string(args)), nil
			}),
		})
	}
	ctx := context.Background()
	shelf, err := toolshelf.New(ctx, toolshelf.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	counter, err := tokens.Default()
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := shelf.Registry().Get(toolsearch.Name)
	one, _ := shelf.Registry().Get(unloadTools[0])
	// tool_search and about three tools; one search loads one tool.
	budget := counter.Tool(ts.Declaration()) + 3*counter.Tool(one.Declaration()) + 10

	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	a, err := shelf.Agent(ctx, toolshelf.AgentConfig{Model: newModel(hs.URL), SystemPrompt: "You are a test agent.",
		Now:    func() time.Time { return clock },
		Unload: &toolshelf.UnloadConfig{Budget: budget, Class: class},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	run := unloadRun{budget: budget}
	for i := range prompts + 1 {
		if i%7 == 6 {
			clock = clock.Add(toolshelf.DefaultCacheTTL + time.Second)
			run.expired++
		} else {
			clock = clock.Add(10 * time.Second)
		}
		for _, err := range a.Run(ctx, fmt.Sprintf("step %d", i)) {
			if err != nil {
				t.Fatalf("prompt %d: %v", i, err)
			}
		}
	}
	if len(srv.replies) != 0 {
		t.Fatalf("%d scripted replies were not used", len(srv.replies))
	}
	run.msgs = a.Messages()
	for _, m := range run.msgs {
		if m.Role == llm.RoleToolResult && m.IsError {
			t.Errorf("tool %s failed: %s", m.ToolName, llm.ContentText(m.Content, " "))
		}
	}
	run.bodies, run.stats = srv.bodies, a.Unloads()
	return run
}

// removalRequests returns the request numbers (1-based) whose transcript
// holds a removal the previous request's did not: the requests after an
// unload point.
func removalRequests(msgs []llm.Message) map[int]bool {
	out := map[int]bool{}
	request, removed := 0, false
	for _, m := range msgs {
		switch {
		case m.Role == llm.RoleSystem && len(m.ToolsRemoved) > 0:
			removed = true
		case m.Role == llm.RoleAssistant:
			request++
			if removed {
				out[request] = true
			}
			removed = false
		}
	}
	return out
}

// TestUnloadKeepsThePrefix checks the budget on a 100-request session that
// passes it many times: changes and bridge unload at once and never break
// the prefix (preservation 1.000); additions and none unload only at their
// cheap points, and the breaks they cost are counted; after each unload
// point the declared definitions fit the budget, and every unloaded tool
// that is needed again is found and loaded again (every call succeeds).
func TestUnloadKeepsThePrefix(t *testing.T) {
	t.Parallel()
	table := provider.DefaultTable()
	bridgeOf := func(api provider.API, model string) *provider.Capabilities {
		return with(table.Lookup(api, model), func(c *provider.Capabilities) { c.Tools = llm.ToolsBridge })
	}
	cases := []adapterCase{
		{"anthropic changes", anthropicModel(t, "claude-opus-5-5", nil), llm.ToolsChanges},
		{"anthropic bridge", anthropicModel(t, "claude-opus-5-5", bridgeOf(provider.AnthropicMessages, "claude-opus-5-5")), llm.ToolsBridge},
		{"chat bridge", chatModel(t, "qwen3", bridgeOf(provider.OpenAIChat, "qwen3")), llm.ToolsBridge},
		{"responses additions", responsesModel(t, "gpt-5.6-sol", nil), llm.ToolsAdditions},
		{"chat none", chatModel(t, "qwen3", nil), llm.ToolsNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runUnload(t, c.newModel, c.class)
			if len(r.bodies) != 100 {
				t.Fatalf("%d requests, want 100", len(r.bodies))
			}
			// Changes and bridge unload each time the budget is passed;
			// additions and none wait for the cache to lapse (every
			// seventh prompt) unless carrying the tokens pays for the
			// rewrite first.
			if want := map[bool]int{true: 20, false: r.expired}[c.class == llm.ToolsChanges || c.class == llm.ToolsBridge]; len(r.stats.Points) < want {
				t.Fatalf("%d unload points, want at least %d: %+v", len(r.stats.Points), want, r.stats)
			}
			if r.stats.Over+len(r.stats.Points) < 20 {
				t.Errorf("the budget was passed %d times, want many", r.stats.Over+len(r.stats.Points))
			}
			for i, p := range r.stats.Points {
				if p.Declared > r.budget {
					t.Errorf("unload point %d leaves %d tokens declared, over the budget of %d", i, p.Declared, r.budget)
				}
			}
			reasons := map[toolshelf.UnloadReason]int{}
			for _, p := range r.stats.Points {
				reasons[p.Reason]++
			}
			added := map[string]int{}
			for _, m := range r.msgs {
				for _, d := range m.ToolsAdded {
					added[d.Name]++
				}
			}
			if added[unloadTools[0]] < 2 {
				t.Errorf("%s was declared %d times, want it unloaded and loaded again", unloadTools[0], added[unloadTools[0]])
			}
			got := breaks(t, r.bodies)
			removals := removalRequests(r.msgs)
			t.Logf("%s: %d unload points %v, %d tools unloaded (%d tokens), %d prompt tokens rewritten (estimate), %d of 100 requests break the prefix, %d after a removal",
				c.class, len(r.stats.Points), reasons, r.stats.Tools, r.stats.Freed, r.stats.Rewrite, len(got), len(removals))
			switch c.class {
			case llm.ToolsChanges, llm.ToolsBridge:
				if len(got) != 0 {
					t.Errorf("the prefix broke at requests %v, want preservation 1.000", got)
				}
				if reasons[toolshelf.UnloadFree] != len(r.stats.Points) {
					t.Errorf("unload points %v, want all free", reasons)
				}
				if r.stats.Rewrite != 0 {
					t.Errorf("%d tokens rewritten, want none", r.stats.Rewrite)
				}
			case llm.ToolsAdditions:
				// Promote once breaks exactly the requests after a removal,
				// and a removal comes only where the cache lapsed or the
				// carry paid for the rewrite.
				for n := range got {
					if !removals[n] {
						t.Errorf("request %d breaks the prefix without a removal before it: %v", n, got[n])
					}
				}
				if reasons[toolshelf.UnloadExpired]+reasons[toolshelf.UnloadCarry] != len(r.stats.Points) {
					t.Errorf("unload points %v, want only expired and carry", reasons)
				}
				if reasons[toolshelf.UnloadExpired] > r.expired {
					t.Errorf("%d expired unload points, but the cache lapsed %d times", reasons[toolshelf.UnloadExpired], r.expired)
				}
			case llm.ToolsNone:
				// Every update rewrites the head: a removal goes with a load
				// (whose rewrite it joins) or where the cache lapsed.
				alone := 0
				for _, m := range r.msgs {
					if m.Role == llm.RoleSystem && len(m.ToolsRemoved) > 0 && len(m.ToolsAdded) == 0 {
						alone++
					}
				}
				if alone > reasons[toolshelf.UnloadExpired]+reasons[toolshelf.UnloadCarry] {
					t.Errorf("%d updates remove tools without a load, but only %d unload points were at a lapsed cache or paid by the carry",
						alone, reasons[toolshelf.UnloadExpired]+reasons[toolshelf.UnloadCarry])
				}
				if n := len(r.stats.Points) - reasons[toolshelf.UnloadWithLoad] - reasons[toolshelf.UnloadExpired] - reasons[toolshelf.UnloadCarry]; n != 0 {
					t.Errorf("unload points %v: %d at none of none's cheap points", reasons, n)
				}
			}
		})
	}
}
