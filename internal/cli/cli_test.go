package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// run runs the command line and returns its exit status and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestSearchDefaultCatalog(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "search", "create issue github")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	if !strings.HasPrefix(first, "1  mcp__github__issue_write ") && !strings.HasPrefix(first, "1  mcp__github_ref__create_issue ") {
		t.Errorf("first line %q, want a GitHub issue-creating tool", first)
	}
	if n := strings.Count(out, "\n"); n != 8 {
		t.Errorf("%d lines, want the default limit of 8", n)
	}
}

func TestSearchJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "search", "--json", "--limit", "2", "browser_snapshot")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Query, Ranker string
		Hits          []struct {
			Rank         int
			Name, Server string
			Tool         string
			Exact        bool
			Description  string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Ranker != "toolshelf" || len(got.Hits) != 2 || got.Hits[0].Name != "mcp__playwright__browser_snapshot" ||
		!got.Hits[0].Exact || got.Hits[0].Server != "playwright" || got.Hits[0].Tool != "browser_snapshot" || got.Hits[1].Rank != 2 {
		t.Errorf("result %+v", got)
	}
}

func TestSearchNoMatchesShowsHint(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "search", "snapshat")
	if code != 0 || !strings.HasPrefix(out, "No matching tools found.\nNo tool mentions \"snapshat\". Closest tool names: ") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

func TestSearchExplain(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "search", "--limit", "1", "--explain", "mcp__github__issue_write", "create issue github")
	if code != 0 || !strings.Contains(out, "mcp__github__issue_write:\n") || !strings.Contains(out, "total ") {
		t.Errorf("exit %d, output %q", code, out)
	}
	code, out, _ = run(t, "search", "--json", "--limit", "1", "--explain", "mcp__github__issue_write", "create issue github")
	var got struct{ Explain map[string]string }
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || !strings.Contains(got.Explain["mcp__github__issue_write"], "total ") {
		t.Errorf("--json --explain: exit %d, %v, %q", code, err, out)
	}
}

func TestSearchPIRanker(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "search", "--ranker", "pi", "--limit", "1", "create issue github")
	if code != 0 || !strings.Contains(out, "mcp__github_ref__create_issue") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"search"}, "search needs a QUERY"},
		{[]string{"search", "--limit", "0", "x"}, "--limit must be a positive integer"},
		{[]string{"search", "--ranker", "bm99", "x"}, `unknown ranker "bm99"`},
		{[]string{"search", "--nope", "x"}, "unknown flag: --nope"},
		{[]string{"eval"}, "eval needs --queries FILE"},
		{[]string{"eval", "--queries", "x.jsonl", "--k", "0"}, `--k: "0" is not a cut-off`},
		{[]string{"eval", "--queries", "x.jsonl", "--k", ","}, "--k needs at least one cut-off"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"search", "--synonyms", "/nonexistent/syn.txt", "x"}, "--synonyms:"},
		{[]string{"search", "--ranker", "pi", "--synonyms", "x.txt", "x"}, "--synonyms works with the toolshelf ranker only"},
		{[]string{"search", "--ranker", "pi", "--explain", "x", "create issue"}, "--explain works with the toolshelf ranker only"},
		{[]string{"eval", "--queries", "x.jsonl", "--misses", "--json"}, "--misses prints text"},
	}
	for _, tt := range tests {
		code, _, errOut := run(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "Run 'toolshelf help' for usage.") {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "help")
	if code != 0 || !strings.Contains(out, "search") || !strings.Contains(out, "eval") {
		t.Errorf("exit %d, output %q", code, out)
	}
	code, out, _ = run(t, "search", "--help")
	if code != 0 || !strings.Contains(out, "select:a,b") || !strings.Contains(out, "--catalog") {
		t.Errorf("search --help: exit %d, output %q", code, out)
	}
}

func TestCatalogFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalog := `{"server": "weather", "tools": [
		{"name": "get_forecast", "description": "Get the weather forecast for a city.", "inputSchema": {"type": "object"}},
		{"name": "", "description": "broken"},
		{"name": "get_alerts", "description": "Get weather alerts.", "inputSchema": "not a schema"}]}`
	if err := os.WriteFile(filepath.Join(dir, "weather.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "search", "--catalog", dir, "weather")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "mcp__weather__get_forecast") || strings.Contains(out, "get_alerts") {
		t.Errorf("output %q", out)
	}
	for _, want := range []string{`tool #2: empty "name"; the tool was skipped`, `tool #3 "get_alerts": "inputSchema" must be a JSON Schema object`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, _, errOut = run(t, "search", "--catalog", filepath.Join(dir, "missing.json"), "weather")
	if code != 1 || !strings.Contains(errOut, "--catalog "+filepath.Join(dir, "missing.json")+": no such file or folder") {
		t.Errorf("missing catalog: exit %d, %q", code, errOut)
	}
	// A missing path is an error even when another path loads.
	code, _, errOut = run(t, "search", "--catalog", dir, "--catalog", filepath.Join(dir, "typo"), "weather")
	if code != 1 || !strings.Contains(errOut, "no such file or folder") {
		t.Errorf("one missing catalog of two: exit %d, %q", code, errOut)
	}
	// A readable folder with no usable tool says so.
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "bad.json"), []byte(`{"tools": [{"name": ""}]}`), 0o644)
	code, _, errOut = run(t, "search", "--catalog", empty, "weather")
	if code != 1 || !strings.Contains(errOut, "no tools loaded from --catalog "+empty+": fix the problems above") {
		t.Errorf("unusable catalog: exit %d, %q", code, errOut)
	}
}

func TestEvalCompare(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	queries := filepath.Join(dir, "q.jsonl")
	lines := `{"id":"a1","query":"create issue github","lang":"en","kind":"keyword","relevant":[{"server":"github","tool":"issue_write"}]}
{"id":"a2","query":"列出 Slack 频道","lang":"zh","kind":"keyword","relevant":[{"server":"slack","tool":"slack_list_channels"}]}
`
	if err := os.WriteFile(queries, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "eval", "--queries", queries, "--compare", "--k", "1,5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"2 queries, 1564 tools, ranker toolshelf vs pi", "recall@1", "recall@5", "recall@8", "mrr@10", "lang=zh", "kind=keyword"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	lines2 := strings.Split(strings.TrimSpace(out), "\n")
	last := lines2[len(lines2)-1]
	if !regexp.MustCompile(`^recall@8=\d\.\d{3} mrr=\d\.\d{3} ndcg@10=\d\.\d{3} n=2$`).MatchString(last) {
		t.Errorf("last line %q", last)
	}
	if n := len(regexp.MustCompile(`(?m)^\s+pi\s+\d\.\d{3}`).FindAllString(out, -1)); n != 5 {
		t.Errorf("%d pi rows, want one per group (overall, en, zh, keyword, short):\n%s", n, out)
	}
}

func TestEvalJSONAndUnknownTool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	queries := filepath.Join(dir, "q.jsonl")
	code, _, errOut := run(t, "eval", "--queries", filepath.Join(dir, "nope.jsonl"))
	if code != 1 || !strings.Contains(errOut, "--queries: open ") {
		t.Errorf("missing queries file: exit %d, %q", code, errOut)
	}
	os.WriteFile(queries, []byte(`{"id":"a1","query":"x","relevant":[{"server":"github","tool":"no_such_tool"}]}`+"\n"), 0o644)
	// A label the shelf lacks is a warning; its query is a miss.
	code, out, errOut := run(t, "eval", "--queries", queries)
	if code != 0 || !strings.Contains(errOut, "warning: query a1: labeled tool github/no_such_tool is not on the shelf") ||
		!strings.Contains(out, "mrr=0.000 ndcg@10=0.000 n=1") {
		t.Errorf("exit %d, %q, %q", code, errOut, out)
	}
	os.WriteFile(queries, []byte(`{"id":"a1","query":"read local file","relevant":[{"server":"filesystem","tool":"read_file"}]}`+"\n"), 0o644)
	code, out, errOut = run(t, "eval", "--queries", queries, "--json", "--ranker", "pi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Tools   int
		Reports []struct {
			Ranker  string
			Overall struct{ N int }
			Queries []struct{ ID string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Tools != 1564 || len(got.Reports) != 1 || got.Reports[0].Ranker != "pi" || got.Reports[0].Overall.N != 1 {
		t.Errorf("report %+v", got)
	}
}
