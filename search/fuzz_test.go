package search

import (
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/tool"
)

// fuzzSeeds are seed inputs shared by the text fuzzers: identifiers, CJK,
// emoji, invalid UTF-8, long runs and query syntax.
var fuzzSeeds = []string{
	"",
	"create_issue",
	"listIssues HTTPServer ec2Instance jsonPath PromQL",
	"mcp__github__create_pull_request",
	"read-file Read_File read.file",
	"take a screenshot of the page",
	"列出 Kubernetes 集群里的 pod",
	"把 Sentry 的报错同步到 Linear 里新建 issue",
	"Slackにメッセージを送る",
	"노션에 페이지 만들기",
	"deploy 🚀 to prod 🎉",
	"\xff",
	"a\xffb\xc3(\xe4\xb8",
	"select:browser_click,browser_navigate",
	"SELECT: , ,",
	"select:",
	"+x",
	"+",
	"+github +issue create",
	"ares thes fors",
	"_-_-",
	"İK\u212a ǅ ß",
	strings.Repeat("a", 4096),
	strings.Repeat("ab_", 500),
	strings.Repeat("拉取请求", 300),
	strings.Repeat("AbC1", 300),
	"\u3000\t\n\r",
	"#general @alice 4242",
}

// FuzzPITokenize checks the reference tokenizer: tokens are non-empty
// [a-z0-9] words that are not stop words, and there are no more tokens than
// input bytes.
func FuzzPITokenize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		toks := piTokenize(text)
		if len(toks) > len(text) {
			t.Fatalf("%d tokens from %d bytes", len(toks), len(text))
		}
		lower := strings.ToLower(text)
		for _, tok := range toks {
			if tok == "" {
				t.Fatalf("empty token in %q", toks)
			}
			for i := 0; i < len(tok); i++ {
				if c := tok[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
					t.Fatalf("token %q has byte %q", tok, c)
				}
			}
			// Stop words are dropped before stemming, as in the
			// reference, so a stop word can only come out as the stem
			// of a longer word (ares → are).
			if piStopWords[tok] && !(len(tok) >= 3 && strings.Contains(lower, tok+"s")) {
				t.Fatalf("stop word %q in %q", tok, toks)
			}
		}
	})
}

// maxTranslationWords returns the most English words one lexicon entry
// translates to, over all its translations.
func maxTranslationWords(lx *lexicon) int {
	m := 0
	for _, trs := range lx.entries {
		n := 0
		for _, tr := range trs {
			n += len(tr)
		}
		m = max(m, n)
	}
	return m
}

// FuzzAnalyzer checks the toolshelf analyser on arbitrary text.
//
// The bound on the number of terms follows from fieldTerms: a non-CJK word
// of L bytes splits into p ≤ L parts, each giving at most one term, plus
// one compound term when p > 1, so at most L+1 ≤ 2L terms. A CJK run of R
// runes gives at most R bigrams and at most R dictionary segments, each
// contributing at most T terms, where T is the most translation words of a
// lexicon entry (4 in bilingual.txt: 拉取请求 = pull request, merge
// request); so at most (1+T)·R terms. Hence
// len(terms) ≤ 2·(bytes outside CJK runs) + (1+T)·(CJK runes).
func FuzzAnalyzer(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	r, err := NewBM25F(nil)
	if err != nil {
		f.Fatal(err)
	}
	an := r.an
	perRune := 1 + maxTranslationWords(an.bilingual)
	f.Fuzz(func(t *testing.T, text string) {
		terms := an.fieldTerms(text, nil)
		bound := 0
		for _, c := range text {
			if classify(c) == scriptCJK {
				bound += perRune
			} else {
				bound += 2 * utf8.RuneLen(c)
			}
		}
		// utf8.RuneLen(RuneError) is 3 for an invalid byte, which only
		// loosens the bound; invalid bytes are separators anyway.
		if len(terms) > bound {
			t.Fatalf("%d terms from %q, bound %d", len(terms), text, bound)
		}
		for _, term := range terms {
			if term == "" {
				t.Fatalf("empty term in %q", terms)
			}
			for i := 0; i < len(term); i++ {
				if c := term[i]; c >= 'A' && c <= 'Z' {
					t.Fatalf("term %q is not lowercase", term)
				}
			}
		}
	})
}

// fuzzDocs returns about n documents spread over the builtin catalog,
// converted the way toolsearch.Document does it (which this package's
// tests cannot import).
func fuzzDocs(tb testing.TB, n int) []Document {
	tb.Helper()
	servers, err := builtin.Servers()
	if err != nil {
		tb.Fatal(err)
	}
	namer := tool.NewNamer()
	var all []Document
	for _, s := range servers {
		for _, t := range s.AsTools(namer, tool.Deferred) {
			d := Document{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
			if t.Origin.Tool != t.Name {
				d.OriginalName = t.Origin.Tool
			}
			if t.Namespace != nil {
				d.Namespace = Namespace{Name: t.Namespace.Name, Description: t.Namespace.Description,
					Instructions: t.Namespace.Instructions}
			}
			all = append(all, d)
		}
	}
	stride := max(1, len(all)/n)
	var docs []Document
	for i := 0; i < len(all) && len(docs) < n; i += stride {
		docs = append(docs, all[i])
	}
	return docs
}

// fuzzIndex holds both rankers over the same 50 catalog documents.
var fuzzIndex struct {
	once sync.Once
	docs []Document
	bm   *BM25F
	pi   *PI
	err  error
}

func fuzzRankers(tb testing.TB) ([]Document, *BM25F, *PI) {
	tb.Helper()
	fuzzIndex.once.Do(func() {
		docs := fuzzDocs(tb, 50)
		bm, err := NewBM25F(nil)
		if err != nil {
			fuzzIndex.err = err
			return
		}
		bm.Add(docs...)
		pi := NewPI()
		pi.Add(docs...)
		fuzzIndex.docs, fuzzIndex.bm, fuzzIndex.pi = docs, bm, pi
	})
	if fuzzIndex.err != nil {
		tb.Fatal(fuzzIndex.err)
	}
	return fuzzIndex.docs, fuzzIndex.bm, fuzzIndex.pi
}

// fuzzIsSelect reports whether text is a select: query.
func fuzzIsSelect(text string) bool {
	text = strings.TrimSpace(text)
	return len(text) >= 7 && strings.EqualFold(text[:7], "select:")
}

// FuzzParseQuery checks the shape of parsed toolshelf queries.
func FuzzParseQuery(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add(strings.Repeat("alpha beta gamma delta ", 40))
	f.Add("select:" + strings.Repeat("x,", 100))
	_, r, _ := fuzzRankers(f)
	f.Fuzz(func(t *testing.T, text string) {
		r.mu.RLock()
		pq := r.parseQuery(text)
		r.mu.RUnlock()
		if fuzzIsSelect(text) {
			if pq.selectNames == nil || pq.slots != nil {
				t.Fatalf("select query %q parsed as %+v", text, pq)
			}
			for _, n := range pq.selectNames {
				if n == "" {
					t.Fatalf("empty select name in %q", pq.selectNames)
				}
			}
			return
		}
		if pq.selectNames != nil {
			t.Fatalf("%q parsed as a select query: %q", text, pq.selectNames)
		}
		if len(pq.slots) > maxSlots {
			t.Fatalf("%d slots, want at most %d", len(pq.slots), maxSlots)
		}
		for _, sl := range pq.slots {
			if len(sl.alts) == 0 {
				t.Fatalf("slot %q has no alternatives", sl.surface)
			}
			for _, a := range sl.alts {
				if len(a.terms) == 0 {
					t.Fatalf("slot %q has an alternative without terms", sl.surface)
				}
				for _, term := range a.terms {
					if term == "" {
						t.Fatalf("slot %q has an empty term in %q", sl.surface, a.terms)
					}
				}
				if !(a.weight > 0 && a.weight <= 1) {
					t.Fatalf("slot %q: alternative %q has weight %v", sl.surface, a.terms, a.weight)
				}
			}
		}
	})
}

// FuzzSearch checks both rankers' results for arbitrary queries, limits
// and exclusions.
func FuzzSearch(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, int8(i%26), uint8(i)) // limit i%26-5
	}
	f.Add("select:browser_click,BROWSER_CLICK,mcp__playwright__browser_click", int8(6), uint8(0))
	f.Add("github", int8(25), uint8(0))
	f.Add("search", int8(25), uint8(50))
	docs, bm, pi := fuzzRankers(f)
	indexed := make(map[string]bool, len(docs))
	for _, d := range docs {
		indexed[d.Name] = true
	}
	f.Add("list files", int8(-6), uint8(0))       // math.MaxInt
	f.Add("browser_snapshot", int8(-5), uint8(3)) // math.MinInt
	f.Add("select:read_file", int8(-4), uint8(1)) // 1 << 62
	f.Fuzz(func(t *testing.T, text string, rawLimit int8, rawExclude uint8) {
		limit := int(uint8(rawLimit))%26 - 5 // in [-5, 20], or huge
		switch uint8(rawLimit) {
		case 250:
			limit = math.MaxInt
		case 251:
			limit = math.MinInt
		case 252:
			limit = 1 << 62
		}
		// Exclude the first k documents; k may cover all of them.
		exclude := make([]string, 0, len(docs))
		for _, d := range docs[:int(rawExclude)%(len(docs)+1)] {
			exclude = append(exclude, d.Name)
		}
		excluded := make(map[string]bool, len(exclude))
		for _, n := range exclude {
			excluded[n] = true
		}
		q := Query{Text: text, Limit: limit, Exclude: exclude}
		for _, r := range []Ranker{bm, pi} {
			res := r.Search(q)
			switch {
			case limit <= 0:
				if len(res.Hits) != 0 {
					t.Fatalf("%s: %d hits for limit %d", r.Name(), len(res.Hits), limit)
				}
			case r == Ranker(bm) && fuzzIsSelect(text):
				// select: ignores the limit.
			case len(res.Hits) > limit:
				t.Fatalf("%s: %d hits for limit %d", r.Name(), len(res.Hits), limit)
			}
			seen := make(map[string]bool, len(res.Hits))
			for _, h := range res.Hits {
				if !indexed[h.Name] || excluded[h.Name] {
					t.Fatalf("%s: hit %q is not a candidate", r.Name(), h.Name)
				}
				if seen[h.Name] {
					t.Fatalf("%s: hit %q twice", r.Name(), h.Name)
				}
				seen[h.Name] = true
				if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || h.Score < 0 {
					t.Fatalf("%s: hit %q has score %v", r.Name(), h.Name, h.Score)
				}
			}
		}
	})
}

// FuzzSplitIdentifier checks that identifier splitting loses nothing but
// the joiners _ and - and the case.
func FuzzSplitIdentifier(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("getHTTPResponseCode_v2-beta")
	f.Add("ec2Instance")
	f.Add("__a--b__")
	strip := strings.NewReplacer("_", "", "-", "")
	f.Fuzz(func(t *testing.T, w string) {
		parts := splitIdentifier(w)
		for _, p := range parts {
			if p == "" || strings.ContainsAny(p, "_-") {
				t.Fatalf("splitIdentifier(%q) = %q: bad part %q", w, parts, p)
			}
		}
		if ascii := splitIdentifierRunes(w); !slices.Equal(parts, ascii) {
			t.Fatalf("splitIdentifier(%q) = %q, the general splitter %q", w, parts, ascii)
		}
		if !utf8.ValidString(w) {
			return
		}
		if got, want := strings.Join(parts, ""), strings.ToLower(strip.Replace(w)); got != want {
			t.Fatalf("splitIdentifier(%q) = %q, joined %q, want %q", w, parts, got, want)
		}
	})
}

// FuzzSegment checks that segmenting a CJK run covers the run exactly, in
// order, with the dictionary's words.
func FuzzSegment(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("请帮我创建一个新的拉取请求并合并请求")
	f.Add("ㄅㄆ한국어カタカナーひらがな")
	lx, err := builtinTables()
	if err != nil {
		f.Fatal(err)
	}
	check := func(t *testing.T, run string) {
		segs := lx.segment(run)
		var b strings.Builder
		for _, s := range segs {
			if s.text == "" {
				t.Fatalf("segment(%q): empty segment", run)
			}
			if _, ok := lx.entries[s.text]; ok != s.known {
				t.Fatalf("segment(%q): segment %q known=%v", run, s.text, s.known)
			}
			b.WriteString(s.text)
		}
		if b.String() != run {
			t.Fatalf("segment(%q) joins to %q", run, b.String())
		}
	}
	f.Add("\xff\xff")
	f.Add("创建\xff文件")
	f.Fuzz(func(t *testing.T, text string) {
		// segment is given CJK runs found by scan; it must also cope
		// with any text, invalid UTF-8 included.
		scan(text, func(w rawWord) {
			if w.cjk {
				check(t, w.text)
			}
		})
		check(t, text)
	})
}
