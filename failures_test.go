package toolshelf_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/adapter"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tool"
)

// The tests of this file each pin a mistake the front door used to let
// pass in silence.

func echoHandler() tool.Handler {
	return tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.TextResult("ok"), nil })
}

// TestProgramToolsNeedAHandlerAndAnExposure: a program's tool without a
// handler would fail only when the model called it, and one without an
// exposure would be declared, where an MCP server's would wait on the
// shelf; the shelf refuses both, naming the tool and the fix.
func TestProgramToolsNeedAHandlerAndAnExposure(t *testing.T) {
	for _, c := range []struct {
		tool tool.Tool
		want string
	}{
		{tool.Tool{Name: "lookup", Description: "Look a word up.", Exposure: tool.Deferred}, `"lookup": no Handler`},
		{tool.Tool{Name: "lookup", Description: "Look a word up.", Handler: echoHandler()}, `"lookup": no Exposure: set tool.Direct`},
	} {
		shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: []tool.Tool{c.tool}})
		if err == nil {
			shelf.Close()
			t.Errorf("%+v: registered", c.tool)
			continue
		}
		if !errors.Is(err, tool.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an invalid tool error with %q", c.tool, err, c.want)
		}
	}
	// Told the exposure, a tool waits on the shelf, where tool_search
	// (the gateway's too, which ranks with the shelf's searcher) finds it.
	deferred := tool.Tool{Name: "lookup", Description: "Look a word up in the dictionary.", Exposure: tool.Deferred, Handler: echoHandler()}
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: []tool.Tool{deferred}})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	out, err := shelf.Searcher().Find("look up a word", 5)
	if err != nil || len(out.Hits) == 0 || out.Hits[0].Name != "lookup" {
		t.Errorf("a deferred tool of the program's is not found: %+v %v", out, err)
	}
}

// TestOneConversationAtATime: the shelf hosts one conversation; a second
// fails while the first is open, and starts once it is closed. A
// conversation that failed to start does not hold the shelf.
func TestOneConversationAtATime(t *testing.T) {
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	if _, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Provider: toolshelf.Provider{Name: "mistral"}}); err == nil {
		t.Fatal("an unknown provider started a conversation")
	}
	if _, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: llmtest.New(), Session: &toolshelf.SessionConfig{Resume: filepath.Join(t.TempDir(), "missing.jsonl")}}); err == nil {
		t.Fatal("a missing session started a conversation")
	}
	first, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: llmtest.New(llmtest.Say("one"))})
	if err != nil {
		t.Fatal(err)
	}
	if second, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: llmtest.New()}); !errors.Is(err, toolshelf.ErrBusy) {
		if second != nil {
			second.Close()
		}
		t.Fatalf("a second conversation while the first is open: %v, want ErrBusy", err)
	}
	run(t, first, "hello")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: llmtest.New(llmtest.Say("two"))})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	defer second.Close()
	run(t, second, "hello")
}

// TestFailedServerIsNoted: a server of Config.Servers that fails to
// connect is noted to the conversation once, naming it and the reason,
// even with no logger.
func TestFailedServerIsNoted(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: []mcpclient.ServerConfig{{Name: "broken", Command: missing}}})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	if err := shelf.MCP().WaitAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	var notes []toolshelf.Note
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: llmtest.New(llmtest.Say("one"), llmtest.Say("two")),
		Notify: func(n toolshelf.Note) { notes = append(notes, n) }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	run(t, a, "hello")
	run(t, a, "again")
	var failed []string
	for _, n := range notes {
		if n.Kind == toolshelf.NoteServerFailed {
			failed = append(failed, n.Text)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0], "broken") || !strings.Contains(failed[0], "no-such-server") {
		t.Errorf("notes of the failed server: %q (all notes: %v)", failed, notes)
	}
}

// TestUsageSumsTheConversation: Agent.Usage sums every request's tokens
// with each part of the prompt named: the total, the uncached part and
// the cache's reads and writes; two-phase selection's requests count too.
func TestUsageSumsTheConversation(t *testing.T) {
	// A system prompt past Claude's minimum cacheable length, so that the
	// emulator's cache serves the later requests.
	system := strings.Repeat("You are a careful assistant who checks the weather before answering. ", 600)
	for _, sel := range []*toolshelf.SelectConfig{nil, {}} {
		shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: []tool.Tool{forecast}})
		if err != nil {
			t.Fatal(err)
		}
		defer shelf.Close()
		a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Provider: toolshelf.Provider{Name: toolshelf.Emulator}, NewModel: adapter.New,
			SystemPrompt: system, Select: sel})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		run(t, a, "what is the weather forecast")
		run(t, a, "and the forecast again")
		var want toolshelf.Usage
		answers := 0
		for _, m := range a.Messages() {
			if m.Role == llm.RoleAssistant && m.Usage != nil {
				answers++
				want.TotalInput += m.Usage.TotalInput()
				want.Uncached += m.Usage.Input
				want.CacheRead += m.Usage.CacheRead
				want.CacheWrite += m.Usage.CacheWrite
				want.Output += m.Usage.Output
			}
		}
		got := a.Usage()
		if got.TotalInput != got.Uncached+got.CacheRead+got.CacheWrite || got.CacheRead == 0 || got.Output == 0 {
			t.Errorf("select %v: usage %+v: the parts do not add up, or the cache served nothing", sel != nil, got)
		}
		if sel == nil {
			want.Requests = answers
			if got != want {
				t.Errorf("usage %+v, want the transcript's %+v", got, want)
			}
		} else if got.Requests <= answers || got.TotalInput <= want.TotalInput {
			t.Errorf("with selection: usage %+v, the transcript's answers %d (%+v): the selection's requests are not counted", got, answers, want)
		}
	}
}
