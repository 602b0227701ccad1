package toolshelf_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
	"github.com/toolshelf/toolshelf/transcript"
)

// catalogTools returns the built-in catalog's tools, deferred, each
// answering "ok".
func catalogTools(t *testing.T) []tool.Tool {
	t.Helper()
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	namer := tool.NewNamer()
	var tools []tool.Tool
	for _, s := range servers {
		for _, tl := range s.AsTools(namer, tool.Deferred) {
			tl.Handler = tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
				return tool.TextResult("ok"), nil
			})
			tools = append(tools, tl)
		}
	}
	return tools
}

// wanting returns a model that wants one tool: it calls it when the
// request declares it, else loads it with tool_search (select:), and once
// the tool has answered it says it is done.
func wanting(name string) *llmtest.Scripted {
	reply := llmtest.Reply{Func: func(req *llm.Request) (llm.Message, error) {
		for _, m := range req.Messages {
			if m.Role == llm.RoleToolResult && m.ToolName == name {
				return llm.Message{Content: []llm.Part{llm.Text("done")}}, nil
			}
		}
		call := llm.ToolCall{ID: "c" + strconv.Itoa(len(req.Messages)), Name: name, Arguments: []byte(`{}`)}
		if !slices.ContainsFunc(transcript.CurrentTools(req.Messages), func(t llm.Tool) bool { return t.Name == name }) {
			call.Name, call.Arguments = toolsearch.Name, []byte(`{"query":"select:`+name+`"}`)
		}
		return llm.Message{Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &call}}}, nil
	}}
	return llmtest.New(reply, reply, reply, reply, reply)
}

// converse runs prompt on a new shelf of the built-in catalog and returns
// the model's requests and the conversation's notes.
func converse(t *testing.T, tools []tool.Tool, want, prompt string, prefetch *toolsearch.Prefetch, sc *toolshelf.SessionConfig) ([]*llm.Request, []toolshelf.Note) {
	t.Helper()
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	model := wanting(want)
	var notes []toolshelf.Note
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, Prefetch: prefetch, Session: sc,
		Notify: func(n toolshelf.Note) { notes = append(notes, n) }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	run(t, a, prompt)
	return model.Requests(), notes
}

func declares(req *llm.Request, name string) bool {
	return slices.Contains(names(transcript.CurrentTools(req.Messages)), name)
}

// TestPrefetchDeclaresWhatThePromptAsksFor: with prefetch, a prompt that
// asks for a tool gets it declared by the first request, in an update
// after the head (the head is what it is without prefetch), and the run
// takes one request fewer than without.
func TestPrefetchDeclaresWhatThePromptAsksFor(t *testing.T) {
	tools := catalogTools(t)
	for _, c := range []struct{ prompt, tool string }{
		{"Maintenance on db-replica-2 is finished; unmute it in Datadog.", "mcp__datadog__unmute_host"},
		{"Please run mcp__github__merge_pull_request on acme/web#12.", "mcp__github__merge_pull_request"},
	} {
		without, _ := converse(t, tools, c.tool, c.prompt, nil, nil)
		with, notes := converse(t, tools, c.tool, c.prompt, &toolsearch.Prefetch{}, nil)
		if declares(without[0], c.tool) {
			t.Fatalf("%s is declared by the first request without prefetch", c.tool)
		}
		if !declares(with[0], c.tool) {
			t.Errorf("%q: the first request declares %v, want %s among them", c.prompt, names(transcript.CurrentTools(with[0].Messages)), c.tool)
		}
		if len(with) != len(without)-1 {
			t.Errorf("%q: %d requests with prefetch, %d without: want one fewer", c.prompt, len(with), len(without))
		}
		msgs := with[0].Messages
		if got, want := names(msgs[0].ToolsAdded), names(without[0].Messages[0].ToolsAdded); !slices.Equal(got, want) {
			t.Errorf("the head declares %v with prefetch, %v without: the prefetch belongs after it", got, want)
		}
		if len(msgs) < 3 || msgs[1].Role != llm.RoleSystem || !slices.Contains(names(msgs[1].ToolsAdded), c.tool) || msgs[2].Role != llm.RoleUser {
			t.Errorf("the first request's messages: want the head, an update adding %s, then the prompt", c.tool)
		}
		if len(notes) != 1 || notes[0].Kind != toolshelf.NotePrefetch || !strings.Contains(notes[0].Text, c.tool) {
			t.Errorf("notes %v, want one prefetch note naming %s", notes, c.tool)
		}
	}
}

// TestPrefetchOfAVaguePromptChangesNothing: a prompt that asks for no tool
// in particular loads nothing, and its transcript is the one without
// prefetch.
func TestPrefetchOfAVaguePromptChangesNothing(t *testing.T) {
	tools := catalogTools(t)
	const prompt = "Can you help me with something today? Thanks a lot."
	without, _ := converse(t, tools, "mcp__datadog__unmute_host", prompt, nil, nil)
	with, notes := converse(t, tools, "mcp__datadog__unmute_host", prompt, &toolsearch.Prefetch{}, nil)
	if got := names(transcript.CurrentTools(with[0].Messages)); !slices.Equal(got, []string{toolsearch.Name}) {
		t.Errorf("the first request declares %v, want tool_search alone", got)
	}
	if len(with) != len(without) || len(with[0].Messages) != len(without[0].Messages) {
		t.Errorf("%d requests of %d messages first with prefetch, %d of %d without", len(with), len(with[0].Messages), len(without), len(without[0].Messages))
	}
	if len(notes) != 0 {
		t.Errorf("notes %v, want none", notes)
	}
}

// TestPrefetchBudget: a budget below the definition tokens of the tool
// the prompt asks for loads nothing.
func TestPrefetchBudget(t *testing.T) {
	tools := catalogTools(t)
	with, _ := converse(t, tools, "mcp__datadog__unmute_host", "Maintenance on db-replica-2 is finished; unmute it in Datadog.",
		&toolsearch.Prefetch{Budget: 10}, nil)
	if got := names(transcript.CurrentTools(with[0].Messages)); !slices.Equal(got, []string{toolsearch.Name}) {
		t.Errorf("with a budget of 10 tokens the first request declares %v, want tool_search alone", got)
	}
}

// TestPrefetchIsInTheTranscript: the prefetched tools are in the session
// file as a load, a resumed conversation declares them from its first
// request with no removal, and its prompts are not prefetched.
func TestPrefetchIsInTheTranscript(t *testing.T) {
	tools := catalogTools(t)
	dir := t.TempDir()
	const tool1, tool2 = "mcp__datadog__unmute_host", "mcp__github__merge_pull_request"
	first, _ := converse(t, tools, tool1, "Maintenance on db-replica-2 is finished; unmute it in Datadog.", &toolsearch.Prefetch{}, &toolshelf.SessionConfig{Dir: dir})
	if !declares(first[0], tool1) {
		t.Fatalf("the first request does not declare %s", tool1)
	}
	path, err := session.Latest(dir)
	if err != nil {
		t.Fatal(err)
	}
	resumed, notes := converse(t, tools, tool2, "Now run mcp__github__merge_pull_request on acme/web#12.", &toolsearch.Prefetch{}, &toolshelf.SessionConfig{Dir: dir, Resume: path})
	req := resumed[0]
	if !declares(req, tool1) {
		t.Errorf("the resumed conversation's first request does not declare %s, which the prefetch loaded", tool1)
	}
	if declares(req, tool2) {
		t.Errorf("the resumed conversation prefetched %s: only a new conversation's first prompt is prefetched", tool2)
	}
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem && len(m.ToolsRemoved) > 0 {
			t.Errorf("the resumed conversation removed %v", m.ToolsRemoved)
		}
	}
	if len(notes) != 0 {
		t.Errorf("notes %v, want none", notes)
	}
}

// TestPrefetchAndSelectAreExclusive: both choose the first request's
// tools, so a conversation takes one.
func TestPrefetchAndSelectAreExclusive(t *testing.T) {
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	_, err = shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: llmtest.New(), Prefetch: &toolsearch.Prefetch{}, Select: &toolshelf.SelectConfig{}})
	if err == nil || !strings.Contains(err.Error(), "Prefetch and Select") {
		t.Errorf("Prefetch with Select: %v", err)
	}
}
