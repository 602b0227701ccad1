package search

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Fields of a toolshelf document.
const (
	fieldName       = iota // the tool's own name, split into words
	fieldLead              // the description's first sentence
	fieldBody              // the rest of the description
	fieldParams            // parameter names, descriptions and enum values
	fieldServer            // the namespace's short name (the server)
	fieldServerText        // the namespace's description and instructions
	numFields
)

// Options configures the toolshelf ranker.
type Options struct {
	// Synonyms adds synonym groups to the built-in table; each group lists
	// forms of one meaning, each form one or more words.
	Synonyms [][]string
	// Params overrides the ranker's parameters; nil means
	// [DefaultParams], with the factors the fit left off
	// ([DefaultDisable]) off. With Params set, only Disable's factors
	// are off.
	Params *Params
	// Disable switches off score factors and analysis steps, to measure
	// what each earns; zero is the default ranker.
	Disable Factor
}

// BM25F is toolshelf's default ranker: BM25F over a tool's name,
// description (first sentence and rest), parameters, server name and server
// text, each field weighted and the document's weighted length normalised
// once ([Params]), with identifier splitting (snake, kebab and camel case),
// a plural stemmer with Porter2 families, a synonym and alias table, CJK
// bigrams with a bilingual term table, a boost for tools whose name the
// query explains, exact-name queries and required terms. Its parameters are
// fitted on the evaluation suite ([DefaultParams]); with every factor off
// and [ReferenceParams] it scores as the reference's plain BM25.
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
	off    Factor // the factors switched off
	params Params // with the factors' off values in place
	an     *analyzer
	syn    *synonymTable
	weight [maxFields]float64 // the field weights

	// lastNorms caches the length-normalisation constants of the last
	// search; scr recycles scratch buffers. Both are safe for concurrent
	// use.
	lastNorms atomic.Pointer[norms]
	scr       scratchPool

	mu        sync.RWMutex // guards the fields below
	idx       *postings
	docs      []docMeta // by slot
	exact     slotLists // normalised names → slots, for hints
	nameWords slotLists // words of normalised names → slots, for hints
	shortKeys slotLists // normalised names without server prefix → slots, for hints
	ids       []int32   // ids[s] == s, for every slot: the one-slot lists of slotLists
	// nameTerms holds, by slot, the number of distinct words of the tool's
	// own name (at most 255), which the name factor reads for every scored
	// document: apart from docs, so that the pass touches little memory.
	nameTerms []uint8
	// families maps a Porter2 stem to the index's terms that have it, in
	// the order the index met them ([FactorStemming]).
	families map[string][]string
	// wlen holds, by slot, the document's weighted length: the sum of its
	// fields' lengths times their weights, which normalises every term's
	// frequency in it.
	wlen []float32
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
	w, err := embeddedWeights()
	if err != nil {
		return nil, err
	}
	fitOff, err := ParseFactors(w.Disable)
	if err != nil {
		return nil, err
	}
	p := w.Params
	if o.Params != nil {
		// Parameters of the caller's own: the fit's choice of factors
		// goes with the fit's parameters.
		p, fitOff = *o.Params, 0
	}
	return newBM25F(o, p, fitOff)
}

// newBM25F returns an empty ranker with parameters p and the factors of
// o.Disable and fitOff switched off.
func newBM25F(o Options, p Params, fitOff Factor) (*BM25F, error) {
	lx, err := builtinTables()
	if err != nil {
		return nil, err
	}
	if o.Disable&^FactorsAll != 0 {
		return nil, fmt.Errorf("disabled factors %#x: unknown bits; use the Factor constants", uint32(o.Disable))
	}
	off := o.Disable | fitOff
	if err := p.check(); err != nil {
		return nil, err
	}
	p = p.withFactorsOff(off)
	an := &analyzer{stem: newStemmer(), bilingual: lx, stops: stopWords,
		noJoined: off.Has(FactorJoined), noBigrams: off.Has(FactorBigrams), refWords: off.Has(FactorIdentifiers)}
	an.stem.ref = off.Has(FactorStemming)
	if off.Has(FactorStopWords) {
		an.stops, an.refStops = piStopWords, true
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
	if off.Has(FactorSynonyms) || p.Synonym == 0 {
		groups = nil
	}
	if off.Has(FactorAliases) {
		aliases = nil
	}
	r := &BM25F{
		off:      off,
		params:   p,
		weight:   p.fields(),
		an:       an,
		syn:      buildSynonyms(an, groups, aliases),
		idx:      newPostings(),
		families: make(map[string][]string),
	}
	r.exact, r.nameWords, r.shortKeys = newSlotLists(&r.ids), newSlotLists(&r.ids), newSlotLists(&r.ids)
	return r, nil
}

// addFamily records a new index term under its Porter2 stem. Call it with
// r.mu held for writing.
func (r *BM25F) addFamily(t string) {
	if r.off.Has(FactorStemming) {
		return
	}
	f := r.an.stem.family(t)
	r.families[f] = append(r.families[f], t)
}

// Params returns the ranker's parameters, with the reference's values for
// the factors that are off.
func (r *BM25F) Params() Params { return r.params }

// Name returns "toolshelf".
func (r *BM25F) Name() string { return ModeToolshelf }

// analyze counts a document's terms into w, field by field, and fills in
// its metadata. serverText holds the analysed text of each server
// (serverTextKey); analyze only reads it, so that documents can be
// analysed at once.
func (r *BM25F) analyze(w *termWorker, d Document, serverText map[string][]string, a *docAnalysis) {
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
	name := newTextBudget()
	short = name.take(short)
	w.field = fieldName
	a.lens[fieldName] = w.text(r.an, short)
	a.nameTerms = uint8(min(r.an.distinctWords(short), 255))
	w.field = fieldLead
	a.lens[fieldLead] = w.text(r.an, lead)
	w.field = fieldBody
	a.lens[fieldBody] = w.text(r.an, body)
	if len(d.Parameters) > 0 {
		if schema, err := parseSchemaCaps(d.Parameters, defaultSchemaCaps, &w.nodes); err == nil {
			w.field = fieldParams
			r.schemaText(schema, newTextBudget(), func(text string) {
				a.lens[fieldParams] += w.text(r.an, text)
			})
		}
		w.nodes.reset()
	}
	// The namespace as the reference reads it: mcp__github is mcp and github.
	w.field = fieldServer
	a.lens[fieldServer] = w.text(r.an, clipText(d.Namespace.Name, maxFieldText))
	w.field = fieldServerText
	ids, ok := w.texts[d.Namespace]
	if !ok {
		for _, t := range serverText[serverTextKey(d.Namespace)] {
			ids = append(ids, w.local(t))
		}
		w.texts[d.Namespace] = ids
	}
	for _, id := range ids {
		w.occur(id)
	}
	a.lens[fieldServerText] = uint32(len(ids))

	// Exact-name keys; a name without letters or digits has none.
	keys := []string{normName(d.Name)}
	if d.OriginalName != "" {
		keys = append(keys, normName(d.OriginalName))
		if server != "" {
			keys = append(keys, normName(server+"_"+d.OriginalName))
		}
	}
	keys = slices.Clip(slices.DeleteFunc(dedupe(keys), func(k string) bool { return k == "" }))
	a.meta = docMeta{display: d.Name, keys: keys, short: normName(short)}
	a.words = a.meta.words()
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

// schemaText passes text the searchable text of a JSON Schema, piece by
// piece, each cut to what the text budget still allows: property names (to
// be read as identifiers), descriptions, titles and string enum values,
// following properties, items, additionalProperties, the anyOf, oneOf and
// allOf variants and $defs/definitions, until the budget is spent.
func (r *BM25F) schemaText(n *node, b *textBudget, text func(string)) {
	if n == nil || n.kind != 'o' || *b <= 0 {
		return
	}
	keys := []string{"title", "description"}
	if r.off.Has(FactorSchemaText) {
		keys = keys[1:]
	}
	for _, key := range keys {
		if v := n.get(key); v != nil && v.kind == 's' {
			text(b.take(v.str))
		}
	}
	if r.off.Has(FactorSchemaText) {
		// The reference's schema text: descriptions and property names,
		// through properties, items and the variants.
		if props := n.get("properties"); props != nil && props.kind == 'o' {
			for i, name := range props.keys {
				text(b.take(name))
				r.schemaText(props.vals[i], b, text)
			}
		}
		r.schemaText(n.get("items"), b, text)
		for _, key := range []string{"anyOf", "oneOf", "allOf"} {
			if vs := n.get(key); vs != nil && vs.kind == 'a' {
				for _, v := range vs.elems {
					r.schemaText(v, b, text)
				}
			}
		}
		return
	}
	if e := n.get("enum"); e != nil && e.kind == 'a' {
		for _, v := range e.elems {
			if v.kind == 's' {
				text(b.take(v.str))
			}
		}
	}
	if props := n.get("properties"); props != nil && props.kind == 'o' {
		for i, name := range props.keys {
			text(b.take(name))
			r.schemaText(props.vals[i], b, text)
		}
	}
	r.schemaText(n.get("items"), b, text)
	r.schemaText(n.get("additionalProperties"), b, text)
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if vs := n.get(key); vs != nil && vs.kind == 'a' {
			for _, v := range vs.elems {
				r.schemaText(v, b, text)
			}
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		if defs := n.get(key); defs != nil && defs.kind == 'o' {
			for _, v := range defs.vals {
				r.schemaText(v, b, text)
			}
		}
	}
}

// serverTextKey is the key of a server's description and instructions,
// which its tools share; "" when it has neither.
func serverTextKey(ns Namespace) string {
	if ns.Description == "" && ns.Instructions == "" {
		return ""
	}
	return ns.Description + "\x00" + ns.Instructions
}

// serverTexts returns the analysed text of each server of docs, by
// serverTextKey: the tools of one server share it, analysed once per Add.
func (r *BM25F) serverTexts(docs []Document) map[string][]string {
	serverText := make(map[string][]string)
	seen := make(map[Namespace]bool)
	for _, d := range docs {
		ns := d.Namespace
		if seen[ns] {
			continue
		}
		seen[ns] = true
		key := serverTextKey(ns)
		if _, ok := serverText[key]; ok || key == "" {
			continue
		}
		terms := r.an.fieldTerms(clipText(ns.Description, maxFieldText), nil)
		serverText[key] = r.an.fieldTerms(clipText(ns.Instructions, maxFieldText), terms)
	}
	return serverText
}

// Add indexes documents, replacing those of the same name. It analyses
// them on as many processors as there are and indexes them in order
// (build.go), so the index does not depend on how the work was shared.
func (r *BM25F) Add(docs ...Document) {
	serverText := r.serverTexts(docs)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(docs) >= deferDocs && len(r.docs) == 0 { // a large first build
		r.exact.reserve(len(docs))
		r.shortKeys.reserve(len(docs))
		r.docs = slices.Grow(r.docs, len(docs))
		r.nameTerms = slices.Grow(r.nameTerms, len(docs))
		r.wlen = slices.Grow(r.wlen, len(docs))
		r.ids = slices.Grow(r.ids, len(docs))
	}
	buildIndex(r.idx, docs, func(w *termWorker, d Document, a *docAnalysis) {
		r.analyze(w, d, serverText, a)
	}, r.addFamily, r.indexed)
}

// indexed records the metadata of a document just indexed in slot;
// replaced reports that the slot held a document of the same name. Call
// it with r.mu held for writing.
func (r *BM25F) indexed(slot int32, replaced bool, a *docAnalysis) {
	if replaced {
		r.dropMeta(slot)
	}
	for int(slot) >= len(r.docs) {
		r.docs = append(r.docs, docMeta{})
		r.nameTerms = append(r.nameTerms, 0)
		r.wlen = append(r.wlen, 0)
		r.ids = append(r.ids, int32(len(r.ids)))
	}
	meta := a.meta
	r.docs[slot] = meta
	r.nameTerms[slot] = a.nameTerms
	r.wlen[slot] = float32(r.weightedLen(slot))
	for _, k := range meta.keys {
		r.exact.add(k, slot)
	}
	for _, w := range a.words {
		r.nameWords.add(w, slot)
	}
	r.shortKeys.add(meta.short, slot)
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
	meta := r.docs[slot]
	for _, k := range meta.keys {
		r.exact.drop(k, slot)
	}
	for _, w := range meta.words() {
		r.nameWords.drop(w, slot)
	}
	r.shortKeys.drop(meta.short, slot)
	r.docs[slot] = docMeta{}
	r.nameTerms[slot] = 0
	r.wlen[slot] = 0
}

// weightedLen returns a slot's fields' lengths times their weights.
func (r *BM25F) weightedLen(slot int32) float64 {
	l := 0.0
	for f, n := range r.idx.lens[slot] {
		l += r.weight[f] * float64(n)
	}
	return l
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
	return r.searchParsed(q, r.parseQuery(q.Text))
}

// searchParsed answers q, already parsed as pq. Call it with r.mu held.
func (r *BM25F) searchParsed(q Query, pq parsedQuery) Result {
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
		for _, slot := range r.exact.get(pq.exactKey) {
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
	// The exact tools come first; the ranking fills the rest of the limit
	// from the other tools.
	s.skip = append(s.skip[:0], exact...)
	slices.Sort(s.skip)
	top, matchedAny := r.rankSlots(pq.slots, &c, s, max(0, limit-len(exact)))
	hits := make([]Hit, 0, min(limit, len(exact)+len(top)))
	for _, slot := range exact {
		hits = append(hits, Hit{Name: r.idx.slots[slot].name, Exact: true})
	}
	for _, e := range top {
		hits = append(hits, Hit{Name: r.idx.slots[e.slot].name, Score: e.score})
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

// selectHits answers a select: query: the named tools that are candidates,
// in the order named, each once, whatever the limit.
func (r *BM25F) selectHits(names []string, c *candidates) Result {
	var hits []Hit
	h := &Hint{}
	for _, name := range names {
		found := false
		for _, slot := range r.exact.get(normName(name)) {
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
