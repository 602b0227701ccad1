package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/internal/eval"
	"github.com/toolshelf/toolshelf/search"
)

// writeEvalSuite writes a suite of two sets: one over its own catalog of
// three tools, one over the built-in catalog with a task file.
func writeEvalSuite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"cat/s.json": `{"server": "s", "tools": [{"name": "get_weather", "description": "Get the weather forecast for a city"},` +
			`{"name": "book_flight", "description": "Book a flight"}, {"name": "list_issues", "description": "List the issues of a tracker"}]}`,
		"mine.jsonl": `{"id": "m1", "query": "weather forecast", "kind": "keyword", "relevant": [{"server": "s", "tool": "get_weather"}]}` + "\n" +
			`{"id": "m2", "query": "book me a flight", "kind": "natural", "relevant": [{"server": "s", "tool": "book_flight"}]}` + "\n",
		"tasks.jsonl": `{"id": "t1", "prompt": "p", "steps": [{"server": "filesystem", "tool": "read_file", "queries": ["read local file", "open file"]}]}` + "\n",
		"suite.json":  `{"sets": [{"name": "mine", "catalogs": ["cat"], "queries": ["mine.jsonl"]}, {"name": "steps", "tasks": ["tasks.jsonl"]}]}`,
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "suite.json")
}

func TestEvalSuite(t *testing.T) {
	t.Parallel()
	suite := writeEvalSuite(t)
	code, out, errOut := run(t, "eval", "--suite", suite, "--ablate", "--half", "all")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"== set mine: 2 queries (all half), 3 tools", "== set steps: 2 queries (all half), 1564 tools",
		"kind=keyword", "kind=first", "kind=rephrased", "length=short",
		"MRR@10 on each set's all half", "base", "left-out",
		"Ablation: MRR@10 each factor earns", "synonyms", "generalises",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Every group has a toolshelf row, a pi row and a Δ row.
	if n := len(regexp.MustCompile(`(?m)^\s+Δ\s+[-+]\d\.\d{3}`).FindAllString(out, -1)); n != len(regexp.MustCompile(`(?m)^\s+pi\s+\d\.\d{3}`).FindAllString(out, -1)) || n == 0 {
		t.Errorf("%d Δ rows, want one per pi row:\n%s", n, out)
	}
	// The suite table: one line per set.
	if !regexp.MustCompile(`(?m)^\s+mine\s+3\s+2\s+\d\.\d{3}\s+\d\.\d{3}\s+[-+]\d\.\d{3}`).MatchString(out) {
		t.Errorf("no suite line for mine:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^suite mrr toolshelf-pi mine=[-+]\d\.\d{3} steps=[-+]\d\.\d{3}$`).MatchString(last) {
		t.Errorf("last line %q", last)
	}

	code, out, errOut = run(t, "eval", "--suite", suite, "--set", "mine", "--disable", "stemming,synonyms", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Disabled string
		Sets     []struct {
			Name    string
			Tools   int
			Reports []struct{ Ranker string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// toolshelf, pi, the base and no left-out fold: the weights file has
	// none for a set of this suite.
	if got.Disabled != "synonyms,stemming" || len(got.Sets) != 1 || got.Sets[0].Name != "mine" || got.Sets[0].Tools != 3 ||
		len(got.Sets[0].Reports) != 4 || got.Sets[0].Reports[1].Ranker != "pi" || got.Sets[0].Reports[2].Ranker != "base" ||
		got.Sets[0].Reports[3].Ranker != "" {
		t.Errorf("json %+v", got)
	}
}

// TestEvalFit fits the weights on a small suite and reads back the file
// it writes.
func TestEvalFit(t *testing.T) {
	t.Parallel()
	suite := writeEvalSuite(t)
	path := filepath.Join(t.TempDir(), "weights.json")
	code, out, errOut := run(t, "eval", "--suite", suite, "--fit", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Factors, judged on each left-out set's fit half", "stays", "fitted: name", "wrote " + path} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := search.ParseWeights(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Folds) != 2 || w.Seed != eval.FitSeed {
		t.Errorf("weights %+v: want a fold for each of the two sets", w)
	}
	code, _, errOut = run(t, "eval", "--suite", suite, "--fit", path, "--ablate")
	if code != 2 || !strings.Contains(errOut, "--fit fits the default ranker on the fit halves") {
		t.Errorf("--fit --ablate: exit %d, %q", code, errOut)
	}
}

func TestEvalSuiteUsageErrors(t *testing.T) {
	t.Parallel()
	suite := writeEvalSuite(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--suite", suite, "--queries", "q.jsonl"}, "--suite names its own catalogs and queries"},
		{[]string{"eval", "--suite", suite, "--misses"}, "--misses works with --queries"},
		{[]string{"eval", "--suite", suite, "--ranker", "pi"}, "--suite runs both rankers"},
		{[]string{"eval", "--suite", suite, "--set", "nope"}, `--set: no set named "nope": the suite has mine, steps`},
		{[]string{"eval", "--suite", suite, "--disable", "nope"}, `--disable: unknown ranking factor "nope"`},
		{[]string{"eval", "--queries", "q.jsonl", "--ablate"}, "--ablate, --set, --half and --fit work with --suite"},
		{[]string{"eval", "--suite", suite, "--half", "odd"}, `--half "odd": use test, fit or all`},
		{[]string{"eval", "--queries", "q.jsonl", "--ranker", "pi", "--disable", "synonyms"}, "--disable works with the toolshelf ranker only"},
	} {
		code, _, errOut := run(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
	code, _, errOut := run(t, "eval", "--suite", suite, "--suite", suite)
	if code != 1 || !strings.Contains(errOut, `two suites have a set named "mine"`) {
		t.Errorf("a suite twice: exit %d, %q", code, errOut)
	}
	code, _, errOut = run(t, "eval", "--suite", filepath.Join(t.TempDir(), "nope.json"))
	if code != 1 || !strings.Contains(errOut, "--suite: open ") {
		t.Errorf("missing suite: exit %d, %q", code, errOut)
	}
}
