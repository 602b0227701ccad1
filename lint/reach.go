package lint

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// Unreachable is a tool that ranks below [Options.K] for every query made
// from its own name and description.
type Unreachable struct {
	// Server and Tool name the tool as its server does; Name is its
	// model-facing name.
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Name   string `json:"name"`
	// BestRank is the tool's best rank over its queries, counting from 1;
	// 0 when it is not among the first [SearchDepth] hits of any.
	BestRank int `json:"best_rank"`
	// BestQuery is the query of the best rank (the first query when the
	// tool ranks for none).
	BestQuery string `json:"best_query"`
	// Outranked are the model-facing names ranked above the tool for the
	// best query, best first, at most K of them.
	Outranked []string `json:"outranked"`
	// Queries are every query tried, with the tool's rank.
	Queries []QueryRank `json:"queries"`
}

// QueryRank is one query made from a tool and the tool's rank for it.
type QueryRank struct {
	// Kind says where the query came from: name or description.
	Kind string `json:"kind"`
	// Query is the query text.
	Query string `json:"query"`
	// Rank is the tool's rank, counting from 1; 0 when it is not among
	// the first [SearchDepth] hits.
	Rank int `json:"rank"`
}

// SearchDepth is how many hits a retrievability query looks at to find a
// tool's rank.
const SearchDepth = 50

// maxQueryWords bounds a query made from a description: a user's request
// names a few things, not a whole sentence.
const maxQueryWords = 8

// queries returns the queries a tool should be found by:
//
//   - name: the words of its name without a leading server name
//     (list_pull_requests gives "list pull requests", hubspot-list-objects
//     gives "list objects");
//   - description: the first sentence's first eight words that are not
//     stop words ("Get details of a specific issue" gives "get details
//     specific issue").
//
// A tool whose name or description is empty gets no query of that kind.
func queries(en *entry) []QueryRank {
	var out []QueryRank
	serverWords := map[string]bool{}
	for _, w := range splitWords(en.server.Name) {
		serverWords[w] = true
	}
	ws := splitWords(en.e.Name)
	for len(ws) > 1 && serverWords[ws[0]] {
		ws = ws[1:]
	}
	if len(ws) > 0 {
		out = append(out, QueryRank{Kind: "name", Query: strings.Join(ws, " ")})
	}
	if ss := sentences(en.e.Description); len(ss) > 0 {
		var content []string
		for _, w := range splitWords(ss[0]) {
			if len(content) == maxQueryWords {
				break
			}
			if !stopWords[w] {
				content = append(content, w)
			}
		}
		if len(content) > 0 {
			out = append(out, QueryRank{Kind: "description", Query: strings.Join(content, " ")})
		}
	}
	return out
}

// reachability indexes the pool with the default ranker, as tool_search
// would hold it, runs every tool's queries and returns the tools that rank
// in the top K for none of them. It reports each as a finding too.
//
// One query in the top K is enough: a model that knows the tool's name
// words or the gist of its description can load it. A tool that fails both
// is hidden behind others that claim the same words.
func (l *linter) reachability(pool []*entry) ([]Unreachable, error) {
	ranker, err := search.NewBM25F(nil)
	if err != nil {
		return nil, err
	}
	docs := make([]search.Document, len(pool))
	for i, en := range pool {
		docs[i] = toolsearch.Document(en.tool)
	}
	ranker.Add(docs...)

	type job struct {
		tool, query int
	}
	qs := make([][]QueryRank, len(pool))
	hits := make([][][]search.Hit, len(pool))
	var jobs []job
	for i, en := range pool {
		qs[i] = queries(en)
		hits[i] = make([][]search.Hit, len(qs[i]))
		for j := range qs[i] {
			jobs = append(jobs, job{i, j})
		}
	}
	next := make(chan job)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(jobs), 1)) {
		wg.Go(func() {
			for jb := range next {
				res := ranker.Search(search.Query{Text: qs[jb.tool][jb.query].Query, Limit: SearchDepth})
				hits[jb.tool][jb.query] = res.Hits
			}
		})
	}
	for _, jb := range jobs {
		next <- jb
	}
	close(next)
	wg.Wait()

	k := l.opts.K
	var out []Unreachable
	for i, en := range pool {
		if len(qs[i]) == 0 {
			continue
		}
		best := -1
		for j := range qs[i] {
			qs[i][j].Rank = 0
			for r, h := range hits[i][j] {
				if h.Name == en.tool.Name {
					qs[i][j].Rank = r + 1
					break
				}
			}
			if rank := qs[i][j].Rank; rank > 0 && (best < 0 || rank < qs[i][best].Rank) {
				best = j
			}
		}
		if best >= 0 && qs[i][best].Rank <= k {
			continue
		}
		u := Unreachable{Server: en.server.Name, Tool: en.e.Name, Name: en.tool.Name, Queries: qs[i]}
		bq := max(best, 0)
		u.BestQuery = qs[i][bq].Query
		if best >= 0 {
			u.BestRank = qs[i][best].Rank
		}
		for _, h := range hits[i][bq] {
			if h.Name == en.tool.Name || len(u.Outranked) == k {
				break
			}
			u.Outranked = append(u.Outranked, h.Name)
		}
		out = append(out, u)
		rank := "outside the first " + fmt.Sprint(SearchDepth)
		if u.BestRank > 0 {
			rank = fmt.Sprintf("%d", u.BestRank)
		}
		l.add(RuleUnreachable, en, "",
			fmt.Sprintf("no query made from the tool reaches the top %d: its best rank is %s, for %q, below %s",
				k, rank, u.BestQuery, listNames(u.Outranked, 3)),
			"put the words a user would search for in the name and the first sentence, and say what sets the tool apart from those that outrank it")
	}
	slices.SortStableFunc(out, func(a, b Unreachable) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Tool, b.Tool))
	})
	return out, nil
}
