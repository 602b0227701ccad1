package search_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// benchSizes are the catalog sizes the benchmarks index.
var benchSizes = []int{1000, 10000, 100000}

// benchSeed seeds the description perturbation ("toolshel").
const benchSeed = 0x746f6f6c7368656c

// benchQueries are the queries BenchmarkSearch cycles through: keyword and
// natural-language requests, exact tool names, select: lists, required
// +terms and Chinese requests.
var benchQueries = []string{
	// keywords
	"github list pull requests",
	"kubernetes pod logs",
	"slack send message",
	"stripe refund payment",
	"grafana loki query",
	"notion database query",
	"jira transition issue",
	"postgres run sql",
	"azure storage blob list",
	"datadog incident",
	"figma export image",
	"redis get key",
	// natural language
	"take a screenshot of the current browser tab",
	"show me the failing checks on my latest GitHub pull request",
	"create a new branch in the GitLab repository from main",
	"search the web for recent news about Go generics",
	"find all unresolved Sentry errors from the last day",
	"add a comment to the Linear issue about the login bug",
	"restart the deployment in the staging namespace",
	"upload a file to Google Drive and share it with the team",
	"which Cloudflare workers were deployed this week",
	"list the indexes in my Pinecone project",
	// exact tool names
	"browser_take_screenshot",
	"create_pull_request",
	"mcp__kubernetes__kubectl_logs",
	"slack_post_message",
	"API-post-search",
	// select:
	"select:browser_navigate,browser_click",
	"select:create_issue,add_issue_comment",
	"select:kubectl_get,kubectl_describe,kubectl_logs",
	// required terms
	"+gitlab merge request",
	"create +ticket",
	"+azure list virtual machines",
	"+supabase migration",
	// Chinese
	"列出 Kubernetes 集群里所有的 pod",
	"在 GitHub 仓库里新建一个 issue",
	"给 Slack 频道发送一条消息",
	"查询 Grafana 仪表盘",
	"删除 Stripe 客户",
	"搜索 Notion 页面",
}

// benchCorpus is the builtin catalog as search documents, with the
// vocabulary of its descriptions.
type benchCorpus struct {
	docs  []search.Document
	tools []string // the tool's name on its server, by doc
	vocab []string // distinct description words, sorted
}

var loadBenchCorpus = sync.OnceValues(func() (*benchCorpus, error) {
	servers, err := builtin.Servers()
	if err != nil {
		return nil, err
	}
	c := &benchCorpus{}
	namer := tool.NewNamer()
	words := make(map[string]bool)
	for _, s := range servers {
		for _, t := range s.AsTools(namer, tool.Deferred) {
			c.docs = append(c.docs, toolsearch.Document(t))
			c.tools = append(c.tools, t.Origin.Tool)
			for _, w := range strings.Fields(t.Description) {
				w = strings.Trim(w, ".,;:!?()[]{}\"'`*")
				if len(w) >= 2 && strings.ContainsFunc(w, benchIsLetter) {
					words[w] = true
				}
			}
		}
	}
	for w := range words {
		c.vocab = append(c.vocab, w)
	}
	slices.Sort(c.vocab)
	return c, nil
})

func benchIsLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f }

// synthDoc returns document i of the synthetic catalog: corpus tool
// i % len(corpus); from the second copy on, on a server of its own
// ("github-2") with about a fifth of its description's words replaced by
// corpus words. Document i is the same whatever the catalog's size.
func (c *benchCorpus) synthDoc(i int) search.Document {
	base := c.docs[i%len(c.docs)]
	k := i / len(c.docs)
	if k == 0 {
		return base
	}
	d := base
	short := strings.TrimPrefix(base.Name, base.Namespace.Name+"__")
	d.Namespace.Name = fmt.Sprintf("%s_%d", base.Namespace.Name, k)
	d.Name = d.Namespace.Name + "__" + short
	d.OriginalName = c.tools[i%len(c.docs)]
	rng := rand.New(rand.NewPCG(benchSeed, uint64(i)))
	d.Description = benchPerturb(base.Description, c.vocab, rng)
	return d
}

// benchPerturb replaces each whitespace-separated word of text by a random
// vocabulary word with probability 1/5, keeping the whitespace.
func benchPerturb(text string, vocab []string, rng *rand.Rand) string {
	var b strings.Builder
	b.Grow(len(text) + len(text)/8)
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && isSpace(text[j]) {
			j++
		}
		b.WriteString(text[i:j])
		i = j
		for j < len(text) && !isSpace(text[j]) {
			j++
		}
		if j > i {
			if rng.IntN(5) == 0 {
				b.WriteString(vocab[rng.IntN(len(vocab))])
			} else {
				b.WriteString(text[i:j])
			}
		}
		i = j
	}
	return b.String()
}

// benchDocsCache holds the synthetic documents generated so far; smaller
// catalogs are prefixes of larger ones.
var benchDocsCache struct {
	sync.Mutex
	docs []search.Document
}

// benchDocs returns the first n synthetic documents.
func benchDocs(tb testing.TB, n int) []search.Document {
	tb.Helper()
	c, err := loadBenchCorpus()
	if err != nil {
		tb.Fatal(err)
	}
	benchDocsCache.Lock()
	defer benchDocsCache.Unlock()
	for i := len(benchDocsCache.docs); i < n; i++ {
		benchDocsCache.docs = append(benchDocsCache.docs, c.synthDoc(i))
	}
	return benchDocsCache.docs[:n:n]
}

func benchRanker(tb testing.TB, mode string) search.Ranker {
	tb.Helper()
	r, err := search.New(mode, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// benchIndexes holds the indexes built for BenchmarkSearch, shared by its
// sub-benchmarks (and runs of -count) since the large ones take seconds to
// build. Benchmarks that change an index build their own.
var benchIndexes struct {
	sync.Mutex
	m map[string]search.Ranker
}

// benchIndex returns a shared index of the first n synthetic documents.
func benchIndex(tb testing.TB, mode string, n int) search.Ranker {
	tb.Helper()
	docs := benchDocs(tb, n)
	benchIndexes.Lock()
	defer benchIndexes.Unlock()
	key := fmt.Sprintf("%s/%d", mode, n)
	if r, ok := benchIndexes.m[key]; ok {
		return r
	}
	r := benchRanker(tb, mode)
	r.Add(docs...)
	if benchIndexes.m == nil {
		benchIndexes.m = make(map[string]search.Ranker)
	}
	benchIndexes.m[key] = r
	return r
}

func TestBenchCorpus(t *testing.T) {
	t.Parallel()
	c, err := loadBenchCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.docs) != 1564 {
		t.Errorf("corpus has %d tools, want 1564", len(c.docs))
	}
	n := 3 * len(c.docs)
	docs := benchDocs(t, n)
	names := make(map[string]bool, n)
	replaced, total := 0, 0
	for i, d := range docs {
		if names[d.Name] {
			t.Fatalf("doc %d: duplicate name %s", i, d.Name)
		}
		names[d.Name] = true
		if again := c.synthDoc(i); again.Name != d.Name || again.Description != d.Description {
			t.Fatalf("doc %d is not deterministic", i)
		}
		base := c.docs[i%len(c.docs)]
		if i < len(c.docs) {
			if d.Name != base.Name || d.Description != base.Description {
				t.Fatalf("doc %d differs from corpus tool %s", i, base.Name)
			}
			continue
		}
		if !strings.HasPrefix(d.Name, d.Namespace.Name+"__") || d.Namespace.Name == base.Namespace.Name {
			t.Fatalf("doc %d: name %s, namespace %s", i, d.Name, d.Namespace.Name)
		}
		if d.OriginalName != c.tools[i%len(c.docs)] {
			t.Fatalf("doc %d: original name %q, want %q", i, d.OriginalName, c.tools[i%len(c.docs)])
		}
		bw, dw := strings.Fields(base.Description), strings.Fields(d.Description)
		if len(bw) != len(dw) {
			t.Fatalf("doc %d: %d words, want %d", i, len(dw), len(bw))
		}
		for j := range bw {
			total++
			if bw[j] != dw[j] {
				replaced++
			}
		}
	}
	if frac := float64(replaced) / float64(total); frac < 0.15 || frac > 0.25 {
		t.Errorf("%.3f of the words were replaced, want about 0.2", frac)
	}
}

// BenchmarkIndexBuild measures building an index of a whole catalog.
func BenchmarkIndexBuild(b *testing.B) {
	for _, mode := range search.Modes() {
		b.Run("ranker="+mode, func(b *testing.B) {
			for _, n := range benchSizes {
				b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
					docs := benchDocs(b, n)
					b.ReportAllocs()
					for b.Loop() {
						r := benchRanker(b, mode)
						r.Add(docs...)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/doc")
				})
			}
		})
	}
}

// BenchmarkReferenceLoop measures what the reference tool_search does on
// every query: tokenize the text of every candidate tool of the real corpus
// (1,564 tools) and rank them by BM25 — here by building a fresh PI index
// and searching it once. Compare with BenchmarkSearch/ranker=pi/tools=1000,
// which analyses each tool once.
func BenchmarkReferenceLoop(b *testing.B) {
	docs := benchDocs(b, 1564)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		r := search.NewPI()
		r.Add(docs...)
		r.Search(search.Query{Text: benchQueries[i%len(benchQueries)], Limit: 8})
		i++
	}
}

// BenchmarkSearch measures one search with limit 8, cycling through
// benchQueries, and reports the median and 99th percentile latency of a
// single Search call.
func BenchmarkSearch(b *testing.B) {
	for _, mode := range search.Modes() {
		b.Run("ranker="+mode, func(b *testing.B) {
			for _, n := range benchSizes {
				b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
					benchSearch(b, benchIndex(b, mode, n), nil)
				})
			}
		})
	}
}

// BenchmarkSearchExcluding measures searches that exclude 50 active tools,
// whose terms must be subtracted from the document frequencies; compare
// with BenchmarkSearch/ranker=toolshelf/tools=10000.
func BenchmarkSearchExcluding(b *testing.B) {
	const n, active = 10000, 50
	b.Run("ranker="+search.ModeToolshelf, func(b *testing.B) {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			docs := benchDocs(b, n)
			exclude := make([]string, active)
			for i := range exclude {
				exclude[i] = docs[i*(n/active)].Name
			}
			benchSearch(b, benchIndex(b, search.ModeToolshelf, n), exclude)
		})
	})
}

// noMatchQueries find nothing in the synthetic catalog, so the toolshelf
// ranker computes a hint: a select: name the catalog lacks (the github
// server has no create_issue), words no tool contains, and a required word
// no tool contains.
var noMatchQueries = []string{
	"select:mcp__github__create_issue",
	"xyzzy plugh",
	"+xyzzy list pods",
}

// BenchmarkSearchNoMatch measures searches that find nothing, whose cost
// is that of the hint (the closest tool names by edit distance).
func BenchmarkSearchNoMatch(b *testing.B) {
	b.Run("ranker="+search.ModeToolshelf, func(b *testing.B) {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
				r := benchIndex(b, search.ModeToolshelf, n)
				for _, q := range noMatchQueries {
					if res := r.Search(search.Query{Text: q, Limit: 8}); len(res.Hits) > 0 || res.Hint == nil {
						b.Fatalf("%q: %d hits, hint %v; want no hits and a hint", q, len(res.Hits), res.Hint)
					}
				}
				benchSearchQueries(b, r, noMatchQueries, nil)
			})
		}
	})
}

// searchSink keeps the compiler from discarding search results.
var searchSink int

func benchSearch(b *testing.B, r search.Ranker, exclude []string) {
	benchSearchQueries(b, r, benchQueries, exclude)
}

// benchSearchQueries searches r for each of queries in turn, with limit 8,
// and reports the median and 99th percentile latency of one Search call.
func benchSearchQueries(b *testing.B, r search.Ranker, queries, exclude []string) {
	lat := newLatencies()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := search.Query{Text: queries[i%len(queries)], Limit: 8, Exclude: exclude}
		i++
		start := time.Now()
		res := r.Search(q)
		lat.add(time.Since(start))
		searchSink += len(res.Hits)
	}
	lat.report(b)
}

// latencies keeps a uniform sample (reservoir) of durations in a buffer
// allocated up front, so recording allocates nothing inside the timed loop.
type latencies struct {
	samples []time.Duration
	seen    int
	rng     *rand.Rand
}

const maxLatencySamples = 1 << 16

func newLatencies() *latencies {
	return &latencies{
		samples: make([]time.Duration, 0, maxLatencySamples),
		rng:     rand.New(rand.NewPCG(benchSeed, 0)),
	}
}

func (l *latencies) add(d time.Duration) {
	switch {
	case len(l.samples) < cap(l.samples):
		l.samples = append(l.samples, d)
	default:
		if j := l.rng.IntN(l.seen + 1); j < len(l.samples) {
			l.samples[j] = d
		}
	}
	l.seen++
}

// report reports the median and 99th percentile as p50-ns and p99-ns.
func (l *latencies) report(b *testing.B) {
	if len(l.samples) == 0 {
		return
	}
	slices.Sort(l.samples)
	// nearest rank: the smallest sample with at least p of the samples at
	// or below it.
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(l.samples)))) - 1
		return l.samples[max(0, min(i, len(l.samples)-1))]
	}
	b.ReportMetric(float64(rank(0.50).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(rank(0.99).Nanoseconds()), "p99-ns")
}

// BenchmarkAddRemove measures replacing one document of a 10,000-tool
// index: Remove then Add, a different document each iteration.
func BenchmarkAddRemove(b *testing.B) {
	const n = 10000
	for _, mode := range search.Modes() {
		b.Run("ranker="+mode, func(b *testing.B) {
			b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
				docs := benchDocs(b, n)
				r := benchRanker(b, mode)
				r.Add(docs...)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					d := docs[i%n]
					i++
					r.Remove(d.Name)
					r.Add(d)
				}
				if r.Len() != n {
					b.Fatalf("index has %d documents after the benchmark, want %d", r.Len(), n)
				}
			})
		})
	}
}
