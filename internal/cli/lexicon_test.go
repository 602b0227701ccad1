package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/toolsearch"
)

func searchReply(query string) map[string]any {
	return map[string]any{"tool_calls": []map[string]any{{"name": toolsearch.Name, "arguments": map[string]string{"query": query}}}}
}

// searchLoads returns what each tool_search of a --json run loaded.
func searchLoads(t *testing.T, out string) [][]string {
	t.Helper()
	var loads [][]string
	for _, ev := range parseEvents(t, out) {
		if ev.Type == "tool_end" && ev.Call != nil && ev.Call.Name == toolsearch.Name && ev.Message != nil {
			var d toolsearch.Details
			if err := json.Unmarshal(ev.Message.Details, &d); err != nil {
				t.Fatalf("tool_search details %s: %v", ev.Message.Details, err)
			}
			loads = append(loads, d.Loaded)
		}
	}
	return loads
}

// TestLexiconLearnsFromRuns runs toolshelf run twice with scripted
// replies: the first run's search misses and a second one finds the tool
// the model calls; the second run's first search loads that tool first.
// lexicon lists the alias, and --reset clears it.
func TestLexiconLearnsFromRuns(t *testing.T) {
	t.Parallel()
	mcp := testMCP(t, nil)
	lex := filepath.Join(t.TempDir(), "lexicon", "aliases.json")
	miss := "what number am I running as"
	script := writeScript(t, searchReply(miss), searchReply("process id"),
		map[string]any{"tool_calls": []map[string]any{{"name": "mcp__t__pid", "arguments": map[string]any{}}}},
		map[string]any{"text": "done"})
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--no-session", "--lexicon", lex, "--script", script, "--json", "which process")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if loads := searchLoads(t, out); len(loads) != 2 || len(loads[0]) != 0 || len(loads[1]) == 0 || loads[1][0] != "mcp__t__pid" {
		t.Fatalf("the first run loaded %v: the test needs a miss, then mcp__t__pid", loads)
	}
	info, err := os.Stat(lex)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the lexicon: %v, %v; want a file of mode 0600", info, err)
	}

	script = writeScript(t, searchReply("What number am I running as?"), map[string]any{"text": "done"})
	code, out, errOut = runAgent(t, agentRunOpts{}, "--mcp", mcp, "--no-session", "--lexicon", lex, "--script", script, "--json", "which process")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if loads := searchLoads(t, out); len(loads) != 1 || len(loads[0]) == 0 || loads[0][0] != "mcp__t__pid" {
		t.Errorf("the next run's first search loaded %v, want mcp__t__pid first", loads)
	}

	code, out, errOut = run(t, "lexicon", "--file", lex)
	if code != 0 || !strings.Contains(out, miss) || !strings.Contains(out, "process id") || !strings.Contains(out, "2 aliases in") {
		t.Errorf("lexicon: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "lexicon", "--file", lex, "--reset")
	if code != 0 || !strings.Contains(out, "Removed the learned aliases") {
		t.Errorf("lexicon --reset: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(lex); !os.IsNotExist(err) {
		t.Errorf("after --reset the file is still there: %v", err)
	}
	code, out, _ = run(t, "lexicon", "--file", lex)
	if code != 0 || !strings.Contains(out, "No learned aliases yet") {
		t.Errorf("lexicon after --reset: exit %d\n%s", code, out)
	}
}

// TestLexiconAddRemove edits the lexicon by hand, and shows what it holds
// safely.
func TestLexiconAddRemove(t *testing.T) {
	t.Parallel()
	lex := filepath.Join(t.TempDir(), "lexicon", "aliases.json")
	code, out, errOut := run(t, "lexicon", "--file", lex, "add", "post to the team", "mcp__slack__send\x1b[31m")
	if code != 0 || !strings.Contains(out, "(pinned)") || strings.Contains(out, "\x1b") {
		t.Fatalf("lexicon add: exit %d\n%q%s", code, out, errOut)
	}
	code, out, _ = run(t, "lexicon", "--file", lex)
	if code != 0 || !strings.Contains(out, "post to the team") || !strings.Contains(out, "1 (pinned)") || strings.Contains(out, "\x1b") {
		t.Errorf("lexicon: exit %d\n%q", code, out)
	}
	code, out, errOut = run(t, "lexicon", "--file", lex, "json")
	if code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("lexicon json: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = run(t, "lexicon", "--file", lex, "add", "the of a", "x")
	if code != 1 || !strings.Contains(errOut, "no word a search ranks by") {
		t.Errorf("lexicon add of stop words: exit %d\n%s", code, errOut)
	}
	code, out, errOut = run(t, "lexicon", "--file", lex, "remove", "Team post")
	if code != 0 || !strings.Contains(out, "Removed 1 alias") {
		t.Errorf("lexicon remove: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = run(t, "lexicon", "--file", lex, "remove", "Team post")
	if code != 1 || !strings.Contains(errOut, "no alias of") {
		t.Errorf("lexicon remove again: exit %d\n%s", code, errOut)
	}
}

// TestRunWarnsOfARefusedLexicon: a lexicon that is a link is not read;
// the run says so and answers.
func TestRunWarnsOfARefusedLexicon(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "lexicon")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lex := filepath.Join(dir, "aliases.json")
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere.json"), lex); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, nil), "--no-session", "--lexicon", lex, "Echo the text")
	if code != 0 || !strings.Contains(errOut, "learned aliases are off") || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("exit %d, stderr:\n%s\nwant an answer and a warning that the lexicon is a link", code, errOut)
	}
}
