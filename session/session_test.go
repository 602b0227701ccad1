package session_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/transcript"
)

// clock returns options whose Now starts at start and advances by one
// second (and one millisecond) per call.
func clock(start time.Time) *session.Options {
	var mu sync.Mutex
	t := start
	return &session.Options{Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second + time.Millisecond)
		return t
	}}
}

var epoch = time.Date(2026, 1, 2, 15, 4, 5, 123_000_000, time.UTC)

// newSession creates a session in a temporary directory.
func newSession(t *testing.T) *session.Session {
	t.Helper()
	s, err := session.Create(t.TempDir(), clock(epoch))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reopen closes s and opens its file again.
func reopen(t *testing.T, s *session.Session) *session.Session {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := session.Open(s.Path(), clock(epoch.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func mustAppend(t *testing.T, s *session.Session, m llm.Message) session.Entry {
	t.Helper()
	e, err := s.Append(m)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func ids(es []session.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func texts(ms []llm.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Role)+":"+llm.ContentText(m.Content, ""))
	}
	return out
}

// msgOpts compare messages as they read back: empty and nil slices alike.
var msgOpts = cmp.Options{cmpopts.EquateEmpty()}

func tool(name, params string) llm.Tool {
	return llm.Tool{Name: name, Description: "The " + name + " tool.", Parameters: json.RawMessage(params)}
}

// paramsZetaFirst is a schema whose key order is not sorted.
const paramsZetaFirst = `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number","description":"é \u00e9"}},"required":["zeta"]}`

// paramsLoose is a schema with white space and characters json.Marshal
// escapes: it survives as an equal declaration, not byte for byte.
const paramsLoose = `{ "type": "object", "properties": {"q": {"type": "string", "description": "<a & b>"}} }`

// everyKind returns messages of every role and part type.
func everyKind() []llm.Message {
	image := make([]byte, 256)
	for i := range image {
		image[i] = byte(i)
	}
	return []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("You are a helper.")},
			Sections:   llm.Sections{llm.Set("rules", "Be brief."), llm.Set("tools", "Use tools.")},
			ToolsAdded: []llm.Tool{tool("read", paramsZetaFirst), tool("old", `{}`), tool("loose", paramsLoose)}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.Text("Look at this:"),
			{Type: llm.PartImage, MIMEType: "image/png", Data: image}}, Timestamp: 1000},
		{Role: llm.RoleAssistant, Content: []llm.Part{
			{Type: llm.PartThinking, Text: "Let me think.", Signature: "c2lnbmF0dXJl"},
			{Type: llm.PartThinking, Redacted: true, Signature: "opaque"},
			llm.Text("Reading."),
			{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"zeta":"x","alpha":[1,null,true]}`)}},
			{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "call_2", Name: "read", Arguments: json.RawMessage(`{"zeta": "unterminated`)}},
		}, StopReason: llm.StopToolUse, Usage: &llm.Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40},
			Model: "model-1", Timestamp: 2000},
		{Role: llm.RoleToolResult, ToolCallID: "call_1", ToolName: "read", IsError: true,
			Content:   []llm.Part{llm.Text("no such file"), {Type: llm.PartImage, MIMEType: "image/jpeg", Data: []byte{0xff, 0xd8, 0}}},
			Details:   json.RawMessage(`{"exitCode":1,"paths":["a","b"]}`),
			Timestamp: 3000},
		{Role: llm.RoleSystem,
			Sections:     llm.Sections{llm.Set("rules", "Be thorough."), llm.Delete("tools"), llm.Set("cwd", "/tmp"), llm.Delete("never-set")},
			ToolsRemoved: []llm.ToolRef{{Name: "old"}},
			ToolsAdded:   []llm.Tool{tool("write", `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`)},
			Timestamp:    4000},
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("Later text.")}, Timestamp: 5000},
		{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: "overloaded", Timestamp: 6000},
		llm.UserText("héllo \u2028 wörld \x00", 7000),
	}
}

// ignoreLoose compares tool parameters as declarations do (canonical
// bytes), for paramsLoose; exact bytes are checked separately.
var ignoreLoose = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".Parameters"
}, cmp.Comparer(func(a, b json.RawMessage) bool {
	return llm.Tool{Parameters: a}.Equal(llm.Tool{Parameters: b})
}))

func TestRoundTripEveryKind(t *testing.T) {
	s := newSession(t)
	want := everyKind()
	for _, m := range want {
		mustAppend(t, s, m)
	}
	check := func(t *testing.T, s *session.Session) {
		t.Helper()
		var got []llm.Message
		for _, e := range s.Entries() {
			if e.Type != session.TypeMessage {
				t.Fatalf("entry %s has type %q", e.ID, e.Type)
			}
			got = append(got, *e.Message)
		}
		if diff := cmp.Diff(want, got, msgOpts, ignoreLoose); diff != "" {
			t.Errorf("entries (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, s.Messages(), msgOpts, ignoreLoose); diff != "" {
			t.Errorf("Messages() (-want +got):\n%s", diff)
		}
		params := got[0].ToolsAdded[0].Parameters
		if !bytes.Equal(params, []byte(paramsZetaFirst)) {
			t.Errorf("parameters bytes changed:\n got %s\nwant %s", params, paramsZetaFirst)
		}
		if loose := got[0].ToolsAdded[2]; !loose.Equal(want[0].ToolsAdded[2]) {
			t.Errorf("declaration changed: got %s, want %s", loose.Canonical(), want[0].ToolsAdded[2].Canonical())
		}
		var names []string
		for _, sec := range got[4].Sections {
			names = append(names, sec.Name)
		}
		if diff := cmp.Diff([]string{"rules", "tools", "cwd", "never-set"}, names); diff != "" {
			t.Errorf("section order (-want +got):\n%s", diff)
		}
		if got[4].Sections[1].Text != nil || got[4].Sections[3].Text != nil {
			t.Errorf("section deletions lost: %+v", got[4].Sections)
		}
		state := transcript.Replay(got)
		if diff := cmp.Diff([]string{"read", "loose", "write"}, toolNames(state.Tools())); diff != "" {
			t.Errorf("replayed tools (-want +got):\n%s", diff)
		}
	}
	t.Run("in memory", func(t *testing.T) { check(t, s) })
	t.Run("reopened", func(t *testing.T) { check(t, reopen(t, s)) })
}

func toolNames(ts []llm.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	opts := clock(epoch)
	opts.Cwd = "/home/ada/project"
	s, err := session.Create(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Header()
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(h.ID) || h.ID != s.ID() {
		t.Errorf("session id %q (ID() %q), want 16 hex digits", h.ID, s.ID())
	}
	wantName := "20260102T150406Z_" + h.ID + ".jsonl"
	if got := filepath.Base(s.Path()); got != wantName || filepath.Dir(s.Path()) != dir {
		t.Errorf("path %s, want %s in %s", s.Path(), wantName, dir)
	}
	if diff := cmp.Diff(session.Header{Version: 1, ID: h.ID, Timestamp: epoch.Add(time.Second + time.Millisecond), Cwd: "/home/ada/project"}, h); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("modes: file %v, dir %v; want 0600, 0700", fi.Mode().Perm(), di.Mode().Perm())
	}
	var header map[string]any
	if err := json.Unmarshal(readFile(t, s.Path()), &header); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "session", "version": 1.0, "id": h.ID, "timestamp": "2026-01-02T15:04:06.124Z", "cwd": "/home/ada/project"}
	if diff := cmp.Diff(want, header); diff != "" {
		t.Errorf("header line (-want +got):\n%s", diff)
	}
	if s.Leaf() != "" || len(s.Entries()) != 0 || len(s.Messages()) != 0 || s.Recovered() != 0 {
		t.Errorf("new session not empty: leaf %q, %d entries", s.Leaf(), len(s.Entries()))
	}
}

// TestMCPFileInHeader: the servers file a session is created with is in
// its header, read back on open and listed; a fork keeps it unless given
// another.
func TestMCPFileInHeader(t *testing.T) {
	dir := t.TempDir()
	opts := clock(epoch)
	opts.MCPFile = "/home/ada/project/.toolshelf/mcp.json"
	s, err := session.Create(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, llm.UserText("hi", 1))
	var header map[string]any
	if err := json.Unmarshal(bytes.SplitN(readFile(t, s.Path()), []byte("\n"), 2)[0], &header); err != nil {
		t.Fatal(err)
	}
	if header["mcpFile"] != opts.MCPFile {
		t.Errorf("header line %v, want mcpFile %s", header, opts.MCPFile)
	}
	if got := reopen(t, s).Header().MCPFile; got != opts.MCPFile {
		t.Errorf("reopened: MCPFile %q", got)
	}
	infos, err := session.List(dir)
	if err != nil || len(infos) != 1 || infos[0].MCPFile != opts.MCPFile {
		t.Errorf("List: %+v, %v", infos, err)
	}
	kept, err := session.Fork(s.Path(), "", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	other, err := session.Fork(s.Path(), "", t.TempDir(), &session.Options{MCPFile: "/elsewhere/mcp.json"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if kept.Header().MCPFile != opts.MCPFile || other.Header().MCPFile != "/elsewhere/mcp.json" {
		t.Errorf("forks: %q and %q", kept.Header().MCPFile, other.Header().MCPFile)
	}
}

func TestEntryLines(t *testing.T) {
	s := newSession(t)
	e1 := mustAppend(t, s, llm.UserText("hi", 1))
	e2 := mustAppend(t, s, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("hello")}, StopReason: llm.StopEnd, Timestamp: 2})
	lines := strings.Split(strings.TrimSuffix(string(readFile(t, s.Path())), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var got []map[string]any
	for _, l := range lines[1:] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "message")
		got = append(got, m)
	}
	want := []map[string]any{
		{"type": "message", "id": e1.ID, "parentId": nil, "timestamp": "2026-01-02T15:04:07.125Z"},
		{"type": "message", "id": e2.ID, "parentId": e1.ID, "timestamp": "2026-01-02T15:04:08.126Z"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entry lines (-want +got):\n%s", diff)
	}
	for _, e := range []session.Entry{e1, e2} {
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(e.ID) {
			t.Errorf("entry id %q, want 8 hex digits", e.ID)
		}
	}
	if string(e2.Raw) != lines[2] {
		t.Errorf("Raw = %s, want the line %s", e2.Raw, lines[2])
	}
}

func TestAppendInvalid(t *testing.T) {
	s := newSession(t)
	mustAppend(t, s, llm.UserText("hi", 1))
	before := readFile(t, s.Path())
	for name, m := range map[string]llm.Message{
		"unknown role":        {Role: "narrator"},
		"tool call from user": {Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "1", Name: "x"}}}},
		"result without call": {Role: llm.RoleToolResult, Content: []llm.Part{llm.Text("x")}},
		"call without name":   {Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "1"}}}},
	} {
		if _, err := s.Append(m); err == nil {
			t.Errorf("%s: Append succeeded", name)
		}
	}
	if !bytes.Equal(before, readFile(t, s.Path())) || len(s.Entries()) != 1 {
		t.Errorf("a rejected message changed the session")
	}
}

func TestClose(t *testing.T) {
	s := newSession(t)
	e := mustAppend(t, s, llm.UserText("hi", 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Append(llm.UserText("more", 2)); !errors.Is(err, session.ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := s.AppendCompaction("x", ""); !errors.Is(err, session.ErrClosed) {
		t.Errorf("AppendCompaction after Close: %v, want ErrClosed", err)
	}
	if diff := cmp.Diff([]string{e.ID}, ids(s.Entries())); diff != "" {
		t.Errorf("entries after Close (-want +got):\n%s", diff)
	}
}

func TestSyncEveryEntry(t *testing.T) {
	opts := clock(epoch)
	opts.Sync = session.SyncEveryEntry
	s, err := session.Create(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	e := mustAppend(t, s, llm.UserText("durable", 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := session.Open(s.Path(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Leaf() != e.ID {
		t.Errorf("leaf %q, want %q", r.Leaf(), e.ID)
	}
	mustAppend(t, r, llm.UserText("again", 2))
}

func TestTree(t *testing.T) {
	s := newSession(t)
	u1 := mustAppend(t, s, llm.UserText("u1", 1))
	a1 := mustAppend(t, s, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("a1")}, Timestamp: 2})
	u2 := mustAppend(t, s, llm.UserText("u2", 3))
	if err := s.SetLeaf(a1.ID); err != nil {
		t.Fatal(err)
	}
	if s.Leaf() != a1.ID {
		t.Fatalf("leaf %q after SetLeaf(%q)", s.Leaf(), a1.ID)
	}
	u3 := mustAppend(t, s, llm.UserText("u3", 4))
	if u3.ParentID != a1.ID {
		t.Errorf("new entry's parent %q, want %q", u3.ParentID, a1.ID)
	}
	if diff := cmp.Diff([]string{u1.ID, a1.ID, u3.ID}, ids(s.Branch())); diff != "" {
		t.Errorf("branch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"user:u1", "assistant:a1", "user:u3"}, texts(s.Messages())); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{u1.ID, a1.ID, u2.ID, u3.ID}, ids(s.Entries())); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}

	// Back to the old branch, and to before the first entry.
	if err := s.SetLeaf(u2.ID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"user:u1", "assistant:a1", "user:u2"}, texts(s.Messages())); diff != "" {
		t.Errorf("messages on the old branch (-want +got):\n%s", diff)
	}
	if err := s.SetLeaf("nothere"); !errors.Is(err, session.ErrUnknownEntry) {
		t.Errorf("SetLeaf(unknown): %v, want ErrUnknownEntry", err)
	}
	if err := s.SetLeaf(""); err != nil {
		t.Fatal(err)
	}
	if len(s.Messages()) != 0 || len(s.Branch()) != 0 {
		t.Errorf("empty position has messages %v", texts(s.Messages()))
	}
	if err := s.SetLeaf(u2.ID); err != nil {
		t.Fatal(err)
	}

	// The leaf is not persisted: a reopen puts it on the last entry.
	r := reopen(t, s)
	if r.Leaf() != u3.ID {
		t.Errorf("reopened leaf %q, want the last entry %q", r.Leaf(), u3.ID)
	}
	if diff := cmp.Diff(s.Entries(), r.Entries()); diff != "" {
		t.Errorf("reopened entries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"user:u1", "assistant:a1", "user:u3"}, texts(r.Messages())); diff != "" {
		t.Errorf("reopened messages (-want +got):\n%s", diff)
	}
}

func TestSecondRoot(t *testing.T) {
	s := newSession(t)
	mustAppend(t, s, llm.UserText("first", 1))
	if err := s.SetLeaf(""); err != nil {
		t.Fatal(err)
	}
	root := mustAppend(t, s, llm.UserText("second", 2))
	if root.ParentID != "" {
		t.Errorf("parent %q, want a root", root.ParentID)
	}
	r := reopen(t, s)
	if diff := cmp.Diff([]string{"user:second"}, texts(r.Messages())); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestCompaction(t *testing.T) {
	s := newSession(t)
	head := llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("Prompt.")},
		Sections:   llm.Sections{llm.Set("rules", "r1")},
		ToolsAdded: []llm.Tool{tool("a", paramsZetaFirst), tool("b", `{}`)}}
	call := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall,
		ToolCall: &llm.ToolCall{ID: "c1", Name: "a", Arguments: json.RawMessage(`{}`)}}}, StopReason: llm.StopToolUse, Timestamp: 3}
	result := llm.Message{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "a", Content: []llm.Part{llm.Text("ok")}, Timestamp: 4}
	load := llm.Message{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{tool("c", `{"type":"object"}`)}, ToolsRemoved: []llm.ToolRef{{Name: "b"}}, Timestamp: 5}
	rules := llm.Message{Role: llm.RoleSystem, Sections: llm.Sections{llm.Set("rules", "r2"), llm.Set("cwd", "/x")}, Timestamp: 7}

	mustAppend(t, s, head)
	mustAppend(t, s, llm.UserText("u1", 2))
	mustAppend(t, s, call)
	mustAppend(t, s, result)
	mustAppend(t, s, load)
	u2 := mustAppend(t, s, llm.UserText("u2", 6))
	mustAppend(t, s, rules) // in the kept range: replaced by the checkpoint
	a2 := mustAppend(t, s, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("a2")}, Timestamp: 8})

	before := s.Messages()
	beforeState := transcript.Replay(before)
	checkpoint, _ := beforeState.SystemMessage()

	if _, err := s.AppendCompaction("x", "nothere"); !errors.Is(err, session.ErrUnknownEntry) {
		t.Errorf("compaction keeping an unknown entry: %v, want ErrUnknownEntry", err)
	}
	c, err := s.AppendCompaction("They talked.", u2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Type != session.TypeCompaction || c.Summary != "They talked." || c.FirstKeptID != u2.ID || c.ParentID != a2.ID {
		t.Errorf("compaction entry %+v", c)
	}
	if diff := cmp.Diff(&checkpoint, c.SystemMessage, msgOpts); diff != "" {
		t.Errorf("checkpoint (-want +got):\n%s", diff)
	}
	summary := llm.UserText(session.SummaryPrefix+"They talked.", c.Timestamp.UnixMilli())
	want := []llm.Message{checkpoint, summary, llm.UserText("u2", 6), {Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("a2")}, Timestamp: 8}}
	if diff := cmp.Diff(want, s.Messages(), msgOpts); diff != "" {
		t.Errorf("messages after compaction (-want +got):\n%s", diff)
	}
	after := transcript.Replay(s.Messages())
	if diff := cmp.Diff(beforeState.Tools(), after.Tools(), msgOpts); diff != "" {
		t.Errorf("tools after compaction (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(beforeState.SystemPrompt(), after.SystemPrompt()); diff != "" {
		t.Errorf("prompt after compaction (-want +got):\n%s", diff)
	}

	// Later entries follow; system messages after the compaction count.
	u3 := llm.UserText("u3", 9)
	loadD := llm.Message{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{tool("d", `{}`)}, Timestamp: 10}
	mustAppend(t, s, u3)
	mustAppend(t, s, loadD)
	want = append(want, u3, loadD)
	if diff := cmp.Diff(want, s.Messages(), msgOpts); diff != "" {
		t.Errorf("messages after compaction and more (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "c", "d"}, toolNames(transcript.Replay(s.Messages()).Tools())); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	r := reopen(t, s)
	if diff := cmp.Diff(want, r.Messages(), msgOpts); diff != "" {
		t.Errorf("reopened messages (-want +got):\n%s", diff)
	}

	// The latest compaction wins; keeping nothing leaves the checkpoint and
	// the summary.
	c2, err := r.AppendCompaction("Everything.", "")
	if err != nil {
		t.Fatal(err)
	}
	checkpoint2, _ := transcript.Replay(want).SystemMessage()
	want2 := []llm.Message{checkpoint2, llm.UserText(session.SummaryPrefix+"Everything.", c2.Timestamp.UnixMilli())}
	if diff := cmp.Diff(want2, r.Messages(), msgOpts); diff != "" {
		t.Errorf("messages after a second compaction (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "c", "d"}, toolNames(transcript.Replay(r.Messages()).Tools())); diff != "" {
		t.Errorf("tools after a second compaction (-want +got):\n%s", diff)
	}

	// Back before the compactions, the full branch is the context again.
	if err := r.SetLeaf(a2.ID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, r.Messages(), msgOpts); diff != "" {
		t.Errorf("messages before the compaction (-want +got):\n%s", diff)
	}
	// An entry off the current branch cannot be kept.
	if err := r.SetLeaf(u2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AppendCompaction("x", a2.ID); err == nil {
		t.Errorf("compaction keeping an entry off the branch succeeded")
	}
}

func TestCompactionWithoutSystemMessages(t *testing.T) {
	s := newSession(t)
	u1 := mustAppend(t, s, llm.UserText("u1", 1))
	c, err := s.AppendCompaction("sum", u1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.SystemMessage != nil {
		t.Errorf("checkpoint %+v without system messages", c.SystemMessage)
	}
	want := []string{"user:" + session.SummaryPrefix + "sum", "user:u1"}
	if diff := cmp.Diff(want, texts(reopen(t, s).Messages())); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestFork(t *testing.T) {
	s := newSession(t)
	u1 := mustAppend(t, s, llm.UserText("u1", 1))
	a1 := mustAppend(t, s, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("a1")}, Timestamp: 2})
	mustAppend(t, s, llm.UserText("u2", 3))
	if err := s.SetLeaf(a1.ID); err != nil {
		t.Fatal(err)
	}
	u3 := mustAppend(t, s, llm.UserText("u3", 4))
	original := readFile(t, s.Path())
	all := s.Entries()

	dir := t.TempDir()
	opts := clock(epoch.Add(24 * time.Hour))
	f, err := session.Fork(s.Path(), a1.ID, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := f.Header()
	if h.ParentSession != s.Path() || h.ParentEntry != a1.ID || h.ID == s.ID() || filepath.Dir(f.Path()) != dir {
		t.Errorf("fork header %+v at %s", h, f.Path())
	}
	if diff := cmp.Diff(all[:2], f.Entries()); diff != "" {
		t.Errorf("forked entries (-want +got):\n%s", diff)
	}
	if f.Leaf() != a1.ID {
		t.Errorf("fork leaf %q, want %q", f.Leaf(), a1.ID)
	}
	e := mustAppend(t, f, llm.UserText("in the fork", 5))
	if e.ParentID != a1.ID {
		t.Errorf("fork append parent %q, want %q", e.ParentID, a1.ID)
	}
	if !bytes.Equal(original, readFile(t, s.Path())) {
		t.Errorf("the fork changed the original file")
	}
	r := reopen(t, f)
	if diff := cmp.Diff([]string{u1.ID, a1.ID, e.ID}, ids(r.Entries())); diff != "" {
		t.Errorf("reopened fork (-want +got):\n%s", diff)
	}
	if r.Header().ParentSession != s.Path() {
		t.Errorf("reopened fork header %+v", r.Header())
	}

	// At the source's last entry by default.
	g, err := session.Fork(s.Path(), "", dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if diff := cmp.Diff([]string{u1.ID, a1.ID, u3.ID}, ids(g.Entries())); diff != "" {
		t.Errorf("fork at the last entry (-want +got):\n%s", diff)
	}
	if _, err := session.Fork(s.Path(), "nothere", dir, opts); !errors.Is(err, session.ErrUnknownEntry) {
		t.Errorf("fork at an unknown entry: %v, want ErrUnknownEntry", err)
	}
}

func TestForkRelativePath(t *testing.T) {
	s := newSession(t)
	mustAppend(t, s, llm.UserText("u1", 1))
	t.Chdir(filepath.Dir(s.Path()))
	f, err := session.Fork(filepath.Base(s.Path()), "", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.Header().ParentSession; got != s.Path() {
		t.Errorf("parentSession %q, want the absolute %q", got, s.Path())
	}
}

func TestConcurrentAppend(t *testing.T) {
	s := newSession(t)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.Append(llm.UserText(strings.Repeat("x", w*i), int64(i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range each / 10 {
				s.Messages()
				s.Entries()
				s.Branch()
				s.Leaf()
			}
		})
	}
	wg.Wait()
	entries := s.Entries()
	if len(entries) != writers*each {
		t.Fatalf("%d entries, want %d", len(entries), writers*each)
	}
	for i, e := range entries {
		if want := ""; i > 0 {
			want = entries[i-1].ID
			if e.ParentID != want {
				t.Fatalf("entry %d has parent %q, want the previous entry %q", i, e.ParentID, want)
			}
		}
	}
	lines := bytes.Split(bytes.TrimSuffix(readFile(t, s.Path()), []byte("\n")), []byte("\n"))
	if len(lines) != writers*each+1 {
		t.Fatalf("%d lines, want %d", len(lines), writers*each+1)
	}
	for i, l := range lines {
		if !json.Valid(l) {
			t.Fatalf("line %d is not JSON: %q", i+1, l)
		}
	}
	r := reopen(t, s)
	if diff := cmp.Diff(entries, r.Entries()); diff != "" {
		t.Errorf("reopened (-want +got):\n%s", diff)
	}
}

// TestAppendData: an application's entry is written with its data, kept
// on reopening, on the branch, and skipped by Messages.
func TestAppendData(t *testing.T) {
	s, err := session.Create(t.TempDir(), clock(epoch))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(llm.UserText("hi", 1)); err != nil {
		t.Fatal(err)
	}
	e, err := s.AppendData("selection", map[string]any{"names": []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Type != "selection" || string(e.Data) != `{"names":["a","b"]}` || e.ParentID == "" {
		t.Errorf("entry %+v", e)
	}
	if _, err := s.AppendData(session.TypeMessage, 1); err == nil {
		t.Errorf("AppendData accepted the message type")
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := session.Open(path, &session.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	branch := r.Branch()
	last := branch[len(branch)-1]
	if last.Type != "selection" || string(last.Data) != `{"names":["a","b"]}` || last.ID != e.ID {
		t.Errorf("reopened entry %+v", last)
	}
	if got := r.Messages(); len(got) != 1 || got[0].Role != llm.RoleUser {
		t.Errorf("messages %+v", got)
	}
}
