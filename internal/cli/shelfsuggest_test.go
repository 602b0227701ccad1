package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/internal/usage"
	"github.com/toolshelf/toolshelf/tokens"
)

// writeUsageLog writes a metrics log of ten sessions of the servers file
// mcp, three requests each: mcp__git__status is found by a search and
// called in eight, mcp__git__push declared in every request and never
// called. After them come a line that is not JSON, one that smuggles a
// terminal escape and one with a negative count; each is skipped with a
// warning.
func writeUsageLog(t *testing.T, mcp string) string {
	t.Helper()
	abs, err := filepath.Abs(mcp)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Hour)
	var lines []string
	add := func(r tokens.Record) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	for i := range 10 {
		rec := func(min int, declared []string, toks []int, called ...string) tokens.Record {
			return tokens.Record{Time: base.Add(time.Duration(60*i+min) * time.Minute), Session: fmt.Sprintf("s%02d", i), Servers: abs,
				Input: 500, CacheRead: 1500, Declared: declared, DeclaredTokens: toks, Called: called}
		}
		declared, toks := []string{"tool_search", "mcp__git__push"}, []int{80, 300}
		with, withToks := []string{"tool_search", "mcp__git__push", "mcp__git__status"}, []int{80, 300, 120}
		if i < 8 {
			add(rec(0, declared, toks, "tool_search"))
			add(rec(1, with, withToks, "mcp__git__status"))
			add(rec(2, with, withToks))
		} else {
			add(rec(0, declared, toks))
			add(rec(1, declared, toks))
			add(rec(2, declared, toks))
		}
	}
	lines = append(lines, `{"time": "not a time"`, "{\"session\":\"\x1b[31mred\"}",
		`{"time":"2026-01-01T00:00:00Z","input":-1,"session":"s00"}`)
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestShelfSuggest(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	mcp := writeMCPConfig(t, map[string]any{
		"git":   map[string]any{"command": "git-mcp"},
		"notes": map[string]any{"command": "notes-mcp"},
	})
	log := writeUsageLog(t, mcp)
	code, out, errOut := run(t, "shelf", "suggest", "--mcp", mcp, "--metrics", log)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{
		"10 sessions and 30 requests of ", "a request sends 2,000 tokens",
		"always-load  mcp__git__status  1,432",
		"remove       mcp__git__push    900",
		`"git": {"toolExposure": {"push": "hidden"}}`,
		"remove       server notes      0",
		`"notes": {"enabled": false}`,
		"--apply declares",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"line 31: ", "line 32: ", "line 33: negative count (line skipped)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "\x1b") {
		t.Errorf("stderr carries a terminal escape: %q", errOut)
	}

	// --json, over the last three sessions only: s07 used status, s08
	// and s09 did not.
	code, out, errOut = run(t, "shelf", "suggest", "--mcp", mcp, "--metrics", log, "--sessions", "3", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var got suggestReport
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if got.Report.Sessions != 3 || len(got.Report.Tools) != 2 || got.Report.Tools[0].Used != 1 {
		t.Errorf("--sessions 3: %+v", got.Report)
	}
	if i := slices.IndexFunc(got.Suggestions, func(s usage.Suggestion) bool { return s.Action == usage.AlwaysLoad }); i >= 0 {
		t.Errorf("called in 1 of 3 sessions, yet %+v", got.Suggestions[i])
	}

	if code, _, errOut := run(t, "shelf", "suggest", "--mcp", mcp, "--metrics", log, "--days", "0"); code != 2 {
		t.Errorf("--days 0: exit %d: %s", code, errOut)
	}
	if code, _, errOut := run(t, "shelf", "suggest", "--mcp", mcp, "--metrics", log, "--days", "1"); code != 0 {
		t.Errorf("--days 1: exit %d: %s", code, errOut)
	}
}

// TestShelfSuggestApply: sessions that call echo after a search make
// suggest propose it; --apply makes the next new session declare it from
// its first request, while a session that started before keeps its tools
// when resumed; --reset undoes it.
func TestShelfSuggestApply(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	mcp, sessions := testMCP(t, nil), t.TempDir()
	metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
	agent := func(log string, args ...string) (session string) {
		t.Helper()
		args = append([]string{"--mcp", mcp, "--session-dir", sessions, "--metrics", log}, args...)
		code, _, errOut := runAgent(t, agentRunOpts{}, args...)
		if code != 0 {
			t.Fatalf("run %v: exit %d: %s", args, code, errOut)
		}
		return strings.TrimSpace(errOut[strings.LastIndex(errOut, "session ")+len("session "):])
	}
	agent(metrics, "Echo the text")
	agent(metrics, "Echo the text")
	before := agent(metrics, "hello")

	code, out, errOut := run(t, "shelf", "suggest", "--mcp", mcp, "--metrics", metrics, "--apply")
	if code != 0 || !strings.Contains(out, "always-load  mcp__t__echo") || !strings.Contains(out, "Applied: new sessions declare mcp__t__echo") {
		t.Fatalf("suggest --apply: exit %d\n%s%s", code, out, errOut)
	}
	info, err := os.Stat(filepath.Join(state, "toolshelf", usage.FileName))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v, %v", info, err)
	}

	firstDeclared := func(log string) []string {
		t.Helper()
		recs := readRecords(t, log)
		return recs[0].Declared
	}
	next := filepath.Join(t.TempDir(), "next.jsonl")
	agent(next, "hello")
	if got := firstDeclared(next); !slices.Contains(got, "mcp__t__echo") {
		t.Errorf("the next session's first request declared %v, want mcp__t__echo", got)
	}
	resumed := filepath.Join(t.TempDir(), "resumed.jsonl")
	agent(resumed, "--resume", before, "hello")
	if got := firstDeclared(resumed); slices.Contains(got, "mcp__t__echo") {
		t.Errorf("the session from before --apply declares %v when resumed", got)
	}

	if code, out, _ := run(t, "shelf", "suggest", "--reset"); code != 0 || !strings.Contains(out, "Cleared") {
		t.Errorf("--reset: exit %d: %s", code, out)
	}
	after := filepath.Join(t.TempDir(), "after.jsonl")
	agent(after, "hello")
	if got := firstDeclared(after); slices.Contains(got, "mcp__t__echo") {
		t.Errorf("after --reset the first request declared %v", got)
	}
	if code, out, _ := run(t, "shelf", "suggest", "--reset"); code != 0 || !strings.Contains(out, "Nothing was applied") {
		t.Errorf("second --reset: exit %d: %s", code, out)
	}
}

// TestShelfSuggestRefusesAStateLink: a state file that is a link is
// refused, by suggest and by a run, which then defers as configured.
func TestShelfSuggestRefusesAStateLink(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := filepath.Join(state, "toolshelf")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "planted.json")
	if err := os.WriteFile(target, []byte(`{"files":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, usage.FileName)); err != nil {
		t.Fatal(err)
	}
	mcp := testMCP(t, nil)
	log := writeUsageLog(t, mcp)
	if code, _, errOut := run(t, "shelf", "suggest", "--mcp", mcp, "--metrics", log, "--apply"); code == 0 || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("suggest --apply over a link: exit %d: %s", code, errOut)
	}
	code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--no-session", "--metrics", "off", "hello")
	if code != 0 || !strings.Contains(errOut, "symbolic link") || !strings.Contains(errOut, "deferred as the servers file says") {
		t.Errorf("run over a linked state file: exit %d: %s", code, errOut)
	}
}

// TestShelfSuggestDefersAnAppliedTool: an applied tool that sessions
// declared from the start and rarely called is proposed for deferral, and
// --apply again leaves it on the shelf.
func TestShelfSuggestDefersAnAppliedTool(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	mcp := writeMCPConfig(t, map[string]any{"db": map[string]any{"command": "db-mcp"}})
	abs, err := filepath.Abs(mcp)
	if err != nil {
		t.Fatal(err)
	}
	var s usage.State
	if err := s.Apply(abs, []string{"mcp__db__query"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(filepath.Join(state, "toolshelf")); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour).UTC()
	var lines []string
	for i := range 10 {
		for j := range 4 {
			var called []string
			if i == 0 && j == 1 {
				called = []string{"mcp__db__query"}
			}
			b, err := json.Marshal(tokens.Record{Time: base.Add(time.Duration(4*i+j) * time.Second), Session: fmt.Sprint(i), Servers: abs,
				Input: 1000, Declared: []string{"mcp__db__query"}, DeclaredTokens: []int{400}, Called: called})
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, string(b))
		}
	}
	log := filepath.Join(t.TempDir(), "metrics.jsonl")
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "shelf", "suggest", "--mcp", mcp, "--metrics", log)
	if code != 0 || !strings.Contains(out, "defer  mcp__db__query  1,340") || !strings.Contains(out, "--apply again leaves it on the shelf") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "shelf", "suggest", "--mcp", mcp, "--metrics", log, "--apply", "--json")
	var got suggestReport
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.Applied) != 0 {
		t.Errorf("--apply again: exit %d, applied %v:\n%s%s", code, got.Applied, out, errOut)
	}
}
