package eval_test

import (
	"math"
	"sort"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/eval"
	"github.com/toolshelf/toolshelf/search"
)

// suiteFile is the repository's suite: the public dev queries, our own
// queries, the task steps' queries, MetaTool and Seal-Tools.
const suiteFile = "../testdata/suite.json"

// suiteRun evaluates the whole suite once per test binary with both
// rankers (the toolshelf ranker first).
var suiteRun = sync.OnceValues(func() (map[string]*eval.SetReport, error) {
	s, err := eval.LoadSuite(suiteFile)
	if err != nil {
		return nil, err
	}
	sets, err := s.Load(builtin.Load)
	if err != nil {
		return nil, err
	}
	reps, err := eval.RunSuite(sets, eval.Rankings(nil), []int{1, 8})
	if err != nil {
		return nil, err
	}
	out := map[string]*eval.SetReport{}
	for _, r := range reps {
		out[r.Name] = r
	}
	return out, nil
})

// set returns both rankers' reports on the named set of the suite.
func set(t *testing.T, name string) (toolshelf, pi *eval.Report) {
	t.Helper()
	reps, err := suiteRun()
	if err != nil {
		t.Fatal(err)
	}
	r, ok := reps[name]
	if !ok {
		t.Fatalf("the suite has no set %q", name)
	}
	return r.Reports[0], r.Reports[1]
}

// TestReferenceParity checks that the pi ranker reproduces the reference
// system's published figures on the public dev queries.
func TestReferenceParity(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates the suite over the whole corpus; go test without -short runs it")
	}
	_, pi := set(t, "dev")
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"recall@8", pi.Overall.Recall[8], 0.845},
		{"mrr@10", pi.Overall.MRR, 0.693},
		{"zh recall@8", pi.ByLang["zh"].Recall[8], 0.45},
		{"synonym recall@8", pi.ByKind["synonym"].Recall[8], 0.733},
	} {
		if math.Abs(c.got-c.want) > 0.0005 {
			t.Errorf("pi %s = %.4f, want %.3f", c.name, c.got, c.want)
		}
	}
}

// TestRetrievalQuality holds the toolshelf ranker to the floors it must
// keep on the built-in catalog's query sets: MRR@10 at least 0.80 and
// recall@8 at least 0.75 on Chinese; on the dev set ahead of the
// reference on every kind of query.
func TestRetrievalQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates the suite over the whole corpus; go test without -short runs it")
	}
	for _, name := range []string{"dev", "own"} {
		t.Run(name, func(t *testing.T) {
			ts, pi := set(t, name)
			if ts.Overall.MRR < 0.80 {
				t.Errorf("MRR@10 = %.3f, want >= 0.80", ts.Overall.MRR)
			}
			if r := ts.ByLang["zh"].Recall[8]; r < 0.75 {
				t.Errorf("zh recall@8 = %.3f, want >= 0.75", r)
			}
			if name != "dev" {
				return // per-kind floors hold on the dev set; ours has kinds of 12 queries
			}
			kinds := make([]string, 0, len(ts.ByKind))
			for k := range ts.ByKind {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			for _, k := range kinds {
				a, b := ts.ByKind[k], pi.ByKind[k]
				// A kind both rankers solve perfectly cannot be won.
				if a.Recall[8] < b.Recall[8] || (a.Recall[8] == b.Recall[8] && a.Recall[8] < 1) || a.MRR <= b.MRR {
					t.Errorf("kind %s: toolshelf recall@8 %.3f mrr %.3f, pi %.3f %.3f", k, a.Recall[8], a.MRR, b.Recall[8], b.MRR)
				}
			}
		})
	}
}

// TestSuiteGoals holds the toolshelf ranker to its goals on every set of
// the suite: ahead of the reference everywhere (MRR@10 and recall@8); on
// the dev set MRR@10 at least 0.90 and recall@8 at least 0.99; on the task
// steps' queries no worse than before the suite existed (MRR@10 0.705);
// on the sets written by others, MRR@10 at least 0.02 above the reference
// on MetaTool and above it on Seal-Tools (0.006 today: see the README).
func TestSuiteGoals(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates the suite over the whole corpus; go test without -short runs it")
	}
	floors := map[string]struct{ mrr, recall8, margin float64 }{
		"dev":        {0.90, 0.99, 0},
		"own":        {0.80, 0.95, 0},
		"tasks":      {0.705, 0.88, 0},
		"metatool":   {0.53, 0.70, 0.02},
		"seal-tools": {0.97, 0.99, 0.003},
	}
	reps, err := suiteRun()
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != len(floors) {
		t.Errorf("the suite has %d sets, the test knows %d: give every set a floor", len(reps), len(floors))
	}
	for name, f := range floors {
		ts, pi := set(t, name)
		t.Logf("%s: toolshelf mrr %.3f recall@8 %.3f; pi %.3f %.3f", name, ts.Overall.MRR, ts.Overall.Recall[8],
			pi.Overall.MRR, pi.Overall.Recall[8])
		if ts.Overall.MRR < f.mrr || ts.Overall.Recall[8] < f.recall8 {
			t.Errorf("%s: MRR@10 %.3f, recall@8 %.3f; want at least %.3f and %.3f", name, ts.Overall.MRR,
				ts.Overall.Recall[8], f.mrr, f.recall8)
		}
		if ts.Overall.MRR-pi.Overall.MRR < max(f.margin, 0.0005) || ts.Overall.Recall[8] < pi.Overall.Recall[8] {
			t.Errorf("%s: toolshelf MRR@10 %.3f recall@8 %.3f, pi %.3f %.3f: want MRR at least %.3f above, recall no lower",
				name, ts.Overall.MRR, ts.Overall.Recall[8], pi.Overall.MRR, pi.Overall.Recall[8], f.margin)
		}
	}
}

// TestFactorsGeneralise runs the suite with each factor of the toolshelf
// ranker switched off and checks that every factor helps on at least three
// sets and costs none more than 0.01 MRR@10 — all but the CJK bigrams,
// which no catalog of the suite needs (none has CJK text: they earn
// nothing and cost nothing here; TestFactorSwitches shows what they do).
// It runs 13 rankings over the suite, too slow with the race detector, and
// is skipped there and in -short.
func TestFactorsGeneralise(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("13 rankings over the whole suite: run without -race and -short")
	}
	s, err := eval.LoadSuite(suiteFile)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := s.Load(builtin.Load)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := eval.RunSuite(sets, append(eval.Rankings(nil)[:1], eval.Ablations(nil)...), []int{1, 8})
	if err != nil {
		t.Fatal(err)
	}
	table, err := eval.AblationTable(reps, search.ModeToolshelf)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range table {
		t.Logf("%-14s %+.3f", a.Name, a.Earned)
		switch {
		case a.Factor == search.FactorBigrams:
			if a.HelpsOn() != 0 || a.Worst() != 0 {
				t.Errorf("bigrams earn %+.3f: the suite has CJK tool text now; hold them to the rule", a.Earned)
			}
		case !a.Generalises():
			t.Errorf("%s earns %+.3f: helps on %d sets, worst %+.3f; want at least 3 and no loss over %.2f",
				a.Name, a.Earned, a.HelpsOn(), a.Worst(), eval.Hurts)
		}
	}
}
