package search

import (
	"slices"
	"strings"
	"unicode"
)

// maxSlots is the most query slots scored; later words are ignored.
const maxSlots = 64

// parsedQuery is a toolshelf query after analysis.
type parsedQuery struct {
	// selectNames lists the names of a select: query, nil otherwise.
	selectNames []string
	// exactKey is the normalised query when it could be a tool name.
	exactKey string
	slots    []qslot
	// words lists the query's words in order, for finding the product a
	// request acts on.
	words []qword
}

// qword is one word of a query as written.
type qword struct {
	text   string // lowercase
	cjk    bool
	handle bool // a #channel, @user or number, not part of the sentence
}

// qslot is one unit of meaning in a query: a word, a phrase found in the
// synonym table, or a CJK dictionary word. A document's score for a slot is
// the best of the slot's alternatives.
type qslot struct {
	surface  string // the query text the slot came from
	required bool   // written as +term
	alts     []qalt
}

// qalt is one way to match a slot: every term of it counts, scaled by the
// weight.
type qalt struct {
	terms  []string
	weight float64
	// used marks a form the query itself used (or a translation of it), as
	// opposed to a synonym the table supplied.
	used bool
	// ident marks an identifier the query spelled out (outOfOffice,
	// state_reason, the key of key=value): it names a tool or a parameter,
	// so a match in the parameters counts more.
	ident bool
}

// unit is one analysed word part of a query, before synonym matching.
type unit struct {
	term     string
	surface  string
	required bool
	ident    bool
}

// parseQuery analyses a toolshelf query. Call it with r.mu held: whether a
// compound word is matched whole depends on the index's vocabulary.
//
// Syntax: "select:a,b" names tools exactly; a query that is one tool name
// (with or without its mcp__server__ prefix) puts that tool first; "+word"
// requires a word (or one of its synonyms); everything else is free text.
func (r *BM25F) parseQuery(text string) parsedQuery {
	text = strings.TrimSpace(text)
	var pq parsedQuery
	if len(text) >= 7 && strings.EqualFold(text[:7], "select:") {
		for _, n := range strings.Split(text[7:], ",") {
			if n = strings.TrimSpace(n); n != "" {
				pq.selectNames = append(pq.selectNames, n)
			}
		}
		if pq.selectNames == nil {
			pq.selectNames = []string{}
		}
		return pq
	}
	if text != "" && !strings.ContainsFunc(text, isSpace) && text[0] != '+' {
		pq.exactKey = normName(text)
	}
	var units []unit
	flushUnits := func() {
		pq.slots = append(pq.slots, r.synonymSlots(units)...)
		units = units[:0]
	}
	for _, chunk := range strings.Fields(text) {
		required := len(chunk) > 1 && chunk[0] == '+'
		if required {
			chunk = chunk[1:]
		}
		if looksLikePath(chunk) {
			// A path says "a file"; its folders rarely say what to do
			// with it, but its base name may say what it is
			// (.gitlab-ci.yml).
			flushUnits()
			pq.slots = append(pq.slots, qslot{surface: chunk, required: required,
				alts: r.expandAlt([]string{r.an.stem.stem("file")})})
			chunk = strings.TrimRight(chunk, "`'\"()[]{}<>,;:!?")
			chunk = chunk[strings.LastIndexAny(chunk, "/\\")+1:]
			if dot := strings.LastIndexByte(chunk, '.'); dot > 0 {
				chunk = chunk[:dot]
			}
			if chunk == "" {
				continue
			}
		}
		handle := strings.ContainsAny(chunk[:1], "#@0123456789")
		// In key=value the key is a parameter name.
		key := ""
		if k, _, ok := strings.Cut(chunk, "="); ok && k != "" {
			key = k
		}
		scan(chunk, func(w rawWord) {
			pq.words = append(pq.words, qword{text: strings.ToLower(w.text), cjk: w.cjk, handle: handle})
			if w.cjk {
				flushUnits()
				pq.slots = append(pq.slots, r.cjkSlots(w.text, required)...)
				return
			}
			pieces := strings.FieldsFunc(w.text, func(r rune) bool { return r == '_' || r == '-' })
			for _, piece := range pieces {
				parts := splitIdentifier(piece)
				if len(parts) > 1 {
					// A camel-case word the catalog knows whole
					// (GitHub, PromQL) is matched whole; its parts
					// would match unrelated tools (hub in HubSpot).
					if c := r.an.compound(parts); len(r.idx.list(c)) > 0 {
						units = append(units, unit{term: c, surface: w.text, required: required, ident: true})
						continue
					}
				}
				for _, p := range parts {
					if t, ok := r.an.word(p); ok {
						units = append(units, unit{term: t, surface: w.text, required: required,
							ident: w.end <= len(key)})
					}
				}
			}
			if len(pieces) > 1 {
				// An identifier typed whole (state_reason) also
				// matches tools that have exactly that identifier.
				if c := r.an.compound(splitIdentifier(w.text)); len(r.idx.list(c)) > 0 {
					pq.slots = append(pq.slots, qslot{surface: w.text,
						alts: []qalt{{terms: []string{c}, weight: 1, used: true, ident: true}}})
				}
			}
		})
	}
	flushUnits()
	pq.slots = mergeSlots(pq.slots)
	if len(pq.slots) > maxSlots {
		pq.slots = pq.slots[:maxSlots]
	}
	return pq
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\u3000' }

// synonymSlots turns consecutive word units into slots, joining the words
// of a synonym form into one slot whose alternatives are the group's forms.
func (r *BM25F) synonymSlots(units []unit) []qslot {
	var slots []qslot
	terms := make([]string, len(units))
	for i, u := range units {
		terms[i] = u.term
	}
	for i := 0; i < len(units); {
		n, forms := r.syn.match(terms[i:])
		if n == 0 {
			u := units[i]
			slots = append(slots, qslot{surface: u.surface, required: u.required,
				alts: []qalt{{terms: []string{u.term}, weight: 1, used: true, ident: u.ident}}})
			i++
			continue
		}
		s := qslot{}
		var surfaces []string
		for _, u := range units[i : i+n] {
			if !slices.Contains(surfaces, u.surface) {
				surfaces = append(surfaces, u.surface)
			}
			s.required = s.required || u.required
		}
		s.surface = strings.Join(surfaces, " ")
		matched := terms[i : i+n]
		for _, f := range forms {
			if slices.Equal(f, matched) {
				s.alts = append(s.alts, qalt{terms: f, weight: 1, used: true})
			} else {
				s.alts = append(s.alts, qalt{terms: f, weight: r.synWeight})
			}
		}
		slots = append(slots, s)
		i += n
	}
	return slots
}

// cjkSlots turns a CJK run into slots: each dictionary word matches its
// English translations or its own characters; each unknown stretch matches
// its character bigrams. Function words are skipped.
func (r *BM25F) cjkSlots(run string, required bool) []qslot {
	var slots []qslot
	for _, seg := range r.an.bilingual.segment(run) {
		if seg.known && len(seg.translations) == 0 {
			continue
		}
		s := qslot{surface: seg.text, required: required}
		for _, tr := range seg.translations {
			if terms := r.an.fieldTerms(strings.Join(tr, " "), nil); len(terms) > 0 {
				s.alts = append(s.alts, r.expandAlt(terms)...)
			}
		}
		s.alts = append(s.alts, qalt{terms: appendBigrams(seg.text, nil), weight: 1, used: true})
		slots = append(slots, s)
	}
	return slots
}

// expandAlt returns a word or translation the query used as an alternative
// plus, when it is a whole synonym form, the other forms of its group.
func (r *BM25F) expandAlt(terms []string) []qalt {
	alts := []qalt{{terms: terms, weight: 1, used: true}}
	if n, forms := r.syn.match(terms); n == len(terms) {
		for _, f := range forms {
			if !slices.Equal(f, terms) {
				alts = append(alts, qalt{terms: f, weight: r.synWeight})
			}
		}
	}
	return alts
}

// mergeSlots drops slots that repeat an earlier slot's alternatives, so a
// repeated word counts once (a repeat of a required word makes the first
// one required).
func mergeSlots(slots []qslot) []qslot {
	out := slots[:0]
	keys := make(map[string]int, len(slots))
	for _, s := range slots {
		var b strings.Builder
		for _, a := range s.alts {
			b.WriteString(strings.Join(a.terms, " "))
			b.WriteByte('|')
		}
		k := b.String()
		if i, ok := keys[k]; ok {
			out[i].required = out[i].required || s.required
			continue
		}
		keys[k] = len(out)
		out = append(out, s)
	}
	return out
}

// normName normalises a tool name for exact matching: lowercase, with every
// run of characters other than letters and digits turned into one
// underscore, so read-file, Read_File and read.file agree.
func normName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	sep := false
	for _, r := range strings.ToLower(s) {
		if classify(r) == scriptWord || classify(r) == scriptCJK {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
			continue
		}
		sep = true
	}
	return b.String()
}

// fileExtensions are extensions that mark a word as a file name.
var fileExtensions = makeSet(`bash c cc cfg cjs conf cpp cs css csv doc docx env gif go gql graphql gz h
hpp htm html ini ipynb java jpeg jpg js json jsonl jsx kt lock log md markdown mjs mp3 mp4 pdf php png
pptx proto ps1 py rb rs scss sh sql svg swift tar tgz toml ts tsv tsx txt vue wav webp xls xlsx xml
yaml yml zip zsh`)

// looksLikePath reports whether a query word is a file path: it starts
// with /, ./, ../ or ~/, or it is a file name with a known extension
// (budget.xlsx, src/main.go, .gitlab-ci.yml) whose base is not a
// capitalised word (Next.js and Vue.js are products). URLs are not paths.
func looksLikePath(w string) bool {
	w = strings.Trim(w, "`'\"()[]{}<>,;:!?")
	if w == "" || strings.Contains(w, "://") {
		return false
	}
	for _, p := range []string{"/", "./", "../", "~/"} {
		if strings.HasPrefix(w, p) && len(w) > len(p) {
			return true
		}
	}
	dot := strings.LastIndexByte(w, '.')
	if dot < 0 || !fileExtensions[strings.ToLower(w[dot+1:])] {
		return false
	}
	base := w[strings.LastIndexAny(w[:dot], "/\\")+1 : dot]
	return base == "" || strings.ContainsAny(base, "/\\_-.0123456789") || !isCapitalised(base)
}

// isCapitalised reports whether w is a capital followed by lowercase
// letters (Next, Vue), as product names are written.
func isCapitalised(w string) bool {
	rs := []rune(w)
	if len(rs) < 2 || !unicode.IsUpper(rs[0]) {
		return false
	}
	for _, r := range rs[1:] {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return true
}
