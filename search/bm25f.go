package search

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Fields of a toolshelf document.
const (
	fieldName   = iota // the tool's own name, split into words
	fieldLead          // the description's first sentence
	fieldBody          // the rest of the description
	fieldParams        // parameter names, descriptions and enum values
	fieldServer        // the namespace's short name (the server)
	numFields
)

// defaultFieldB are the BM25F length normalisations: none for the server
// name, which is the same for all of a server's tools, most for long free
// text.
var defaultFieldB = [maxFields]float64{fieldName: 0.5, fieldLead: 0.5, fieldBody: 0.8, fieldParams: 0.8, fieldServer: 0}

// FieldWeights are the BM25F weights of a tool's fields: how much a word
// counts in each.
type FieldWeights struct {
	// Name is the tool's own name, split into words.
	Name float64
	// Lead is the first sentence of the description.
	Lead float64
	// Body is the rest of the description.
	Body float64
	// Params is the parameter names, descriptions and enum values.
	Params float64
	// Server is the server's name. The server's description and
	// instructions are not indexed: on every measured catalog they earned
	// nothing (descriptions are a server's topic or its usage prose, which
	// mentions everything).
	Server float64
}

// DefaultFieldWeights returns the default weights. The name and the server
// say most about what a tool is and the first sentence says what it does;
// long bodies and parameter text mention many things the tool does not do.
func DefaultFieldWeights() FieldWeights {
	return FieldWeights{Name: 3, Lead: 1.5, Body: 0.8, Params: 0.4, Server: 2}
}

func (w FieldWeights) array() [maxFields]float64 {
	return [maxFields]float64{fieldName: w.Name, fieldLead: w.Lead, fieldBody: w.Body, fieldParams: w.Params,
		fieldServer: w.Server}
}

const (
	bm25fK1 = 1.2
	// DefaultSynonymWeight scales matches of a synonym the query did not
	// use (ticket for issue) relative to the word it used.
	DefaultSynonymWeight = 0.3
)

// Options configures the toolshelf ranker.
type Options struct {
	// Synonyms adds synonym groups to the built-in table; each group lists
	// forms of one meaning, each form one or more words.
	Synonyms [][]string
	// SynonymWeight scales matches through a synonym the query did not
	// use, above 0 and at most 1; 0 means [DefaultSynonymWeight].
	SynonymWeight float64
	// Fields overrides the field weights; nil means
	// [DefaultFieldWeights].
	Fields *FieldWeights
	// Disable switches off score factors and analysis steps, to measure
	// what each earns; zero is the default ranker.
	Disable Factor
}

// BM25F is toolshelf's default ranker: field-weighted BM25 over a tool's
// name, description (first sentence and rest), parameters and server name,
// with identifier splitting (snake, kebab and camel case), Porter2
// stemming, a synonym and alias table, CJK bigrams with a bilingual term
// table, a small boost for tools whose name the query explains,
// exact-name queries and required terms.
//
// Query syntax:
//   - select:a,b loads exactly the named tools (model-facing names, or
//     server tool names with or without the mcp__server__ prefix), in that
//     order, ignoring the limit;
//   - a query that is one tool name puts the tools of that name first and
//     ranks the rest as text;
//   - +word requires the word (or a synonym of it) in every hit;
//   - anything else is free text in any supported language.
//
// When nothing matches, the result carries a [Hint] with the terms no tool
// contains and the closest tool names.
type BM25F struct {
	off       Factor // the factors switched off
	fieldB    [maxFields]float64
	an        *analyzer
	syn       *synonymTable
	synWeight float64
	weight    [maxFields]float64 // the field weights

	// lastNorms caches the length-normalisation table of the last search;
	// scr recycles scratch buffers. Both are safe for concurrent use.
	lastNorms atomic.Pointer[norms]
	scr       scratchPool

	mu        sync.RWMutex // guards the fields below
	idx       *postings
	docs      []docMeta          // by slot
	exact     map[string][]int32 // normalised names → slots
	nameWords map[string][]int32 // words of normalised names → slots, for hints
	shortKeys map[string][]int32 // normalised names without server prefix → slots, for hints
	// nameTerms holds, by slot, the number of distinct words of the tool's
	// own name (at most 255), which the name factor reads for every scored
	// document: apart from docs, so that the pass touches little memory.
	nameTerms []uint8
}

// docMeta is what the ranker keeps about a document besides its postings.
type docMeta struct {
	display string   // the name shown in hints
	keys    []string // exact-name keys
	short   string   // the normalised name without server prefix, for hints
}

var _ Ranker = (*BM25F)(nil)

var builtinTables = sync.OnceValues(func() (*lexicon, error) {
	return parseLexicon(bilingualText)
})

// builtinGroups are the embedded synonym and alias tables, parsed once.
var builtinGroups = sync.OnceValues(func() ([2][][]string, error) {
	synonyms, err := ParseSynonyms(strings.NewReader(synonymsText))
	if err != nil {
		return [2][][]string{}, err
	}
	aliases, err := ParseSynonyms(strings.NewReader(aliasesText))
	return [2][][]string{synonyms, aliases}, err
})

// NewBM25F returns an empty toolshelf ranker. opts may be nil.
func NewBM25F(opts *Options) (*BM25F, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.SynonymWeight == 0:
		o.SynonymWeight = DefaultSynonymWeight
	case o.SynonymWeight < 0 || o.SynonymWeight > 1 || math.IsNaN(o.SynonymWeight):
		return nil, fmt.Errorf("synonym weight %v: want a number above 0 and at most 1", o.SynonymWeight)
	}
	lx, err := builtinTables()
	if err != nil {
		return nil, err
	}
	off := o.Disable
	if off >= factorEnd {
		return nil, fmt.Errorf("disabled factors %#x: unknown bits; use the Factor constants", uint32(off))
	}
	an := &analyzer{stem: newStemmer(), bilingual: lx, stops: stopWords,
		noSplit: off.Has(FactorIdentifiers), noJoined: off.Has(FactorJoined), noBigrams: off.Has(FactorBigrams)}
	an.stem.off = off.Has(FactorStemming)
	if off.Has(FactorStopWords) {
		an.stops = nil
	}
	if off.Has(FactorBilingual) {
		an.bilingual = &lexicon{entries: map[string][][]string{}}
	}
	tables, err := builtinGroups()
	if err != nil {
		return nil, err
	}
	// A copy: the parsed table is shared by every ranker.
	groups := append(slices.Clip(tables[0]), o.Synonyms...)
	aliases := tables[1]
	if off.Has(FactorSynonyms) {
		groups = nil
	}
	if off.Has(FactorAliases) {
		aliases = nil
	}
	fw := DefaultFieldWeights()
	if o.Fields != nil {
		fw = *o.Fields
		for _, w := range fw.array() {
			if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("field weights %+v: want finite numbers of 0 or more", fw)
			}
		}
	}
	b := defaultFieldB
	if off.Has(FactorNameField) {
		fw.Name, b[fieldName] = fw.Lead, b[fieldLead]
	}
	if off.Has(FactorLead) {
		fw.Body, b[fieldBody] = fw.Lead, b[fieldLead]
	}
	return &BM25F{
		off:       off,
		fieldB:    b,
		weight:    fw.array(),
		an:        an,
		syn:       buildSynonyms(an, groups, aliases),
		synWeight: o.SynonymWeight,
		idx:       newPostings(),
		exact:     make(map[string][]int32),
		nameWords: make(map[string][]int32),
		shortKeys: make(map[string][]int32),
	}, nil
}

// Name returns "toolshelf".
func (r *BM25F) Name() string { return ModeToolshelf }

// analyzed is a document after analysis.
type analyzed struct {
	fields [][]string
	meta   docMeta
	// nameTerms is the number of distinct words of the tool's own name.
	nameTerms int
}

func (r *BM25F) analyze(d Document) analyzed {
	short := d.OriginalName
	server := strings.TrimPrefix(d.Namespace.Name, "mcp__")
	if short == "" {
		short = d.Name
		if d.Namespace.Name != "" {
			short = strings.TrimPrefix(short, d.Namespace.Name+"__")
		}
	}
	// Each field analyses at most maxFieldText bytes (schema.go).
	lead, body := splitLead(clipText(d.Description, maxFieldText))
	fields := make([][]string, numFields)
	name := newTextBudget()
	short = name.take(short)
	fields[fieldName] = r.an.fieldTerms(short, nil)
	nameTerms := r.an.distinctWords(short)
	fields[fieldLead] = r.an.fieldTerms(lead, nil)
	fields[fieldBody] = r.an.fieldTerms(body, nil)
	if len(d.Parameters) > 0 {
		if schema, err := parseSchema(d.Parameters); err == nil {
			fields[fieldParams] = r.schemaTerms(schema, nil, newTextBudget())
		}
	}
	if !r.off.Has(FactorServerName) {
		fields[fieldServer] = r.an.fieldTerms(clipText(server, maxFieldText), nil)
	}

	// Exact-name keys; a name without letters or digits has none.
	keys := []string{normName(d.Name)}
	if d.OriginalName != "" {
		keys = append(keys, normName(d.OriginalName))
		if server != "" {
			keys = append(keys, normName(server+"_"+d.OriginalName))
		}
	}
	keys = slices.DeleteFunc(dedupe(keys), func(k string) bool { return k == "" })
	return analyzed{fields: fields, meta: docMeta{display: d.Name, keys: keys, short: normName(short)},
		nameTerms: nameTerms}
}

// splitLead returns a description's first sentence (or line) and the rest.
func splitLead(desc string) (lead, body string) {
	desc = strings.TrimSpace(desc)
	cut := len(desc)
	if i := strings.IndexByte(desc, '\n'); i >= 0 {
		cut = i
	}
	for _, sep := range []string{". ", "? ", "! ", "。"} {
		if i := strings.Index(desc[:cut], sep); i >= 0 {
			cut = i + len(sep)
		}
	}
	return desc[:cut], desc[cut:]
}

// schemaTerms collects the searchable text of a JSON Schema: property
// names (as identifiers), descriptions, titles and string enum values,
// following properties, items, additionalProperties, the anyOf, oneOf and
// allOf variants and $defs/definitions, until the text budget is spent.
func (r *BM25F) schemaTerms(n *node, out []string, b *textBudget) []string {
	if n == nil || n.kind != 'o' || *b <= 0 {
		return out
	}
	for _, key := range []string{"title", "description"} {
		if v := n.get(key); v != nil && v.kind == 's' {
			out = r.an.fieldTerms(b.take(v.str), out)
		}
	}
	if e := n.get("enum"); e != nil && e.kind == 'a' {
		for _, v := range e.elems {
			if v.kind == 's' {
				out = r.an.fieldTerms(b.take(v.str), out)
			}
		}
	}
	if props := n.get("properties"); props != nil && props.kind == 'o' {
		for i, name := range props.keys {
			out = r.an.fieldTerms(b.take(name), out)
			out = r.schemaTerms(props.vals[i], out, b)
		}
	}
	out = r.schemaTerms(n.get("items"), out, b)
	out = r.schemaTerms(n.get("additionalProperties"), out, b)
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if vs := n.get(key); vs != nil && vs.kind == 'a' {
			for _, v := range vs.elems {
				out = r.schemaTerms(v, out, b)
			}
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		if defs := n.get(key); defs != nil && defs.kind == 'o' {
			for _, v := range defs.vals {
				out = r.schemaTerms(v, out, b)
			}
		}
	}
	return out
}

// Add indexes documents.
func (r *BM25F) Add(docs ...Document) {
	as := make([]analyzed, len(docs))
	for i, d := range docs {
		as[i] = r.analyze(d)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, d := range docs {
		if old, ok := r.idx.byName[d.Name]; ok {
			r.dropMeta(old)
		}
		slot := r.idx.add(d.Name, as[i].fields)
		for int(slot) >= len(r.docs) {
			r.docs = append(r.docs, docMeta{})
			r.nameTerms = append(r.nameTerms, 0)
		}
		meta := as[i].meta
		r.docs[slot] = meta
		r.nameTerms[slot] = uint8(min(as[i].nameTerms, 255))
		for _, k := range meta.keys {
			r.exact[k] = append(r.exact[k], slot)
		}
		for _, w := range meta.words() {
			r.nameWords[w] = append(r.nameWords[w], slot)
		}
		r.shortKeys[meta.short] = append(r.shortKeys[meta.short], slot)
	}
}

// words returns the distinct words, longer than two characters, of a
// document's exact-name keys.
func (m docMeta) words() []string {
	var out []string
	for _, k := range m.keys {
		for _, w := range strings.Split(k, "_") {
			if len(w) > 2 && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// dropMeta removes a slot's exact-name keys and name words.
func (r *BM25F) dropMeta(slot int32) {
	drop := func(m map[string][]int32, k string) {
		list := slices.DeleteFunc(m[k], func(s int32) bool { return s == slot })
		if len(list) == 0 {
			delete(m, k)
		} else {
			m[k] = list
		}
	}
	meta := r.docs[slot]
	for _, k := range meta.keys {
		drop(r.exact, k)
	}
	for _, w := range meta.words() {
		drop(r.nameWords, w)
	}
	drop(r.shortKeys, meta.short)
	r.docs[slot] = docMeta{}
	r.nameTerms[slot] = 0
}

// Remove drops documents.
func (r *BM25F) Remove(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		if slot, ok := r.idx.byName[n]; ok {
			r.dropMeta(slot)
			r.idx.remove(n)
		}
	}
}

// Len returns the number of documents.
func (r *BM25F) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.idx.live
}

// Search ranks the candidates for q.
func (r *BM25F) Search(q Query) Result {
	if q.Limit <= 0 {
		return Result{}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	pq := r.parseQuery(q.Text)
	s := r.scr.get(len(r.idx.slots))
	defer r.scr.put(s)
	c := r.idx.candidates(q.Exclude, s)
	if pq.selectNames != nil {
		return r.selectHits(pq.selectNames, &c)
	}
	// A query that is a tool's name lists that tool first; when the tool is
	// already loaded there is nothing to load.
	var exact []int32
	var loaded []string
	if pq.exactKey != "" {
		for _, slot := range r.exact[pq.exactKey] {
			if c.mask[slot] {
				loaded = append(loaded, r.idx.slots[slot].name)
			} else {
				exact = append(exact, slot)
			}
		}
	}
	if len(exact) == 0 && len(loaded) > 0 {
		return Result{Hint: &Hint{Loaded: loaded}}
	}
	slices.SortFunc(exact, func(a, b int32) int { return compareSeq(r.idx, a, b) })

	limit := min(q.Limit, c.n) // no more hits than candidates
	matchedAny := r.score(pq.slots, &c, s)
	r.scaleScores(s)
	top := r.idx.topK(s.touched, s.score, limit+len(exact))
	hits := make([]Hit, 0, min(limit, len(exact)+len(top)))
	for _, slot := range exact {
		hits = append(hits, Hit{Name: r.idx.slots[slot].name, Exact: true})
	}
	for _, slot := range top {
		if slices.Contains(exact, slot) {
			continue
		}
		hits = append(hits, Hit{Name: r.idx.slots[slot].name, Score: s.score[slot]})
	}
	if len(hits) > limit {
		hits = hits[:limit]
	}
	res := Result{Hits: hits}
	if len(hits) == 0 && c.n > 0 {
		res.Hint = r.hint(pq.slots, matchedAny, &c)
	}
	return res
}

// score adds every candidate's score into s.score and lists the scored
// documents in s.touched. It returns, per slot, whether any candidate
// contains any of its terms.
func (r *BM25F) score(slots []qslot, c *candidates, s *scratch) []bool {
	matchedAny := make([]bool, len(slots))
	if c.n <= 0 {
		return matchedAny
	}
	lens := r.idx.lens
	nm := r.normsFor(c)
	var required uint64
	var slotDocs []int32
	// keep records v as document d's slot score when it beats the best
	// alternative so far.
	keep := func(d int32, v float64) {
		if v > s.slotMax[d] {
			if s.slotMax[d] == 0 {
				slotDocs = append(slotDocs, d)
			}
			s.slotMax[d] = v
		}
	}
	for si, sl := range slots {
		bit := uint64(1) << si
		if sl.required {
			required |= bit
		}
		plan := r.plan(sl, c)
		matchedAny[si] = plan.matched
		s.slotIDF = append(s.slotIDF, plan.idf())
		if len(plan.group) == 1 && len(plan.phrases) == 0 {
			r.scoreTerm(&plan.group[0], plan.groupIDF, bit, c, s, nm)
			continue
		}
		slotDocs = slotDocs[:0]
		// The one-word alternatives add up their weighted frequencies
		// in s.alt, then saturate once.
		for _, g := range plan.group {
			for i := range g.list {
				p := &g.list[i]
				if c.mask[p.slot] {
					continue
				}
				a := &s.alt[p.slot]
				if a.sum == 0 {
					s.altSeen = append(s.altSeen, p.slot)
				}
				a.sum += g.weight * postingTF(&r.weight, p, &lens[p.slot], nm)
				if p.tf[fieldName] > 0 {
					a.name |= bit
				}
			}
		}
		for _, d := range s.altSeen {
			keep(d, saturate(plan.groupIDF, s.alt[d].sum))
			s.alt[d].sum = 0
		}
		s.altSeen = s.altSeen[:0]
		// Each several-word alternative sums its words' scores.
		for _, ph := range plan.phrases {
			for i, list := range ph.lists {
				idf := ph.idfs[i]
				for j := range list {
					p := &list[j]
					if c.mask[p.slot] {
						continue
					}
					a := &s.alt[p.slot]
					if a.sum == 0 {
						s.altSeen = append(s.altSeen, p.slot)
					}
					a.sum += saturate(idf, postingTF(&r.weight, p, &lens[p.slot], nm))
					if p.tf[fieldName] > 0 {
						a.name |= bit
					}
				}
			}
			for _, d := range s.altSeen {
				keep(d, ph.weight*s.alt[d].sum)
				s.alt[d].sum = 0
			}
			s.altSeen = s.altSeen[:0]
		}
		for _, d := range slotDocs {
			if s.flags[d] == 0 {
				s.touched = append(s.touched, d)
			}
			s.flags[d] |= bit
			s.score[d] += s.slotMax[d]
			s.slotMax[d] = 0
		}
	}
	if required != 0 {
		for _, d := range s.touched {
			if s.flags[d]&required != required {
				s.score[d] = 0
			}
		}
	}
	return matchedAny
}

// scoreTerm adds the scores of a slot that is one term, the commonest
// case, in one pass over its postings: what score does for a slot of
// several alternatives, without accumulating them first.
func (r *BM25F) scoreTerm(g *groupTerm, idf float64, bit uint64, c *candidates, s *scratch, nm *norms) {
	lens := r.idx.lens
	for i := range g.list {
		p := &g.list[i]
		d := p.slot
		if c.mask[d] {
			continue
		}
		if p.tf[fieldName] > 0 {
			s.alt[d].name |= bit
		}
		v := saturate(idf, g.weight*postingTF(&r.weight, p, &lens[d], nm))
		if v <= 0 {
			continue
		}
		if s.flags[d] == 0 {
			s.touched = append(s.touched, d)
		}
		s.flags[d] |= bit
		s.score[d] += v
	}
}

// selectHits answers a select: query: the named tools that are candidates,
// in the order named, each once, whatever the limit.
func (r *BM25F) selectHits(names []string, c *candidates) Result {
	var hits []Hit
	h := &Hint{}
	for _, name := range names {
		found := false
		for _, slot := range r.exact[normName(name)] {
			n := r.idx.slots[slot].name
			if c.mask[slot] {
				if !slices.Contains(h.Loaded, n) {
					h.Loaded = append(h.Loaded, n)
				}
				found = true
				continue
			}
			found = true
			if !slices.ContainsFunc(hits, func(h Hit) bool { return h.Name == n }) {
				hits = append(hits, Hit{Name: n, Exact: true})
			}
		}
		if !found {
			h.Unmatched = append(h.Unmatched, name)
		}
	}
	res := Result{Hits: hits}
	if len(hits) == 0 && c.n > 0 {
		h.Nearest = r.nearest(h.Unmatched, c)
		if !h.empty() {
			res.Hint = h
		}
	}
	return res
}

// norms are the length-normalisation factors of one search: for each field
// and length, 1 / (1 - b + b × length / average length), tabulated for the
// common lengths. Tables depend only on the average lengths, so searches
// over the same candidates share one.
type norms struct {
	avg       [maxFields]float64
	oneMinusB [maxFields]float64
	bOverAvg  [maxFields]float64
	inv       [maxFields][normTableLen]float64
}

// normsFor returns the factors for the candidates' average lengths,
// reusing the last table when they have not changed.
func (r *BM25F) normsFor(c *candidates) *norms {
	var avg [maxFields]float64
	for f := range numFields {
		avg[f] = c.avgLen(f)
	}
	if nm := r.lastNorms.Load(); nm != nil && nm.avg == avg {
		return nm
	}
	nm := &norms{avg: avg}
	for f := range numFields {
		nm.oneMinusB[f] = 1 - r.fieldB[f]
		nm.bOverAvg[f] = r.fieldB[f] / avg[f]
		for l := range normTableLen {
			nm.inv[f][l] = 1 / (nm.oneMinusB[f] + nm.bOverAvg[f]*float64(l))
		}
	}
	r.lastNorms.Store(nm)
	return nm
}

// postingTF is BM25F's pseudo term frequency of a posting: the field
// frequencies, each weighted and normalised by the field's length relative
// to its average, summed over only the fields the term is in.
func postingTF(weight *[maxFields]float64, p *posting, lens *[maxFields]uint32, nm *norms) float64 {
	var tfw float64
	for in := p.in; in != 0; in &= in - 1 {
		f := bits.TrailingZeros8(in)
		if l := lens[f]; l < normTableLen {
			tfw += weight[f] * float64(p.tf[f]) * nm.inv[f][l]
		} else {
			tfw += weight[f] * float64(p.tf[f]) / (nm.oneMinusB[f] + nm.bOverAvg[f]*float64(l))
		}
	}
	return tfw
}

// saturate turns a term's weighted frequency into its score.
func saturate(idf, tfw float64) float64 {
	return idf * tfw * (bm25fK1 + 1) / (tfw + bm25fK1)
}
