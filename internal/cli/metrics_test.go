package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/tokens"
)

func readRecords(t *testing.T, path string) []tokens.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, bad, err := tokens.ReadLog(f)
	if err != nil || len(bad) > 0 {
		t.Fatalf("reading %s: %v, bad lines %v", path, err, bad)
	}
	return recs
}

// TestRunWritesMetrics: every request of a run appends a record with the
// usage, the declared tools and the calls; stats reads them back.
func TestRunWritesMetrics(t *testing.T) {
	t.Parallel()
	metrics := filepath.Join(t.TempDir(), "m", "metrics.jsonl")
	dir := t.TempDir()
	code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, nil), "--session-dir", dir, "--metrics", metrics, "Echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	recs := readRecords(t, metrics)
	// search, call echo, answer.
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(recs), recs)
	}
	session := strings.TrimSpace(errOut[strings.LastIndex(errOut, "session ")+len("session "):])
	for i, r := range recs {
		if r.API != "anthropic-messages" || r.Model != "claude-opus-5-5" || r.Class != "changes" || r.Session != session {
			t.Errorf("record %d: %+v (session %q)", i, r, session)
		}
		if r.Input+r.CacheRead+r.CacheWrite == 0 || r.Output == 0 {
			t.Errorf("record %d without usage: %+v", i, r)
		}
		sum := 0
		for _, n := range r.DeclaredTokens {
			sum += n
		}
		if r.Tools != len(r.Declared) || len(r.DeclaredTokens) != len(r.Declared) || r.ToolTokens != sum || sum == 0 {
			t.Errorf("record %d: tools %d, declared %v, tokens %v, toolTokens %d", i, r.Tools, r.Declared, r.DeclaredTokens, r.ToolTokens)
		}
	}
	if !slices.Equal(recs[0].Called, []string{"tool_search"}) || !slices.Equal(recs[1].Called, []string{"mcp__t__echo"}) || len(recs[2].Called) != 0 {
		t.Errorf("calls %v, %v, %v", recs[0].Called, recs[1].Called, recs[2].Called)
	}
	if slices.Contains(recs[0].Declared, "mcp__t__echo") || !slices.Contains(recs[1].Declared, "mcp__t__echo") {
		t.Errorf("declared %v then %v: echo is declared after the search", recs[0].Declared, recs[1].Declared)
	}
	fi, err := os.Stat(metrics)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("metrics file: %v, %v", fi, err)
	}

	// A second run appends.
	if code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, nil), "--no-session", "--metrics", metrics, "Echo the text"); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}
	if recs := readRecords(t, metrics); len(recs) != 6 || recs[5].Session != "" {
		t.Errorf("%d records after two runs, last %+v", len(recs), recs[len(recs)-1])
	}
	code, out, errOut := run(t, "stats", metrics)
	if code != 0 || !strings.HasPrefix(out, "6 requests") || !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool {
		f := strings.Fields(l)
		return len(f) == 4 && f[0] == "mcp__t__echo" && f[1] == "4" && f[2] == "2"
	}) {
		t.Errorf("stats: exit %d\n%s%s", code, out, errOut)
	}
}

func TestRunMetricsOffAndDefault(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	if code, _, errOut := runAgent(t, agentRunOpts{}, "--no-session", "--metrics", "off", "hello"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(state, "toolshelf")); !os.IsNotExist(err) {
		t.Errorf("--metrics off wrote a log: %v", err)
	}
	if code, _, errOut := runAgent(t, agentRunOpts{}, "--no-session", "hello"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if recs := readRecords(t, filepath.Join(state, "toolshelf", "metrics.jsonl")); len(recs) != 1 {
		t.Errorf("default log: %d records", len(recs))
	}
}

// TestRunMetricsFailure: a log that cannot be written is a warning; the
// agent answers.
func TestRunMetricsFailure(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, nil), "--no-session", "--metrics", filepath.Join(file, "metrics.jsonl"), "Echo the text")
	if code != 0 || !strings.Contains(out, "echo: ") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if n := strings.Count(errOut, "toolshelf: warning: metrics not recorded: "); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, errOut)
	}
}
