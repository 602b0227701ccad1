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
	docs      []docMeta          // by slot
	exact     map[string][]int32 // normalised names → slots, for hints
	nameWords map[string][]int32 // words of normalised names → slots, for hints
	shortKeys map[string][]int32 // normalised names without server prefix → slots, for hints
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
		off:       off,
		params:    p,
		weight:    p.fields(),
		an:        an,
		syn:       buildSynonyms(an, groups, aliases),
		idx:       newPostings(),
		exact:     make(map[string][]int32),
		nameWords: make(map[string][]int32),
		shortKeys: make(map[string][]int32),
		families:  make(map[string][]string),
	}
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
		if schema, err := parseSchema(d.Parameters); err == nil {
			w.field = fieldParams
			r.schemaText(schema, newTextBudget(), func(text string) {
				a.lens[fieldParams] += w.text(r.an, text)
			})
		}
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
	}
	meta := a.meta
	r.docs[slot] = meta
	r.nameTerms[slot] = a.nameTerms
	r.wlen[slot] = float32(r.weightedLen(slot))
	for _, k := range meta.keys {
		r.exact[k] = append(r.exact[k], slot)
	}
	for _, w := range a.words {
		r.nameWords[w] = append(r.nameWords[w], slot)
	}
	r.shortKeys[meta.short] = append(r.shortKeys[meta.short], slot)
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
	top := r.rank(s, limit+len(exact))
	hits := make([]Hit, 0, min(limit, len(exact)+len(top)))
	for _, slot := range exact {
		hits = append(hits, Hit{Name: r.idx.slots[slot].name, Exact: true})
	}
	for _, e := range top {
		if slices.Contains(exact, e.slot) {
			continue
		}
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

// score adds every candidate's score into s.score, lists the scored
// documents in s.touched and leaves the slots' idfs in s.slotIDF. It
// returns, per slot, whether any candidate contains any of its terms.
func (r *BM25F) score(slots []qslot, c *candidates, s *scratch) []bool {
	matchedAny := make([]bool, len(slots))
	if c.n <= 0 {
		return matchedAny
	}
	nm := r.normsFor(c)
	excl := len(c.excluded) > 0
	var required uint64
	for si, sl := range slots {
		if sl.required {
			required |= slotBit(si)
		}
	}
	// Which slots matched a document matters only for required words.
	s.usedFlags = required != 0
	slotDocs := s.slotDocs[:0]
	defer func() { s.slotDocs = slotDocs[:0] }()
	// touch adds v to document d's score.
	touch := func(d int32, bit uint64, v float64) {
		if s.score[d] == 0 {
			s.touched = append(s.touched, d)
		}
		if s.usedFlags {
			s.flags[d] |= bit
		}
		s.score[d] += v
	}
	for si, sl := range slots {
		bit := slotBit(si)
		plan := r.plan(sl, c)
		matchedAny[si] = plan.matched
		s.slotIDF = append(s.slotIDF, plan.idf())
		if len(plan.group) == 1 && len(plan.phrases) == 0 {
			r.scoreTerm(&plan.group[0], plan.groupIDF, bit, c, s, nm)
			continue
		}
		slotDocs = slotDocs[:0]
		// The one-word alternatives add up their weighted frequencies
		// in alt.sum, then saturate once.
		for _, g := range plan.group {
			for i := range g.list {
				p := &g.list[i]
				if excl && c.mask[p.slot] {
					continue
				}
				v := g.weight * r.tfw(p)
				if v <= 0 {
					continue // a field or synonym weighted 0
				}
				a := &s.alt[p.slot]
				if a.sum == 0 {
					s.altSeen = append(s.altSeen, p.slot)
				}
				a.sum += v
				if p.tf[fieldName] > 0 {
					s.setName(p.slot, bit)
				}
			}
		}
		if len(plan.phrases) == 0 {
			// The group is the slot's only alternative: its score is the
			// slot's.
			for _, d := range s.altSeen {
				a := &s.alt[d]
				v := nm.saturate(plan.groupIDF, a.sum, r.wlen[d])
				a.sum = 0
				if v > 0 {
					touch(d, bit, v)
				}
			}
			s.altSeen = s.altSeen[:0]
			continue
		}
		// keep records v as document d's slot score when it beats the
		// best alternative so far.
		keep := func(a *altAcc, d int32, v float64) {
			if v > a.slotMax {
				if a.slotMax == 0 {
					slotDocs = append(slotDocs, d)
				}
				a.slotMax = v
			}
		}
		for _, d := range s.altSeen {
			a := &s.alt[d]
			keep(a, d, nm.saturate(plan.groupIDF, a.sum, r.wlen[d]))
			a.sum = 0
		}
		s.altSeen = s.altSeen[:0]
		// Each several-word alternative sums its words' scores.
		for _, ph := range plan.phrases {
			for i, list := range ph.lists {
				idf := ph.idfs[i]
				for j := range list {
					p := &list[j]
					if excl && c.mask[p.slot] {
						continue
					}
					v := nm.saturate(idf, r.tfw(p), r.wlen[p.slot])
					if v <= 0 {
						continue
					}
					a := &s.alt[p.slot]
					if a.sum == 0 {
						s.altSeen = append(s.altSeen, p.slot)
					}
					a.sum += v
					if p.tf[fieldName] > 0 {
						s.setName(p.slot, bit)
					}
				}
			}
			for _, d := range s.altSeen {
				a := &s.alt[d]
				keep(a, d, ph.weight*a.sum)
				a.sum = 0
			}
			s.altSeen = s.altSeen[:0]
		}
		for _, d := range slotDocs {
			a := &s.alt[d]
			touch(d, bit, a.slotMax)
			a.slotMax = 0
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

// slotBit is the bit of the si-th query slot in the per-document bit sets
// (which slots matched, which matched the name): its own for the first 63,
// one shared by all later slots, which a long request may have.
func slotBit(si int) uint64 { return 1 << min(si, 63) }

// scoreTerm adds the scores of a slot that is one term, the commonest
// case, in one pass over its postings: what score does for a slot of
// several alternatives, without accumulating them first.
func (r *BM25F) scoreTerm(g *groupTerm, idf float64, bit uint64, c *candidates, s *scratch, nm *norms) {
	excl := len(c.excluded) > 0
	flags := s.usedFlags
	for i := range g.list {
		p := &g.list[i]
		d := p.slot
		if excl && c.mask[d] {
			continue
		}
		v := nm.saturate(idf, g.weight*r.tfw(p), r.wlen[d])
		if v <= 0 {
			continue
		}
		if p.tf[fieldName] > 0 {
			s.setName(d, bit)
		}
		if s.score[d] == 0 {
			s.touched = append(s.touched, d)
		}
		if flags {
			s.flags[d] |= bit
		}
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

// norms are the length-normalisation constants of one search: a document
// of weighted length l normalises a term's frequency by k1 × (1 - b + b ×
// l / average), which is add + mul × l. They depend only on the
// candidates' average lengths, so searches over the same candidates share
// them.
type norms struct {
	avg      [maxFields]float64
	add, mul float64
	k1       float64
}

// normsFor returns the constants for the candidates' average lengths,
// reusing the last ones when they have not changed.
func (r *BM25F) normsFor(c *candidates) *norms {
	var avg [maxFields]float64
	for f := range numFields {
		avg[f] = c.avgLen(f)
	}
	if nm := r.lastNorms.Load(); nm != nil && nm.avg == avg {
		return nm
	}
	// The weighted average from the raw sums: avgLen reads an empty
	// field as of length 1.
	wavg := 0.0
	if c.n > 0 {
		for f := range numFields {
			wavg += r.weight[f] * c.sumLen[f] / float64(c.n)
		}
	}
	k1, b := r.params.K1, r.params.B
	nm := &norms{avg: avg, add: k1 * (1 - b), k1: k1}
	if wavg > 0 {
		nm.mul = k1 * b / wavg
	} else {
		nm.add = k1
	}
	r.lastNorms.Store(nm)
	return nm
}

// tfw is BM25F's pseudo term frequency of a posting: the field
// frequencies times the fields' weights, summed. It adds every field,
// those the term is not in as 0, which leaves the sum as it would be
// without them and spares a branch per field.
func (r *BM25F) tfw(p *posting) float64 {
	var tfw float64
	for f := range numFields {
		tfw += r.weight[f] * float64(p.tf[f])
	}
	return tfw
}

// saturate turns a term's weighted frequency in a document of weighted
// length wlen into its score.
func (nm *norms) saturate(idf, tfw float64, wlen float32) float64 {
	return idf * tfw * (nm.k1 + 1) / (tfw + nm.add + nm.mul*float64(wlen))
}
