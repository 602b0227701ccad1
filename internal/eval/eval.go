package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// Query is one labeled search query.
type Query struct {
	// ID names the query in reports.
	ID string `json:"id"`
	// Query is the search text.
	Query string `json:"query"`
	// Lang is the query's language, such as en or zh.
	Lang string `json:"lang"`
	// Kind is the query's class, such as keyword, synonym or exact.
	Kind string `json:"kind,omitempty"`
	// Relevant lists every tool that satisfies the query.
	Relevant []tool.Origin `json:"relevant"`
}

// ReadQueries reads labeled queries, one JSON object per line; name is the
// source's name for messages. Blank lines are skipped. Every problem is
// reported with its line; no query is returned unless all are valid.
func ReadQueries(r io.Reader, name string) ([]Query, error) {
	var qs []Query
	ids := make(map[string]int)
	err := readJSONLines(r, name, "query", func(n int, q Query, bad func(string, ...any)) {
		switch {
		case q.ID == "":
			bad(`missing "id"`)
		case strings.TrimSpace(q.Query) == "":
			bad("query %s: empty \"query\"", q.ID)
		case len(q.Relevant) == 0:
			bad("query %s: empty \"relevant\": list the tools that satisfy it as {\"server\": ..., \"tool\": ...}", q.ID)
		default:
			if prev, dup := ids[q.ID]; dup {
				bad("query %s: the id is already used on line %d", q.ID, prev)
				return
			}
			ids[q.ID] = n
			if slices.ContainsFunc(q.Relevant, func(o tool.Origin) bool { return o.Server == "" || o.Tool == "" }) {
				bad("query %s: every relevant tool needs \"server\" and \"tool\"", q.ID)
				return
			}
			if q.Lang == "" {
				q.Lang = "en"
			}
			qs = append(qs, q)
		}
	})
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no queries", name)
	}
	return qs, nil
}

// readJSONLines decodes one JSON object of type T from each non-blank line
// of r (what names it in messages, name the source) and calls each with
// the line's number, the object and a function that reports a problem on
// that line. Every problem is reported, with its line, in one joined
// error; a line that is not one object is a problem and is not passed on.
func readJSONLines[T any](r io.Reader, name, what string, each func(n int, v T, bad func(string, ...any))) error {
	var errs []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s:%d: %s", name, n, fmt.Sprintf(format, args...)))
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(line))
		if err := dec.Decode(&v); err != nil {
			bad("not a %s object: %v", what, err)
			continue
		}
		if dec.InputOffset() < int64(len(line)) {
			bad("more than the %s object on the line: write one %s per line", what, what)
			continue
		}
		each(n, v, bad)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	return errors.Join(errs...)
}

// LoadQueries reads labeled queries from a file.
func LoadQueries(path string) ([]Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadQueries(f, path)
}

// Shelf is the set of tools an evaluation searches: the loadable tools of a
// registry, as search documents, with their server identities.
type Shelf struct {
	// Docs are the tools' search documents, in registration order.
	Docs   []search.Document
	byName map[tool.Origin]string
}

// NewShelf collects reg's loadable (deferred and codemode) tools.
func NewShelf(reg *tool.Registry) *Shelf {
	s := &Shelf{byName: make(map[tool.Origin]string)}
	for _, t := range reg.Tools() {
		if !t.Exposure.Loadable() {
			continue
		}
		s.Docs = append(s.Docs, toolsearch.Document(t))
		if !t.Origin.IsZero() {
			s.byName[t.Origin] = t.Name
		}
	}
	return s
}

// resolve maps every query's labels to model-facing names.
func (s *Shelf) resolve(qs []Query) ([][]string, []error) {
	out := make([][]string, len(qs))
	var missing []error
	for i, q := range qs {
		for _, o := range q.Relevant {
			name, ok := s.byName[o]
			if !ok {
				missing = append(missing, fmt.Errorf("query %s: labeled tool %s is not on the shelf (refused or missing from the catalogs); the query can only miss it",
					q.ID, o))
				continue
			}
			out[i] = append(out[i], name)
		}
	}
	return out, missing
}

// Metrics are retrieval scores over a set of queries.
type Metrics struct {
	// N is the number of queries.
	N int `json:"n"`
	// Recall maps k to recall@k: the share of queries with at least one
	// relevant tool among the first k hits.
	Recall map[int]float64 `json:"recall"`
	// MRR is the mean reciprocal rank of the first relevant hit among the
	// first ten (MRR@10; 0 when none is there).
	MRR float64 `json:"mrr"`
	// NDCG10 is the mean normalised discounted cumulative gain of the first
	// ten hits, with binary relevance.
	NDCG10 float64 `json:"ndcg10"`
}

// QueryResult is how one query fared.
type QueryResult struct {
	// ID, Lang and Kind repeat the query's.
	ID   string `json:"id"`
	Lang string `json:"lang"`
	Kind string `json:"kind,omitempty"`
	// Rank is the 1-based rank of the first relevant hit, 0 if none.
	Rank int `json:"rank"`
	// Top lists the first hits.
	Top []string `json:"top"`
}

// Report is one ranker's evaluation.
type Report struct {
	// Ranker is the ranker's mode name.
	Ranker string `json:"ranker"`
	// Overall sums up every query.
	Overall Metrics `json:"overall"`
	// ByLang and ByKind sum up the queries of each language and kind,
	// ByLength those of each [LengthKind].
	ByLang   map[string]Metrics `json:"by_lang"`
	ByKind   map[string]Metrics `json:"by_kind"`
	ByLength map[string]Metrics `json:"by_length"`
	// Queries lists how each query fared, in file order.
	Queries []QueryResult `json:"queries"`
	// Unlabeled names the labeled tools the shelf lacks, one line each.
	Unlabeled []string `json:"unlabeled,omitempty"`
}

// Query lengths, as [LengthKind] names them.
const (
	// LengthShort is a query of at most [ShortWords] words: what a model
	// types into a search box.
	LengthShort = "short"
	// LengthLong is a longer query: a user's request.
	LengthLong = "long"
)

// ShortWords is the most words of a short query.
const ShortWords = 6

// LengthKind classes a query by its number of space-separated words; a
// CJK query counts its characters by two, about one word per two.
func LengthKind(q string) string {
	n := 0
	for _, w := range strings.Fields(q) {
		cjk := 0
		for _, r := range w {
			if r >= 0x2E80 {
				cjk++
			}
		}
		n += max(1, (cjk+1)/2)
	}
	if n <= ShortWords {
		return LengthShort
	}
	return LengthLong
}

// Depth is how many hits are ranked per query: the deepest recall@k
// cut-off, and the rank reported for a query's first relevant hit.
const Depth = 100

// cutoff is the depth of MRR and nDCG.
const cutoff = 10

// DefaultKs returns the cut-offs reported by default.
func DefaultKs() []int { return []int{1, 3, 5, 8, 10} }

// topShown is how many hits a QueryResult lists.
const topShown = 5

// Evaluate indexes the shelf in ranker (which should be empty) and runs
// every query, returning recall@k for each k, MRR@10 and nDCG@10 overall,
// per language, per kind and per length. A labeled tool that is not on the
// shelf (the catalog's server refused it, or no catalog has it) cannot be
// found: its query counts what the other labels earn, a miss when it has
// none, and the report names it in Unlabeled.
func Evaluate(ranker search.Ranker, shelf *Shelf, qs []Query, ks []int) (*Report, error) {
	relevant, missing := shelf.resolve(qs)
	ranker.Add(shelf.Docs...)
	rep := &Report{Ranker: ranker.Name(), ByLang: map[string]Metrics{}, ByKind: map[string]Metrics{}, ByLength: map[string]Metrics{}}
	for _, m := range missing {
		rep.Unlabeled = append(rep.Unlabeled, m.Error())
	}
	type acc struct {
		n        int
		hits     map[int]int
		rr, ndcg float64
	}
	accs := map[string]*acc{}
	add := func(key string, hitK map[int]bool, rr, ndcg float64) {
		a := accs[key]
		if a == nil {
			a = &acc{hits: map[int]int{}}
			accs[key] = a
		}
		a.n++
		a.rr += rr
		a.ndcg += ndcg
		for k, h := range hitK {
			if h {
				a.hits[k]++
			}
		}
	}
	for i, q := range qs {
		res := ranker.Search(search.Query{Text: q.Query, Limit: Depth})
		names := make([]string, len(res.Hits))
		for j, h := range res.Hits {
			names[j] = h.Name
		}
		rank := 0
		for j, n := range names {
			if slices.Contains(relevant[i], n) {
				rank = j + 1
				break
			}
		}
		hitK := map[int]bool{}
		for _, k := range ks {
			hitK[k] = rank > 0 && rank <= k
		}
		rr := 0.0
		if rank > 0 && rank <= cutoff {
			rr = 1 / float64(rank)
		}
		nd := ndcg(names, relevant[i], cutoff)
		add("", hitK, rr, nd)
		add("lang:"+q.Lang, hitK, rr, nd)
		if q.Kind != "" {
			add("kind:"+q.Kind, hitK, rr, nd)
		}
		add("len:"+LengthKind(q.Query), hitK, rr, nd)
		rep.Queries = append(rep.Queries, QueryResult{ID: q.ID, Lang: q.Lang, Kind: q.Kind, Rank: rank,
			Top: names[:min(len(names), topShown)]})
	}
	metrics := func(a *acc) Metrics {
		m := Metrics{N: a.n, Recall: map[int]float64{}, MRR: a.rr / float64(a.n), NDCG10: a.ndcg / float64(a.n)}
		for _, k := range ks {
			m.Recall[k] = float64(a.hits[k]) / float64(a.n)
		}
		return m
	}
	for key, a := range accs {
		switch {
		case key == "":
			rep.Overall = metrics(a)
		case strings.HasPrefix(key, "lang:"):
			rep.ByLang[strings.TrimPrefix(key, "lang:")] = metrics(a)
		case strings.HasPrefix(key, "len:"):
			rep.ByLength[strings.TrimPrefix(key, "len:")] = metrics(a)
		default:
			rep.ByKind[strings.TrimPrefix(key, "kind:")] = metrics(a)
		}
	}
	return rep, nil
}

// ndcg is the normalised DCG of the first k names with binary relevance.
func ndcg(names, relevant []string, k int) float64 {
	dcg := 0.0
	for i, n := range names[:min(k, len(names))] {
		if slices.Contains(relevant, n) {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	ideal := 0.0
	for i := range min(k, len(dedupe(relevant))) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

func dedupe(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return slices.Compact(out)
}
