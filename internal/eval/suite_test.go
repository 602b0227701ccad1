package eval_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/internal/eval"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
)

func TestReadSuiteReportsEveryProblem(t *testing.T) {
	in := `{"sets": [
	  {"name": "ok", "queries": ["q.jsonl"]},
	  {"name": "bad name!", "queries": ["q.jsonl"]},
	  {"name": "ok", "queries": ["q.jsonl"]},
	  {"name": "empty"},
	  {"name": "lonely", "builtin": true, "queries": ["q.jsonl"]},
	  {"name": "blank", "tasks": [""]}
	]}`
	_, err := eval.ReadSuite(strings.NewReader(in), "s.json")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`s.json: set 2 ("bad name!"): a set needs a name`,
		`s.json: set 3 ("ok"): the name is used by an earlier set`,
		`s.json: set 4 ("empty"): no "queries" or "tasks" files`,
		`s.json: set 5 ("lonely"): "builtin" adds the built-in catalog`,
		`s.json: set 6 ("blank"): an empty path`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	for in, want := range map[string]string{
		`{"sets": []}`:                                   `no sets`,
		`{"sets": [{"name": "a", "query": []}]}`:         `unknown field "query"`,
		`{"sets": [{"name": "a", "queries": ["q"]}]} {}`: "more than one JSON value",
		`[]`: "not a suite file",
	} {
		if _, err := eval.ReadSuite(strings.NewReader(in), "s.json"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one with %q", in, err, want)
		}
	}
}

func TestReadTaskQueries(t *testing.T) {
	in := `{"id": "t1", "prompt": "p", "lang": "zh", "steps": [` +
		`{"server": "s", "tool": "alpha", "queries": ["甲", "alpha"]}, {"server": "s", "tool": "bravo", "queries": ["bravo"]}]}
{"id": "t2", "prompt": "p", "steps": [{"server": "s", "tool": "charlie", "queries": ["charlie"]}]}
`
	qs, err := eval.ReadTaskQueries(strings.NewReader(in), "tasks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []eval.Query{
		{ID: "t1/1/1", Query: "甲", Lang: "zh", Kind: eval.KindFirst, Relevant: []tool.Origin{{Server: "s", Tool: "alpha"}}},
		{ID: "t1/1/2", Query: "alpha", Lang: "zh", Kind: eval.KindRephrased, Relevant: []tool.Origin{{Server: "s", Tool: "alpha"}}},
		{ID: "t1/2/1", Query: "bravo", Lang: "zh", Kind: eval.KindFirst, Relevant: []tool.Origin{{Server: "s", Tool: "bravo"}}},
		{ID: "t2/1/1", Query: "charlie", Lang: "en", Kind: eval.KindFirst, Relevant: []tool.Origin{{Server: "s", Tool: "charlie"}}},
	}
	if diff := cmp.Diff(want, qs); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
	bad := strings.Join([]string{
		`not json`,
		`{"prompt": "p", "steps": [{"server": "s", "tool": "t", "queries": ["q"]}]}`,
		`{"id": "a", "steps": []}`,
		`{"id": "b", "steps": [{"server": "s", "queries": ["q"]}]}`,
		`{"id": "c", "steps": [{"server": "s", "tool": "t"}]}`,
		`{"id": "d", "steps": [{"server": "s", "tool": "t", "queries": [" "]}]}`,
		`{"id": "d", "steps": [{"server": "s", "tool": "t", "queries": ["q"]}]}`,
	}, "\n")
	_, err = eval.ReadTaskQueries(strings.NewReader(bad), "t.jsonl")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"t.jsonl:1: not a task object",
		`t.jsonl:2: missing "id"`,
		`t.jsonl:3: task a: no "steps"`,
		`t.jsonl:4: task b: step 1 needs "server" and "tool"`,
		`t.jsonl:5: task c: step 1 has no "queries"`,
		"t.jsonl:6: task d: step 1: query 1 is empty",
		"t.jsonl:7: task d: the id is already used on line 6",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// writeSuite writes a suite folder: a catalog of four tools of server s,
// labeled queries, a task file and the suite file; it returns the suite
// file's path.
func writeSuite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"cat/s.json": `{"server": "s", "tools": [` +
			`{"name": "alpha", "description": "alpha"}, {"name": "bravo", "description": "bravo"},` +
			`{"name": "charlie", "description": "charlie"}, {"name": "delta", "description": "delta"}]}`,
		"q/queries.jsonl": `{"id": "q1", "query": "alpha", "relevant": [{"server": "s", "tool": "alpha"}]}` + "\n" +
			`{"id": "q2", "query": "bravo charlie", "relevant": [{"server": "s", "tool": "charlie"}]}` + "\n",
		"tasks.jsonl": `{"id": "t1", "prompt": "p", "steps": [{"server": "s", "tool": "delta", "queries": ["delta", "bravo"]}]}` + "\n",
		"suite.json": `{"sets": [{"name": "mine", "catalogs": ["cat"], "queries": ["q/queries.jsonl"], "tasks": ["tasks.jsonl"]},` +
			`{"name": "second", "catalogs": ["cat/s.json"], "tasks": ["tasks.jsonl"]}]}`,
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

func TestRunSuite(t *testing.T) {
	s, err := eval.LoadSuite(writeSuite(t))
	if err != nil {
		t.Fatal(err)
	}
	sets, err := s.Load(nil) // no set needs the built-in catalog
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || len(sets[0].Queries) != 4 || len(sets[1].Queries) != 2 || len(sets[0].Shelf.Docs) != 4 {
		t.Fatalf("loaded %d sets: %+v", len(sets), sets)
	}
	reps, err := eval.RunSuite(sets, eval.Rankings(nil), []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].Name != "mine" || reps[0].Tools != 4 || len(reps[0].Reports) != 2 {
		t.Fatalf("reports %+v", reps)
	}
	pi := reps[0].Report(search.ModePI)
	if pi == nil || reps[0].Report("nope") != nil {
		t.Fatalf("Report(pi) = %v", pi)
	}
	// pi finds exactly the named tools: q1 at rank 1, q2's charlie at
	// 2 (tied with bravo, registration order), the task's first query at
	// 1 and its rephrasing not at all.
	if got := pi.Overall.MRR; math.Abs(got-(1+0.5+1+0)/4) > 1e-12 {
		t.Errorf("pi MRR = %v", got)
	}
	if k := pi.ByKind[eval.KindRephrased]; k.N != 1 || k.MRR != 0 {
		t.Errorf("rephrased: %+v", k)
	}
}

func TestSuiteLoadErrors(t *testing.T) {
	path := writeSuite(t)
	s, err := eval.LoadSuite(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Only([]string{"second", "third"}); err == nil || !strings.Contains(err.Error(), `no set named "third": the suite has mine, second`) {
		t.Errorf("Only: %v", err)
	}
	if err := s.Only([]string{"second"}); err != nil || len(s.Sets) != 1 || s.Sets[0].Name != "second" {
		t.Errorf("Only(second): %v, %+v", err, s.Sets)
	}
	other, _ := eval.LoadSuite(path)
	if err := s.Merge(other); err == nil || !strings.Contains(err.Error(), `two suites have a set named "second"`) {
		t.Errorf("Merge: %v", err)
	}
	// A set without catalogs needs the built-in one.
	builtinSet := eval.Set{Name: "b", Queries: s.Sets[0].Tasks}
	if _, err := builtinSet.Load(nil); err == nil || !strings.Contains(err.Error(), "set b: searches the built-in catalog") {
		t.Errorf("no built-in: %v", err)
	}
	called := false
	failing := func(*tool.Registry, *tool.Namer) error { called = true; return errors.New("boom") }
	if _, err := builtinSet.Load(failing); !called || err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("failing built-in: %v", err)
	}
	// A label the shelf lacks is a warning; ids are unique across files.
	dir := filepath.Dir(path)
	u := eval.Set{Name: "u", Catalogs: []string{filepath.Join(dir, "cat")}, Queries: []string{filepath.Join(dir, "unknown.jsonl")}}
	os.WriteFile(filepath.Join(dir, "unknown.jsonl"), []byte(`{"id": "q1", "query": "x", "relevant": [{"server": "s", "tool": "zulu"}]}`+"\n"), 0o644)
	for _, tt := range []struct {
		set  eval.Set
		want string
	}{
		{eval.Set{Name: "d", Catalogs: []string{filepath.Join(dir, "cat")},
			Queries: []string{filepath.Join(dir, "q", "queries.jsonl"), filepath.Join(dir, "unknown.jsonl")}},
			"set d: query id q1 is in both"},
		{eval.Set{Name: "m", Catalogs: []string{filepath.Join(dir, "nope")}, Queries: []string{filepath.Join(dir, "unknown.jsonl")}},
			"set m: catalog"},
	} {
		if _, err := tt.set.Load(nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("set %s: %v, want %q", tt.set.Name, err, tt.want)
		}
	}
	ls, err := u.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprint(ls.Warnings); !strings.Contains(w, "query q1: labeled tool s/zulu is not on the shelf") {
		t.Errorf("warnings %s", w)
	}
}

func TestAblationTable(t *testing.T) {
	report := func(ranking string, mrr float64) *eval.Report {
		return &eval.Report{Ranker: ranking, Overall: eval.Metrics{MRR: mrr}}
	}
	var reps []*eval.SetReport
	// Four sets: the synonyms earn 0.1, 0.1, 0.1 and lose 0.02 on the
	// last; every other factor earns 0.001 everywhere.
	for i := range 4 {
		sr := &eval.SetReport{Name: string(rune('a' + i)), Reports: []*eval.Report{report("toolshelf", 0.5)}}
		for _, r := range eval.Ablations(nil) {
			mrr := 0.499
			if r.Name == "-synonyms" {
				mrr = 0.4
				if i == 3 {
					mrr = 0.52
				}
			}
			sr.Reports = append(sr.Reports, report(r.Name, mrr))
		}
		reps = append(reps, sr)
	}
	table, err := eval.AblationTable(reps, "toolshelf")
	if err != nil {
		t.Fatal(err)
	}
	if want := len(eval.Ablations(nil)); len(table) != want {
		t.Fatalf("%d rows, want %d: one per factor the default has on", len(table), want)
	}
	for _, a := range table {
		syn := a.Factor == search.FactorSynonyms
		if syn != !a.Generalises() {
			t.Errorf("%s: earned %v, generalises %v", a.Name, a.Earned, a.Generalises())
		}
		if syn && (a.HelpsOn() != 3 || math.Abs(a.Worst()+0.02) > 1e-12) {
			t.Errorf("synonyms: helps on %d, worst %v", a.HelpsOn(), a.Worst())
		}
	}
	if _, err := eval.AblationTable(reps[:1:1], "nope"); err == nil {
		t.Error("a table from reports without the base ranking")
	}
	// Ablations leave out what the options already switch off.
	names := func(rs []eval.Ranking) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	got := names(eval.Ablations(&search.Options{Disable: search.FactorStemming}))
	if slices.Contains(got, "-stemming") || len(got) > len(eval.Ablations(nil)) {
		t.Errorf("ablations on top of -stemming: %v", got)
	}
}
