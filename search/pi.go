package search

import (
	"math"
	"regexp"
	"strings"
	"sync"

	"github.com/toolshelf/toolshelf/internal/reftext"
)

// The reference ranker's BM25 constants.
const (
	piK1 = 1.2
	piB  = 0.75
)

// piStopWords are the reference tokenizer's stop words, checked before
// stemming.
var piStopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true,
	"by": true, "for": true, "from": true, "in": true, "is": true, "it": true, "of": true,
	"on": true, "or": true, "that": true, "the": true, "this": true, "to": true, "with": true,
}

var (
	piLowerUpper = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	piUpperRun   = regexp.MustCompile(`([A-Z]+)([A-Z][a-z])`)
	piNonWord    = regexp.MustCompile(`[^a-z0-9]+`)
)

// piTokenize splits text the way the reference tool_search does: camel case
// boundaries become spaces, the text is lowercased and split on every run
// of characters outside [a-z0-9], stop words are dropped and each token is
// stemmed by [reftext.Stem].
func piTokenize(text string) []string {
	var out []string
	for _, tok := range piWords(text) {
		if piStopWords[tok] {
			continue
		}
		out = append(out, reftext.Stem(tok))
	}
	return out
}

// piWords is the reference's split of text into lowercase words, before
// stop words and stemming.
func piWords(text string) []string {
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			return piWordsRegexp(text)
		}
	}
	return piWordsASCII(text)
}

// piWordsASCII is piWords for ASCII text, without regular expressions: a
// word ends between a lowercase letter or digit and a capital, before the
// last capital of a run followed by a lowercase letter, and at every
// character outside a-z, A-Z and 0-9 (TestPIWordsASCII compares it with
// the regular expressions).
func piWordsASCII(text string) []string {
	var out []string
	var b []byte
	flush := func() {
		if len(b) > 0 {
			out = append(out, string(b))
			b = b[:0]
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case isUpperASCII(c):
			if i > 0 {
				prev := text[i-1]
				if isLowerASCII(prev) || isDigitASCII(prev) ||
					(isUpperASCII(prev) && i+1 < len(text) && isLowerASCII(text[i+1])) {
					flush()
				}
			}
			b = append(b, c+'a'-'A')
		case isLowerASCII(c) || isDigitASCII(c):
			b = append(b, c)
		default:
			flush()
		}
	}
	flush()
	return out
}

// piWordsRegexp is piWords by the reference's regular expressions.
func piWordsRegexp(text string) []string {
	text = piLowerUpper.ReplaceAllString(text, "$1 $2")
	text = piUpperRun.ReplaceAllString(text, "$1 $2")
	// JavaScript lowercases İ to i and a combining dot, which splits the
	// word there; Go lowercases it to a plain i.
	text = strings.ToLower(strings.ReplaceAll(text, "İ", "i\u0307"))
	var out []string
	for _, tok := range piNonWord.Split(text, -1) {
		if tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

// piDocumentText returns the text the reference indexes for a tool: its
// name, the name with underscores as spaces, the description, the schema
// text and the namespace's name, description and instructions, joined by
// spaces with blank parts left out. Unlike the reference, it reads each
// part only up to the caps the toolshelf ranker applies (64 KiB of text per
// part, the front of a schema of more than 1 MiB or 50,000 values, and a
// word's first 255 occurrences in one tool), which no real tool reaches.
func piDocumentText(d Document) string {
	name := clipText(d.Name, maxFieldText)
	parts := []string{name, strings.ReplaceAll(name, "_", " "), clipText(d.Description, maxFieldText)}
	if len(d.Parameters) > 0 {
		if schema, err := parseSchema(d.Parameters); err == nil {
			piSchemaText(schema, &parts, newTextBudget())
		}
	}
	if d.Namespace.Name != "" {
		parts = append(parts, clipText(d.Namespace.Name, maxFieldText), clipText(d.Namespace.Description, maxFieldText),
			clipText(d.Namespace.Instructions, maxFieldText))
	}
	kept := parts[:0]
	for _, p := range parts {
		if reftext.TrimJS(p) != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " ")
}

// piSchemaText appends the reference's schema text: for an object schema,
// its description, then each property's name followed by the property's
// own text, then the text of items and of every anyOf/oneOf/allOf variant,
// until the text budget is spent.
func piSchemaText(n *node, out *[]string, b *textBudget) {
	if n == nil || n.kind != 'o' || *b <= 0 {
		return
	}
	if d := n.get("description"); d != nil && d.kind == 's' {
		*out = append(*out, b.take(d.str))
	}
	if props := n.get("properties"); props != nil && props.kind == 'o' {
		for i, name := range props.keys {
			*out = append(*out, b.take(name))
			piSchemaText(props.vals[i], out, b)
		}
	}
	piSchemaText(n.get("items"), out, b)
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if variants := n.get(key); variants != nil && variants.kind == 'a' {
			for _, v := range variants.elems {
				piSchemaText(v, out, b)
			}
		}
	}
}

// PI is the reference ranker: plain BM25 (k1 1.2, b 0.75) over one text
// per tool, tokenized by [piTokenize]. It reproduces the reference's scores
// and order exactly, which makes it the parity baseline; unlike the
// reference it analyses each document once and keeps postings, so a search
// costs time in proportion to the postings of the query's terms.
//
// Query syntax: plain words. Document frequencies, the document count and
// the average length are those of the candidates, as in the reference,
// which ranks only the tools it may load.
type PI struct {
	mu      sync.RWMutex // guards idx
	idx     *postings
	scratch scratchPool
}

var _ Ranker = (*PI)(nil)

// NewPI returns an empty reference ranker.
func NewPI() *PI { return &PI{idx: newPostings()} }

// Name returns "pi".
func (r *PI) Name() string { return ModePI }

// Add indexes documents, replacing those of the same name. It analyses
// them on as many processors as there are and indexes them in order
// (build.go).
func (r *PI) Add(docs ...Document) {
	r.mu.Lock()
	defer r.mu.Unlock()
	buildIndex(r.idx, docs, func(w *termWorker, d Document, a *docAnalysis) {
		toks := piTokenize(piDocumentText(d))
		for _, t := range toks {
			w.term(t)
		}
		a.lens[0] = uint32(len(toks))
	}, nil, nil)
}

// Remove drops documents.
func (r *PI) Remove(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		r.idx.remove(n)
	}
}

// Len returns the number of documents.
func (r *PI) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.idx.live
}

// Search ranks the candidates by BM25.
func (r *PI) Search(q Query) Result {
	terms := dedupe(piTokenize(q.Text))
	if len(terms) == 0 || q.Limit <= 0 {
		return Result{}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	idx := r.idx
	s := r.scratch.get(len(idx.slots))
	defer r.scratch.put(s)
	c := idx.candidates(q.Exclude, s)
	if c.n <= 0 {
		return Result{}
	}
	score := s.scores(len(idx.slots))
	avgdl := c.avgLen(0)
	n := float64(c.n)
	for _, term := range terms {
		list := idx.list(term)
		if len(list) == 0 {
			continue
		}
		df := float64(c.df(term, list))
		idf := bm25IDF(n, df)
		for _, p := range list {
			if c.mask[p.slot] {
				continue
			}
			tf := float64(p.tf[0])
			dl := float64(idx.lens[p.slot][0])
			if score[p.slot] == 0 {
				s.touched = append(s.touched, p.slot)
			}
			// Grouped as the reference computes it, so that scores agree
			// to the last bit.
			norm := piK1 * (1 - piB + piB*dl/avgdl)
			score[p.slot] += idf * ((tf * (piK1 + 1)) / (tf + norm))
		}
	}
	s.pos = idx.topK(s.touched, score, min(q.Limit, c.n), &s.top, s.pos)
	top := s.pos
	hits := make([]Hit, len(top))
	for i, slot := range top {
		hits[i] = Hit{Name: idx.slots[slot].name, Score: score[slot]}
	}
	return Result{Hits: hits}
}

// bm25IDF is the inverse document frequency of a term in df of n
// documents, in the form that never goes negative: ln(1 + (n-df+0.5)/(df+0.5)).
func bm25IDF(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// dedupe removes repeated strings, keeping first occurrences in order.
func dedupe(xs []string) []string {
	seen := make(map[string]bool, len(xs))
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
