package search

import (
	"slices"
	"strings"
)

// The index's former build, kept as the oracle that TestBuildOracle
// compares Add with: each document analysed into its fields' tokens
// (oracleAnalyze), then indexed one after the other (oracleAdd).

// analyzed is a document after analysis.
type analyzed struct {
	fields [][]string
	meta   docMeta
	// nameTerms is the number of distinct words of the tool's own name.
	nameTerms int
}

// oracleAnalyze is the former analyze: it splits a document into its fields' terms. serverText holds the
// analysed text of each server (serverTextKey); analyze only reads it, so
// that documents can be analysed at once.
func (r *BM25F) oracleAnalyze(d Document, serverText map[string][]string) analyzed {
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
			fields[fieldParams] = r.oracleSchemaTerms(schema, nil, newTextBudget())
		}
	}
	// The namespace as the reference reads it: mcp__github is mcp and github.
	fields[fieldServer] = r.an.fieldTerms(clipText(d.Namespace.Name, maxFieldText), nil)
	fields[fieldServerText] = serverText[serverTextKey(d.Namespace)]

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

// oracleSchemaTerms is the former schemaTerms: it collects the searchable text of a JSON Schema: property
// names (as identifiers), descriptions, titles and string enum values,
// following properties, items, additionalProperties, the anyOf, oneOf and
// allOf variants and $defs/definitions, until the text budget is spent.
func (r *BM25F) oracleSchemaTerms(n *node, out []string, b *textBudget) []string {
	if n == nil || n.kind != 'o' || *b <= 0 {
		return out
	}
	keys := []string{"title", "description"}
	if r.off.Has(FactorSchemaText) {
		keys = keys[1:]
	}
	for _, key := range keys {
		if v := n.get(key); v != nil && v.kind == 's' {
			out = r.an.fieldTerms(b.take(v.str), out)
		}
	}
	if r.off.Has(FactorSchemaText) {
		// The reference's schema text: descriptions and property names,
		// through properties, items and the variants.
		if props := n.get("properties"); props != nil && props.kind == 'o' {
			for i, name := range props.keys {
				out = r.an.fieldTerms(b.take(name), out)
				out = r.oracleSchemaTerms(props.vals[i], out, b)
			}
		}
		out = r.oracleSchemaTerms(n.get("items"), out, b)
		for _, key := range []string{"anyOf", "oneOf", "allOf"} {
			if vs := n.get(key); vs != nil && vs.kind == 'a' {
				for _, v := range vs.elems {
					out = r.oracleSchemaTerms(v, out, b)
				}
			}
		}
		return out
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
			out = r.oracleSchemaTerms(props.vals[i], out, b)
		}
	}
	out = r.oracleSchemaTerms(n.get("items"), out, b)
	out = r.oracleSchemaTerms(n.get("additionalProperties"), out, b)
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if vs := n.get(key); vs != nil && vs.kind == 'a' {
			for _, v := range vs.elems {
				out = r.oracleSchemaTerms(v, out, b)
			}
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		if defs := n.get(key); defs != nil && defs.kind == 'o' {
			for _, v := range defs.vals {
				out = r.oracleSchemaTerms(v, out, b)
			}
		}
	}
	return out
}

// oracleAdd is the former postings.add: it indexes a document given as tokens per field (at most maxFields),
// replacing a live document of the same name in place, and calls newTerm
// (if not nil) with each term the index did not have. It returns the
// document's slot.
func (p *postings) oracleAdd(name string, fields [][]string, newTerm func(string)) int32 {
	slot, exists := p.byName[name]
	var seq uint64
	if exists {
		seq = p.slots[slot].seq
		p.unindex(slot)
	} else {
		p.seq++
		seq = p.seq
		if n := len(p.free); n > 0 {
			slot = p.free[n-1]
			p.free = p.free[:n-1]
		} else {
			slot = int32(len(p.slots))
			p.slots = append(p.slots, docSlot{})
			p.lens = append(p.lens, [maxFields]uint32{})
		}
		p.byName[name] = slot
	}
	d := docSlot{name: name, seq: seq, live: true}
	// The document's postings, built in place: at maps a term id to its
	// posting in ps, plus one.
	var ps []posting
	at := make(map[int32]int32)
	for f, toks := range fields {
		p.lens[slot][f] = uint32(len(toks))
		p.sumLen[f] += float64(len(toks))
		for _, tok := range toks {
			id, ok := p.termID[tok]
			if !ok {
				// A copy: the term may be cut from a document's text,
				// which the index must not keep alive.
				tok = strings.Clone(tok)
				id = int32(len(p.lists))
				p.termID[tok] = id
				p.lists = append(p.lists, nil)
				if newTerm != nil {
					newTerm(tok)
				}
			}
			i := at[id] - 1
			if i < 0 {
				i = int32(len(ps))
				at[id] = i + 1
				ps = append(ps, posting{slot: slot})
				d.terms = append(d.terms, id)
			}
			if pp := &ps[i]; pp.tf[f] < maxTF {
				pp.tf[f]++
			}
		}
	}
	slices.Sort(d.terms)
	for _, id := range d.terms {
		p.insert(id, ps[at[id]-1])
	}
	p.slots[slot] = d
	p.live++
	return slot
}

// oracleAdd is the former BM25F.Add, one document after the other on one
// goroutine.
func (r *BM25F) oracleAdd(docs ...Document) {
	serverText := make(map[string][]string)
	for _, d := range docs {
		ns := d.Namespace
		key := serverTextKey(ns)
		if _, ok := serverText[key]; ok || key == "" {
			continue
		}
		terms := r.an.fieldTerms(clipText(ns.Description, maxFieldText), nil)
		serverText[key] = r.an.fieldTerms(clipText(ns.Instructions, maxFieldText), terms)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range docs {
		a := r.oracleAnalyze(d, serverText)
		if old, ok := r.idx.byName[d.Name]; ok {
			r.dropMeta(old)
		}
		slot := r.idx.oracleAdd(d.Name, a.fields, r.addFamily)
		for int(slot) >= len(r.docs) {
			r.docs = append(r.docs, docMeta{})
			r.nameTerms = append(r.nameTerms, 0)
			r.wlen = append(r.wlen, 0)
			r.ids = append(r.ids, int32(len(r.ids)))
		}
		meta := a.meta
		r.docs[slot] = meta
		r.nameTerms[slot] = uint8(min(a.nameTerms, 255))
		r.wlen[slot] = float32(r.weightedLen(slot))
		for _, k := range meta.keys {
			r.exact.add(k, slot)
		}
		for _, w := range meta.words() {
			r.nameWords.add(w, slot)
		}
		r.shortKeys.add(meta.short, slot)
	}
}

// oracleAdd is the former PI.Add.
func (r *PI) oracleAdd(docs ...Document) {
	toks := make([][]string, len(docs))
	for i, d := range docs {
		toks[i] = piTokenize(piDocumentText(d))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, d := range docs {
		r.idx.oracleAdd(d.Name, [][]string{toks[i]}, nil)
	}
}
