package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// writeSession makes a session with a prompt, a tool call and its result.
func writeSession(t *testing.T, dir, question string) *session.Session {
	t.Helper()
	s, err := session.Create(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tc := llm.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}
	for _, m := range []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("base")}, ToolsAdded: []llm.Tool{{Name: "read", Parameters: json.RawMessage(`{}`)}}},
		llm.UserText(question, 1),
		{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &tc}}, StopReason: llm.StopToolUse, Timestamp: 2},
		{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []llm.Part{llm.Text("hello")}, Timestamp: 3},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("It says hello.")}, StopReason: llm.StopEnd, Timestamp: 4},
	} {
		if _, err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestSessionsListShowFork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := writeSession(t, dir, "what is in a.txt?")
	s.Close()

	code, out, errOut := run(t, "sessions", "list", "--dir", dir)
	if code != 0 || !strings.Contains(out, s.ID()) || !strings.Contains(out, "what is in a.txt?") {
		t.Errorf("list: exit %d, %q %q", code, out, errOut)
	}
	for _, name := range []string{s.ID(), s.ID()[:6], "last", s.Path()} {
		code, out, errOut = run(t, "sessions", "show", "--dir", dir, name)
		if code != 0 {
			t.Fatalf("show %s: exit %d, %s", name, code, errOut)
		}
		for _, want := range []string{"session " + s.ID(), "system: base +read", "user: what is in a.txt?",
			`→ read {"path":"a.txt"}`, "← read: hello", "assistant: It says hello."} {
			if !strings.Contains(out, want) {
				t.Errorf("show %s lacks %q:\n%s", name, want, out)
			}
		}
	}
	code, out, _ = run(t, "sessions", "show", "--dir", dir, "--json", "last")
	var shown struct {
		Context []llm.Message
	}
	if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil || len(shown.Context) != 5 {
		t.Errorf("show --json: exit %d, %v, %d messages", code, err, len(shown.Context))
	}

	code, out, errOut = run(t, "sessions", "fork", "--dir", dir, s.ID())
	if code != 0 {
		t.Fatalf("fork: exit %d, %s", code, errOut)
	}
	forked := strings.TrimSpace(out)
	f, err := session.Open(forked, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Header().ParentSession == "" || len(f.Entries()) != 5 {
		t.Errorf("fork: header %+v, %d entries", f.Header(), len(f.Entries()))
	}
	code, out, _ = run(t, "sessions", "list", "--dir", dir, "--json")
	var rows []struct{ ID, ParentSession string }
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 2 {
		t.Errorf("list --json: exit %d, %v, %s", code, err, out)
	}
}

func TestSessionsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, _ := run(t, "sessions", "list", "--dir", filepath.Join(dir, "none"))
	if code != 0 || !strings.Contains(out, "No sessions in") {
		t.Errorf("list of a missing dir: exit %d, %q", code, out)
	}
	code, _, errOut := run(t, "sessions", "show", "--dir", dir, "last")
	if code != 1 || !strings.Contains(errOut, "no sessions in") {
		t.Errorf("show last without sessions: exit %d, %q", code, errOut)
	}
	a := writeSession(t, dir, "one")
	a.Close()
	code, _, errOut = run(t, "sessions", "show", "--dir", dir, "zzzz")
	if code != 2 || !strings.Contains(errOut, `no session "zzzz"`) {
		t.Errorf("unknown id: exit %d, %q", code, errOut)
	}
	code, _, errOut = run(t, "sessions", "show", "--dir", dir)
	if code != 2 || !strings.Contains(errOut, "show needs a session") {
		t.Errorf("no argument: exit %d, %q", code, errOut)
	}
	// A corrupt file is listed with its problem and does not hide others.
	os.WriteFile(filepath.Join(dir, "broken.jsonl"), []byte("not json\n"), 0o600)
	code, out, _ = run(t, "sessions", "list", "--dir", dir)
	if code != 0 || !strings.Contains(out, "broken.jsonl") || !strings.Contains(out, a.ID()) {
		t.Errorf("list with a corrupt file: exit %d, %q", code, out)
	}
	code, _, errOut = run(t, "sessions", "fork", "--dir", dir, "--at", "nope", a.ID())
	if code != 1 || !strings.Contains(errOut, "nope") {
		t.Errorf("fork at an unknown entry: exit %d, %q", code, errOut)
	}
}
