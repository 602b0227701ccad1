package eval_test

import (
	"bytes"
	"math"
	"os"
	"sort"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/internal/eval"
	"github.com/toolshelf/toolshelf/search"
)

// suiteFile is the repository's suite: the public dev queries, our own
// queries, the task steps' queries and the sets written by others.
const suiteFile = "../../testdata/suite.json"

// suiteRun evaluates the whole suite once per test binary: the default
// ranker and the reference on the whole of each set, and those two, the
// base (every factor off) and the left-out folds, in that order, on its
// test half.
var suiteRun = sync.OnceValues(func() (map[string][2]*eval.SetReport, error) {
	s, err := eval.LoadSuite(suiteFile)
	if err != nil {
		return nil, err
	}
	sets, err := s.Load(builtin.Load)
	if err != nil {
		return nil, err
	}
	w, err := search.FittedWeights()
	if err != nil {
		return nil, err
	}
	all, err := eval.RunSuite(sets, eval.Rankings(nil), []int{1, 8})
	if err != nil {
		return nil, err
	}
	halves := make([]*eval.LoadedSet, len(sets))
	for i, s := range sets {
		halves[i] = s.Half(eval.FitSeed, false)
	}
	rankings := append(eval.Rankings(nil), eval.BaseRanking(), eval.FoldRanking(w, nil))
	test, err := eval.RunSuite(halves, rankings, []int{1, 8})
	if err != nil {
		return nil, err
	}
	out := map[string][2]*eval.SetReport{}
	for i, r := range all {
		out[r.Name] = [2]*eval.SetReport{r, test[i]}
	}
	return out, nil
})

// set returns both rankers' reports on the whole of the named set.
func set(t *testing.T, name string) (toolshelf, pi *eval.Report) {
	t.Helper()
	r := setReports(t, name)[0]
	return r.Reports[0], r.Reports[1]
}

// setReports returns the named set's reports on all of it and on its
// test half.
func setReports(t *testing.T, name string) [2]*eval.SetReport {
	t.Helper()
	reps, err := suiteRun()
	if err != nil {
		t.Fatal(err)
	}
	r, ok := reps[name]
	if !ok {
		t.Fatalf("the suite has no set %q", name)
	}
	return r
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

// TestSuiteGoals holds the rankers to what they reach on the test half of
// every set of the suite: the base (every factor off) and the left-out
// folds no lower than the reference; the default at least 0.02 MRR@10
// above the reference, or at 0.97 or more where both are near the
// ceiling, on every set but API-Bank and ToolAlpaca, where it is ahead by
// less (the README's Retrieval quality); floors on our own sets below the
// goals they miss (dev MRR@10 0.90 and recall@8 0.99, task steps 0.707).
func TestSuiteGoals(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates the suite over the whole corpus; go test without -short runs it")
	}
	reps, err := suiteRun()
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) < 10 {
		t.Errorf("the suite has %d sets: want our three and at least seven written by others", len(reps))
	}
	margins := map[string]float64{"api-bank": 0.005, "toolalpaca": 0.005}
	floors := map[string]struct{ mrr, recall8 float64 }{"dev": {0.85, 0.95}, "own": {0.80, 0.94}, "tasks": {0.68, 0.86}}
	for name, r := range reps {
		test := r[1]
		ts, pi := test.Report(search.ModeToolshelf).Overall, test.Report(search.ModePI).Overall
		base := test.Report(eval.RankingBase).Overall
		t.Logf("%s: toolshelf %.3f, pi %.3f, base %.3f", name, ts.MRR, pi.MRR, base.MRR)
		margin, ok := margins[name]
		if !ok {
			margin = 0.02
		}
		if ts.MRR < pi.MRR+margin && ts.MRR < 0.97 {
			t.Errorf("%s: toolshelf MRR@10 %.3f, pi %.3f: want %.3f above, or 0.97", name, ts.MRR, pi.MRR, margin)
		}
		if base.MRR < pi.MRR {
			t.Errorf("%s: the base's MRR@10 %.4f is below pi's %.4f", name, base.MRR, pi.MRR)
		}
		if fold := test.Report(eval.RankingFold); fold == nil {
			t.Errorf("%s: no left-out fold in the weights file: run toolshelf eval --fit", name)
		} else if fold.Overall.MRR < pi.MRR {
			t.Errorf("%s: the left-out fold's MRR@10 %.3f is below pi's %.3f", name, fold.Overall.MRR, pi.MRR)
		}
		if f, ok := floors[name]; ok && (ts.MRR < f.mrr || ts.Recall[8] < f.recall8) {
			t.Errorf("%s: MRR@10 %.3f, recall@8 %.3f; want at least %.3f and %.3f", name, ts.MRR, ts.Recall[8], f.mrr, f.recall8)
		}
	}
}

// TestFitReproducesWeights runs the fitting command's fit on the suite and
// checks that it writes the embedded weights file byte for byte, and that
// every factor the default keeps passed the leave-one-set-out rule. It
// takes minutes: skipped with the race detector and in -short (.ci/run
// runs it without the race detector).
func TestFitReproducesWeights(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("fits the weights on the whole suite: run without -race and -short")
	}
	s, err := eval.LoadSuite(suiteFile)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := s.Load(builtin.Load)
	if err != nil {
		t.Fatal(err)
	}
	f, err := eval.FitSuite(sets, eval.FitSeed, "testdata/suite.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Weights.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../search/weights.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the fit does not reproduce search/weights.json: got\n%s\nwant\n%s", got, want)
	}
	for _, v := range f.Verdicts {
		t.Logf("%-14s %+.3f stays %v", v.Name, v.Earned, v.Stays())
		if v.Stays() == search.DefaultDisable().Has(v.Factor) {
			t.Errorf("%s: stays %v, but the default has it off %v", v.Name, v.Stays(), search.DefaultDisable().Has(v.Factor))
		}
	}
}
