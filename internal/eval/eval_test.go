package eval_test

import (
	"math"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/internal/eval"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
)

func TestReadQueriesReportsEveryProblemWithItsLine(t *testing.T) {
	in := strings.Join([]string{
		`{"id":"q1","query":"a","relevant":[{"server":"s","tool":"t"}]}`,
		``,
		`not json`,
		`{"query":"b","relevant":[{"server":"s","tool":"t"}]}`,
		`{"id":"q1","query":"c","relevant":[{"server":"s","tool":"t"}]}`,
		`{"id":"q4","query":" ","relevant":[{"server":"s","tool":"t"}]}`,
		`{"id":"q5","query":"d","relevant":[]}`,
		`{"id":"q6","query":"e","relevant":[{"server":"s"}]}`,
		// Found by FuzzReadQueries: what followed the first object was
		// dropped without a word.
		`{"id":"q7","query":"f","relevant":[{"server":"s","tool":"t"}]} {"id":"q8","query":"g","relevant":[{"server":"s","tool":"t"}]}`,
	}, "\n")
	_, err := eval.ReadQueries(strings.NewReader(in), "qs.jsonl")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"qs.jsonl:3: not a query object",
		`qs.jsonl:4: missing "id"`,
		"qs.jsonl:5: query q1: the id is already used on line 1",
		`qs.jsonl:6: query q4: empty "query"`,
		`qs.jsonl:7: query q5: empty "relevant"`,
		`qs.jsonl:8: query q6: every relevant tool needs "server" and "tool"`,
		"qs.jsonl:9: more than the query object on the line",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := eval.ReadQueries(strings.NewReader("\n\n"), "empty.jsonl"); err == nil || !strings.Contains(err.Error(), "no queries") {
		t.Errorf("empty file: %v", err)
	}
}

// shelf returns four tools of server s: alpha, bravo, charlie, delta, each
// described by its own name only, so the reference ranker finds exactly the
// tools a query names.
func shelf(t *testing.T) *eval.Shelf {
	t.Helper()
	reg := tool.NewRegistry()
	for _, n := range []string{"alpha", "bravo", "charlie", "delta"} {
		if err := reg.Register(tool.Tool{Name: "mcp__s__" + n, Description: n, Exposure: tool.Deferred,
			Origin: tool.Origin{Server: "s", Tool: n}}); err != nil {
			t.Fatal(err)
		}
	}
	// Direct tools are not on the shelf.
	reg.Register(tool.Tool{Name: "echo", Description: "alpha"})
	return eval.NewShelf(reg)
}

func TestEvaluateMetrics(t *testing.T) {
	qs := []eval.Query{
		// "alpha" finds only alpha: rank 1.
		{ID: "q1", Query: "alpha", Lang: "en", Kind: "exact", Relevant: []tool.Origin{{Server: "s", Tool: "alpha"}}},
		// "bravo charlie" finds bravo and charlie (tied, registration
		// order): the relevant charlie is at rank 2.
		{ID: "q2", Query: "bravo charlie", Lang: "zh", Kind: "keyword", Relevant: []tool.Origin{{Server: "s", Tool: "charlie"}}},
		// "delta" finds delta, but only alpha is relevant: no hit.
		{ID: "q3", Query: "delta", Lang: "en", Kind: "keyword", Relevant: []tool.Origin{{Server: "s", Tool: "alpha"}, {Server: "s", Tool: "bravo"}}},
	}
	rep, err := eval.Evaluate(search.NewPI(), shelf(t), qs, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	o := rep.Overall
	if o.N != 3 {
		t.Errorf("N = %d", o.N)
	}
	near("recall@1", o.Recall[1], 1.0/3)
	near("recall@2", o.Recall[2], 2.0/3)
	near("mrr", o.MRR, (1+0.5+0)/3)
	// nDCG@10: q1 1; q2 (1/log2 3)/1; q3 0.
	near("ndcg", o.NDCG10, (1+1/math.Log2(3))/3)
	near("zh mrr", rep.ByLang["zh"].MRR, 0.5)
	near("en recall@1", rep.ByLang["en"].Recall[1], 0.5)
	near("keyword mrr", rep.ByKind["keyword"].MRR, 0.25)
	if got := rep.Queries[1]; got.Rank != 2 || got.Top[0] != "mcp__s__bravo" {
		t.Errorf("q2 result = %+v", got)
	}
	if rep.Ranker != "pi" {
		t.Errorf("Ranker = %q", rep.Ranker)
	}
}

// A labeled tool the shelf lacks makes its query a miss and is named in
// the report; it does not abort the evaluation.
func TestEvaluateNamesUnknownTools(t *testing.T) {
	qs := []eval.Query{
		{ID: "q9", Query: "x", Relevant: []tool.Origin{{Server: "s", Tool: "zulu"}, {Server: "other", Tool: "alpha"}}},
		{ID: "q10", Query: "alpha", Relevant: []tool.Origin{{Server: "s", Tool: "alpha"}}},
	}
	rep, err := eval.Evaluate(search.NewPI(), shelf(t), qs, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Overall.N != 2 || rep.Queries[0].Rank != 0 {
		t.Errorf("n %d, q9 rank %d: want 2 queries, q9 a miss", rep.Overall.N, rep.Queries[0].Rank)
	}
	got := strings.Join(rep.Unlabeled, "\n")
	for _, want := range []string{"query q9: labeled tool s/zulu is not on the shelf", "query q9: labeled tool other/alpha is not on the shelf"} {
		if !strings.Contains(got, want) {
			t.Errorf("unlabeled lacks %q: %v", want, got)
		}
	}
}
