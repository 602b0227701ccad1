package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/provider/anthropic"
	"github.com/toolshelf/toolshelf/provider/openai"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/transcript"
)

// The scripted conversation of the property test: a first prompt whose
// answer calls a, then b and c in parallel, then the loader (which makes d
// available: a system update declares it), then d, then says done; a
// second prompt calls a and says ok.
var interruptPrompts = []string{"first task", "second task"}

func interruptScript() *llmtest.Scripted {
	return llmtest.New(
		llmtest.Call(call("c1", "a", `{"x":"1"}`)),
		llmtest.Call(call("c2", "b", `{"x":"2"}`), call("c3", "c", `{"x":"3"}`)),
		llmtest.Call(call("c4", "loader", `{}`)),
		llmtest.Call(call("c5", "d", `{"x":"5"}`)),
		llmtest.Say("done"),
		llmtest.Call(call("c6", "a", `{"x":"6"}`)),
		llmtest.Say("ok"),
	)
}

// interruptShelf returns the conversation's tools: a, b, c and the loader
// active, d deferred; names are the names restored from a transcript.
func interruptShelf(t *testing.T, restore []string) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	for _, n := range []string{"a", "b", "c"} {
		if err := reg.Register(echo(n)); err != nil {
			t.Fatal(err)
		}
	}
	d := echo("d")
	d.Exposure = tool.Deferred
	loader := tool.Tool{Name: "loader", Description: "Load d.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			reg.Activate("d")
			return tool.TextResult("loaded d"), nil
		})}
	if err := reg.Register(d, loader); err != nil {
		t.Fatal(err)
	}
	if restore != nil {
		reg.Restore(restore...)
	}
	return reg
}

// TestKillAtEveryEntryBoundary is the property behind "a stop during a tool
// call never makes a session unresumable": a scripted multi-tool
// conversation is recorded to a session file; for every entry boundary the
// file is cut there (what a kill between two writes leaves) and, in a
// second variant, also given half of the next entry (a kill during a
// write). Each cut session is resumed with a new prompt through each real
// adapter against the emulator, which refuses, as the APIs do, a request
// with a tool call that has no result. Every resume must succeed, record
// an interrupted result for each call the cut left open, and leave a
// session in which every call has exactly one result.
func TestKillAtEveryEntryBoundary(t *testing.T) {
	t.Parallel()
	// Record the conversation.
	dir := t.TempDir()
	s, err := session.Create(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, interruptScript(), interruptShelf(t, nil), agent.Config{SystemPrompt: "You help.", Recorder: record(s)})
	for _, p := range interruptPrompts {
		if _, err := runAll(t, a, llm.UserText(p, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty string after the last newline
	header, entries := lines[0], lines[1:]
	if len(entries) < 15 {
		t.Fatalf("the conversation has only %d entries", len(entries))
	}

	var mu sync.Mutex
	var refused []string
	srv, err := emulator.New(emulator.Config{Responder: emulator.Echo{}, Observe: func(r emulator.Record) {
		if r.Status != 200 {
			mu.Lock()
			refused = append(refused, fmt.Sprintf("%s %d: %s", r.API, r.Status, r.Error))
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	adapters := emulatorAdapters(t, hs.URL)

	resumes, interruptedTotal := 0, 0
	for k := 0; k <= len(entries); k++ {
		for _, torn := range []bool{false, true} {
			if torn && k == len(entries) {
				continue
			}
			cut := append([]byte(nil), header...)
			for _, e := range entries[:k] {
				cut = append(cut, e...)
			}
			if torn {
				cut = append(cut, entries[k][:len(entries[k])/2]...)
			}
			for name, newModel := range adapters {
				where := fmt.Sprintf("cut after %d entries (torn %v), %s", k, torn, name)
				path := filepath.Join(t.TempDir(), "s.jsonl")
				if err := os.WriteFile(path, cut, 0o600); err != nil {
					t.Fatal(err)
				}
				n := resumeCut(t, where, path, newModel())
				resumes++
				interruptedTotal += n
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) > 0 {
		t.Errorf("the emulator refused %d requests, the first: %s", len(refused), refused[0])
	}
	if interruptedTotal == 0 {
		t.Error("no cut left an open call: the conversation does not exercise the property")
	}
	t.Logf("%d resumes of %d cuts; %d calls answered as interrupted", resumes, 2*len(entries)+1, interruptedTotal)
}

// emulatorAdapters returns a constructor per real adapter (Anthropic
// changes, Responses additions, Chat none) for an emulator at url.
func emulatorAdapters(t *testing.T, url string) map[string]func() llm.Model {
	return map[string]func() llm.Model{
		"anthropic": func() llm.Model {
			m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: url, Model: "claude-opus-5-5", MaxRetries: noRetries()})
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		"responses": func() llm.Model {
			m, err := openai.NewResponses(openai.Config{APIKey: "test", BaseURL: url + "/v1", Model: "gpt-5.6-sol", MaxRetries: noRetries()})
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		"chat": func() llm.Model {
			m, err := openai.NewChat(openai.Config{APIKey: "test", BaseURL: url + "/v1", Model: "llama-3.3-70b",
				Capabilities: provider.DefaultTable().Lookup(provider.OpenAIChat, "llama-3.3-70b"), MaxRetries: noRetries()})
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
	}
}

// TestResumeOfASessionWithAHole: sessions resumed before runs answered
// open calls hold a call without a result in the middle, followed by the
// prompt of the failed resume and its error answer. The adapters give
// such a call an interrupted result when they render it, so the session
// works again through every API.
func TestResumeOfASessionWithAHole(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(mustEmulator(t))
	defer hs.Close()
	holed := []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("You help.")}, ToolsAdded: []llm.Tool{echo("a").Declaration()}},
		llm.UserText("first", 1),
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Part{
			{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "c1", Name: "a", Arguments: json.RawMessage(`{}`)}}}},
		llm.UserText("again", 2),
		{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "HTTP 400 Bad Request"},
	}
	for name, newModel := range emulatorAdapters(t, hs.URL) {
		reg := tool.NewRegistry()
		if err := reg.Register(echo("a")); err != nil {
			t.Fatal(err)
		}
		a := newAgent(t, newModel(), reg, agent.Config{Messages: holed})
		if _, err := runAll(t, a, llm.UserText("third", 3)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// mustEmulator returns an emulator answering with Echo.
func mustEmulator(t *testing.T) *emulator.Server {
	t.Helper()
	srv, err := emulator.New(emulator.Config{Responder: emulator.Echo{}})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// resumeCut opens a cut session file, resumes it with a prompt through
// model and checks the result; it returns how many calls were answered as
// interrupted.
func resumeCut(t *testing.T, where, path string, model llm.Model) int {
	t.Helper()
	s, err := session.Open(path, nil)
	if err != nil {
		t.Fatalf("%s: open: %v", where, err)
	}
	msgs := s.Messages()
	open := transcript.OpenCalls(msgs)
	var names []string
	for _, d := range transcript.CurrentTools(msgs) {
		names = append(names, d.Name)
	}
	reg := interruptShelf(t, names)
	if len(msgs) == 0 {
		reg = interruptShelf(t, nil)
	}
	a := newAgent(t, model, reg, agent.Config{SystemPrompt: "You help.", Messages: msgs, Recorder: record(s)})
	if _, err := runAll(t, a, llm.UserText("resume", 9)); err != nil {
		t.Fatalf("%s: the resumed run failed: %v", where, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := session.Open(path, &session.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("%s: reopen: %v", where, err)
	}
	after := r.Messages()
	results := map[string]int{}
	interrupted := 0
	for _, m := range after {
		if m.Role == llm.RoleToolResult {
			results[m.ToolCallID]++
			if strings.HasPrefix(llm.ContentText(m.Content, ""), "Tool call interrupted") {
				interrupted++
			}
		}
	}
	for _, m := range after {
		for _, c := range m.ToolCalls() {
			if results[c.ID] != 1 {
				t.Errorf("%s: call %s has %d results", where, c.ID, results[c.ID])
			}
		}
	}
	if interrupted != len(open) {
		t.Errorf("%s: %d interrupted results for %d open calls", where, interrupted, len(open))
	}
	if last := after[len(after)-1]; last.Role != llm.RoleAssistant || last.StopReason != llm.StopEnd {
		t.Errorf("%s: the resumed run ended with %s %s", where, last.Role, last.StopReason)
	}
	return interrupted
}
