package search_test

import (
	"bufio"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"testing"

	"github.com/toolshelf/toolshelf/search"
)

// tokenCounts holds each document's reference tokens, counted once.
type tokenCounts struct {
	counts map[string]int
	length float64
}

func countTokens(docs []search.Document) []tokenCounts {
	out := make([]tokenCounts, len(docs))
	for i, d := range docs {
		out[i].counts = map[string]int{}
		for _, t := range search.PITokenize(search.PIDocumentText(d)) {
			out[i].counts[t]++
			out[i].length++
		}
	}
	return out
}

// naiveReference ranks like the reference tool_search, the direct way:
// candidates, statistics and BM25 are computed from scratch for every query
// over every candidate, as the reference's code does.
func naiveReference(query string, docs []search.Document, toks []tokenCounts, exclude map[string]bool, limit int) []search.Hit {
	var terms []string
	seen := map[string]bool{}
	for _, t := range search.PITokenize(query) {
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	var cands []search.Document
	var counts []map[string]int
	var lengths []float64
	total := 0.0
	for i, d := range docs {
		if !exclude[d.Name] {
			cands = append(cands, d)
			counts = append(counts, toks[i].counts)
			lengths = append(lengths, toks[i].length)
			total += toks[i].length
		}
	}
	if len(terms) == 0 || len(cands) == 0 || limit <= 0 {
		return nil
	}
	avg := total / float64(len(cands))
	if avg == 0 {
		avg = 1
	}
	const k1, b = 1.2, 0.75
	idf := map[string]float64{}
	for _, t := range terms {
		df := 0
		for _, c := range counts {
			if c[t] > 0 {
				df++
			}
		}
		n := float64(len(cands))
		idf[t] = math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
	}
	var hits []search.Hit
	for i, d := range cands {
		score := 0.0
		for _, t := range terms {
			c := float64(counts[i][t])
			if c == 0 {
				continue
			}
			norm := k1 * (1 - b + b*lengths[i]/avg)
			score += idf[t] * ((c * (k1 + 1)) / (c + norm))
		}
		if score > 0 {
			hits = append(hits, search.Hit{Name: d.Name, Score: score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// TestPIMatchesTheNaiveReference checks, bit for bit, that the indexed
// reference ranker returns what the reference's per-query loop returns, on
// the real corpus and the public dev queries, with and without loaded
// tools excluded.
func TestPIMatchesTheNaiveReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference loop over the whole corpus per query; go test without -short runs it")
	}
	docs := corpusDocs()
	f, err := os.Open("../testdata/dev-queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var queries []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q struct{ Query string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		queries = append(queries, q.Query)
	}
	r := search.NewPI()
	r.Add(docs...)
	toks := countTokens(docs)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range queries {
		q := queries[i]
		var exclude []string
		excl := map[string]bool{}
		if i%2 == 1 {
			for range 30 {
				n := docs[rng.IntN(len(docs))].Name
				exclude = append(exclude, n)
				excl[n] = true
			}
		}
		got := r.Search(search.Query{Text: q, Limit: 8, Exclude: exclude}).Hits
		want := naiveReference(q, docs, toks, excl, 8)
		if len(got) != len(want) {
			t.Errorf("%q: %d hits, want %d", q, len(got), len(want))
			continue
		}
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("%q hit %d: got %+v, want %+v", q, j, got[j], want[j])
				break
			}
		}
	}
}
