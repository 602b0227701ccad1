package search

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"
)

// analyzeOne analyses one document as the toolshelf ranker's Add does,
// with serverText as the servers' analysed text, and returns the analysis
// and the term of each of its postings.
func analyzeOne(r *BM25F, d Document, serverText map[string][]string) (docAnalysis, []string) {
	w := newTermWorker(0)
	w.res = &chunkResult{}
	var a docAnalysis
	w.beginDoc()
	r.analyze(w, d, serverText, &a)
	a.posts = w.endDoc()
	terms := make([]string, len(a.posts))
	for i, p := range a.posts {
		terms[i] = w.res.newTerms[p.term]
	}
	return a, terms
}

// buildOracleDocs are documents for TestBuildOracle: a spread of the
// built-in catalog, then documents that replace some of them (one twice in
// the same call), and odd ones: no name, a schema that is not JSON, CJK
// text, servers whose texts differ only around a NUL.
func buildOracleDocs(tb testing.TB) []Document {
	docs := fuzzDocs(tb, 2000)
	for i := 0; i < len(docs); i += 97 {
		d := docs[i]
		d.Description = "Replaced: " + d.Description + " and more words"
		docs = append(docs, d)
		if i%2 == 0 {
			d.Description = "Replaced again " + fmt.Sprint(i)
			docs = append(docs, d)
		}
	}
	docs = append(docs,
		Document{},
		Document{Name: "bad_schema", Description: "Takes broken parameters.", Parameters: []byte(`{"properties":`)},
		Document{Name: "cjk_tool", Description: "列出 Kubernetes 集群里所有的 pod。Slackにメッセージを送る",
			Namespace: Namespace{Name: "mcp__cjk", Description: "노션에 페이지 만들기"}},
		Document{Name: "nul_a", Namespace: Namespace{Name: "n1", Description: "a\x00b", Instructions: "c"}},
		Document{Name: "nul_b", Namespace: Namespace{Name: "n2", Description: "a", Instructions: "b\x00c"}},
	)
	return docs
}

// indexState is what a built index holds, for comparing builds.
type indexState struct {
	Slots     []docSlot
	Lens      [][maxFields]uint32
	ByName    map[string]int32
	Free      []int32
	Live      int
	Seq       uint64
	TermID    map[string]int32
	Lists     [][]posting
	SumLen    [maxFields]float64
	Docs      []docMeta
	Exact     map[string][]int32
	NameWords map[string][]int32
	ShortKeys map[string][]int32
	NameTerms []uint8
	Families  map[string][]string
	Wlen      []float32
}

func postingsState(p *postings) indexState {
	return indexState{Slots: p.slots, Lens: p.lens, ByName: p.byName, Free: p.free, Live: p.live, Seq: p.seq,
		TermID: p.termID, Lists: p.lists, SumLen: p.sumLen}
}

func bm25fState(r *BM25F) indexState {
	s := postingsState(r.idx)
	s.Docs, s.Exact, s.NameWords, s.ShortKeys = r.docs, asMap(r.exact), asMap(r.nameWords), asMap(r.shortKeys)
	s.NameTerms, s.Families, s.Wlen = r.nameTerms, r.families, r.wlen
	return s
}

// asMap returns the lists of m as a map of slices.
func asMap(m slotLists) map[string][]int32 {
	out := make(map[string][]int32)
	for k, slots := range m.all() {
		out[k] = slots
	}
	return out
}

// diffState names the first part of two index states that differs.
func diffState(a, b indexState) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return va.Type().Field(i).Name
		}
	}
	return ""
}

// buildOracleQueries are searched in both indexes of TestBuildOracle.
var buildOracleQueries = []string{
	"github list pull requests", "kubernetes pod logs", "take a screenshot of the current browser tab",
	"create_pull_request", "select:browser_navigate,browser_click", "+gitlab merge request",
	"列出 Kubernetes 集群里所有的 pod", "xyzzy plugh", "replaced again",
}

// TestBuildOracle builds indexes with Add, all documents at once on
// several goroutines and one document per call, and with the former
// sequential build (build_oracle_test.go), then removes and re-adds some
// documents in each: the indexes must hold the same state, term ids and
// posting order included, and answer the same.
func TestBuildOracle(t *testing.T) {
	// More workers than processors, so that chunks finish out of order.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	docs := buildOracleDocs(t)
	removed := []string{docs[3].Name, docs[500].Name, "nul_a", "no_such_tool"}
	again := []Document{docs[500], docs[7], docs[3]}
	disables := []Factor{0, FactorsAll, FactorStemming, FactorJoined | FactorBigrams,
		FactorIdentifiers, FactorSchemaText | FactorStopWords, FactorBilingual | FactorSynonyms}
	if testing.Short() {
		disables = disables[:2]
	}
	for _, disable := range disables {
		t.Run(fmt.Sprintf("toolshelf/disable=%#x", uint32(disable)), func(t *testing.T) {
			newRanker := func() *BM25F {
				r, err := NewBM25F(&Options{Disable: disable})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			oracle, all, one := newRanker(), newRanker(), newRanker()
			oracle.oracleAdd(docs...)
			all.Add(docs...)
			for _, d := range docs {
				one.Add(d)
			}
			compare := func(stage string) {
				want := bm25fState(oracle)
				for name, r := range map[string]*BM25F{"all at once": all, "one at a time": one} {
					if d := diffState(bm25fState(r), want); d != "" {
						t.Fatalf("%s, built %s: %s differs from the sequential build's", stage, name, d)
					}
					for _, q := range buildOracleQueries {
						got, want := r.Search(Query{Text: q, Limit: 8}), oracle.Search(Query{Text: q, Limit: 8})
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("%s, built %s: %q finds %+v, the sequential build %+v", stage, name, q, got, want)
						}
					}
				}
			}
			compare("built")
			for _, r := range []*BM25F{oracle, all, one} {
				r.Remove(removed...)
			}
			oracle.oracleAdd(again...)
			all.Add(again...)
			for _, d := range again {
				one.Add(d)
			}
			compare("after removing and adding again")
		})
	}
	t.Run("pi", func(t *testing.T) {
		oracle, all, one := NewPI(), NewPI(), NewPI()
		oracle.oracleAdd(docs...)
		all.Add(docs...)
		for _, d := range docs {
			one.Add(d)
		}
		for _, r := range []*PI{oracle, all, one} {
			r.Remove(removed...)
		}
		oracle.oracleAdd(again...)
		all.Add(again...)
		one.Add(again...)
		for name, r := range map[string]*PI{"all at once": all, "one at a time": one} {
			if d := diffState(postingsState(r.idx), postingsState(oracle.idx)); d != "" {
				t.Fatalf("built %s: %s differs from the sequential build's", name, d)
			}
			for _, q := range buildOracleQueries {
				got, want := r.Search(Query{Text: q, Limit: 8}), oracle.Search(Query{Text: q, Limit: 8})
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("built %s: %q finds %+v, the sequential build %+v", name, q, got, want)
				}
			}
		}
	})
}

// TestDeferredBuild holds a build large enough to defer its postings
// (deferDocs or more documents) to one that adds its documents one at a
// time: the same state, term ids and posting order included, and the same
// answers. The large build reuses free slots, replaces documents an
// earlier build added, and adds some names twice, the later one to keep.
// It runs on more workers than processors, flush's included.
func TestDeferredBuild(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(maxFlushWorkers + 1))
	docs := copiedDocs(t, 4)
	var removed []string
	for i := 0; i < 1000; i += 7 {
		removed = append(removed, docs[i].Name)
	}
	batch := slices.Clone(docs[1000:])
	for i := 0; i < 1000; i += 11 {
		d := docs[i] // an earlier document, or a removed one's name
		d.Description = "Replaced from before: " + d.Description
		batch = append(batch, d)
	}
	for i := 1000; i < len(docs); i += 13 {
		d := docs[i] // a name the batch already has
		d.Description = "Replaced in the same build " + fmt.Sprint(i)
		batch = append(batch, d)
	}
	if len(batch) < deferDocs {
		t.Fatalf("the batch has %d documents; it must have %d to defer its postings", len(batch), deferDocs)
	}
	build := func(oneByOne bool) *BM25F {
		r, err := NewBM25F(nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Add(docs[:1000]...)
		r.Remove(removed...)
		if !oneByOne {
			r.Add(batch...)
			return r
		}
		for _, d := range batch {
			r.Add(d)
		}
		return r
	}
	deferred, one := build(false), build(true)
	checkListsSorted(t, deferred.idx)
	if d := diffState(bm25fState(deferred), bm25fState(one)); d != "" {
		t.Fatalf("the deferred build's %s differs from adding one document at a time", d)
	}
	for _, q := range append(buildOracleQueries, "replaced in the same build", "replaced from before") {
		got, want := deferred.Search(Query{Text: q, Limit: 8}), one.Search(Query{Text: q, Limit: 8})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q finds %+v after the deferred build, %+v after one at a time", q, got, want)
		}
	}
}
