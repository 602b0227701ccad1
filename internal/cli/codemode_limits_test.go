//go:build unix

package cli

import (
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
)

// TestCodemodeLimitsInASession: a script stopped by a limit is kept in
// the session as a failed result with its partial output and no stored
// values; the session resumes, and a later script loads what a script
// that succeeded stored, across the resume.
func TestCodemodeLimitsInASession(t *testing.T) {
	t.Parallel()
	sessions := t.TempDir()
	first := writeScript(t,
		codemodeReply(`store("kept", {n: 1}); return "stored";`),
		codemodeReply("// @options: {\"timeout_ms\": 200}\nconsole.log(\"partial\"); store(\"kept\", {n: 2}); while (true) {}"),
		map[string]any{"text": "The second script was stopped."})
	exit, _, errOut := runAgent(t, agentRunOpts{}, "--tools", "+codemode", "--session-dir", sessions, "--script", first, "go")
	if exit != 0 {
		t.Fatalf("exit %d: %s", exit, errOut)
	}
	second := writeScript(t, codemodeReply(`return JSON.stringify(load("kept"));`), map[string]any{"text": "done"})
	if exit, _, errOut := runAgent(t, agentRunOpts{}, "--tools", "+codemode", "--session-dir", sessions, "--script", second, "--resume", "last", "and now?"); exit != 0 {
		t.Fatalf("resume: exit %d: %s", exit, errOut)
	}
	msgs := latestMessages(t, sessions)
	var results []llm.Message
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult && m.ToolName == codemode.Name {
			results = append(results, m)
		}
	}
	if len(results) != 3 {
		t.Fatalf("%d codemode results in the session, want 3", len(results))
	}
	stopped := results[1]
	text := llm.ContentText(stopped.Content, "")
	d, _ := codemode.ReadDetails(stopped.Details)
	if !stopped.IsError || !strings.Contains(text, "over its time limit of 200ms (Limits.Timeout)") || !strings.Contains(text, "partial") ||
		d.Stored != nil || !strings.Contains(d.Error, "Limits.Timeout") {
		t.Errorf("the stopped script's result: %q, details %+v", text, d)
	}
	if got := llm.ContentText(results[2].Content, ""); got != `{"n":1}` {
		t.Errorf("the resumed session's script loaded %q, want what the script that succeeded stored", got)
	}
}
