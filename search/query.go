package search

import (
	"slices"
	"strings"
)

// maxSlots is the most query slots scored; later words are ignored. The
// first 63 slots are told apart in the name factor and +required checks;
// later ones count together there ([slotBit]).
const maxSlots = 512

// longQueryWords is the most words of a query that is not a long request.
const longQueryWords = 6

// parsedQuery is a toolshelf query after analysis.
type parsedQuery struct {
	// selectNames lists the names of a select: query, nil otherwise.
	selectNames []string
	// exactKey is the normalised query when it could be a tool name.
	exactKey string
	slots    []qslot
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
}

// unit is one analysed word part of a query, before synonym matching.
type unit struct {
	term     string
	surface  string
	required bool
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
	// A long request is in the user's own words: its synonyms count for
	// less ([Params.LongSynonym]).
	synW := r.params.Synonym
	if len(strings.Fields(text)) > longQueryWords {
		synW *= r.params.LongSynonym
	}
	var units []unit
	flushUnits := func() {
		pq.slots = append(pq.slots, r.synonymSlots(units, synW)...)
		units = units[:0]
	}
	for _, chunk := range strings.Fields(text) {
		required := len(chunk) > 1 && chunk[0] == '+'
		if required {
			chunk = chunk[1:]
		}
		scan(chunk, func(w rawWord) {
			if w.cjk {
				flushUnits()
				pq.slots = append(pq.slots, r.cjkSlots(w.text, required, synW)...)
				return
			}
			if r.an.refWords {
				for _, p := range piWords(w.text) {
					if t, ok := r.an.word(p); ok {
						units = append(units, unit{term: t, surface: w.text, required: required})
					}
				}
				return
			}
			pieces := strings.FieldsFunc(w.text, func(r rune) bool { return r == '_' || r == '-' })
			for _, piece := range pieces {
				parts := r.an.split(piece)
				if len(parts) > 1 && !r.an.noJoined {
					// A camel-case word the catalog knows whole
					// (GitHub, PromQL) is matched whole; its parts
					// would match unrelated tools (hub in HubSpot).
					if c := r.an.compound(parts); len(r.idx.list(c)) > 0 {
						units = append(units, unit{term: c, surface: w.text, required: required})
						continue
					}
				}
				for _, p := range parts {
					if t, ok := r.an.word(p); ok {
						units = append(units, unit{term: t, surface: w.text, required: required})
					}
				}
			}
			if len(pieces) > 1 && !r.an.noJoined {
				// An identifier typed whole (state_reason) also
				// matches tools that have exactly that identifier.
				if c := r.an.compound(splitIdentifier(w.text)); len(r.idx.list(c)) > 0 {
					pq.slots = append(pq.slots, qslot{surface: w.text,
						alts: []qalt{{terms: []string{c}, weight: 1, used: true}}})
				}
			}
		})
	}
	flushUnits()
	r.addFamilies(pq.slots)
	pq.slots = mergeSlots(pq.slots)
	if len(pq.slots) > maxSlots {
		pq.slots = pq.slots[:maxSlots]
	}
	return pq
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\u3000' }

// addFamilies adds to each slot the other index terms of the Porter2
// family of each one-word form the query used, at [Params.Stem] times the
// form's weight, as forms the query did not use.
func (r *BM25F) addFamilies(slots []qslot) {
	w := r.params.Stem
	if w == 0 {
		return
	}
	for i := range slots {
		s := &slots[i]
		n := len(s.alts)
		for _, a := range s.alts[:n] {
			if len(a.terms) != 1 || !a.used {
				continue
			}
			for _, t := range r.families[r.an.stem.family(a.terms[0])] {
				if t != a.terms[0] {
					s.alts = append(s.alts, qalt{terms: []string{t}, weight: w * a.weight})
				}
			}
		}
	}
}

// synonymSlots turns consecutive word units into slots, joining the words
// of a synonym form into one slot whose alternatives are the group's forms,
// a synonym at weight synW.
func (r *BM25F) synonymSlots(units []unit, synW float64) []qslot {
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
				alts: []qalt{{terms: []string{u.term}, weight: 1, used: true}}})
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
			if r.syn.alias(matched, f) {
				s.alts = append(s.alts, qalt{terms: f, weight: 1, used: true})
			} else {
				s.alts = append(s.alts, qalt{terms: f, weight: synW})
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
func (r *BM25F) cjkSlots(run string, required bool, synW float64) []qslot {
	var slots []qslot
	for _, seg := range r.an.bilingual.segment(run) {
		if seg.known && len(seg.translations) == 0 {
			continue
		}
		s := qslot{surface: seg.text, required: required}
		for _, tr := range seg.translations {
			if terms := r.an.fieldTerms(strings.Join(tr, " "), nil); len(terms) > 0 {
				s.alts = append(s.alts, r.expandAlt(terms, synW)...)
			}
		}
		s.alts = append(s.alts, qalt{terms: r.an.bigrams(seg.text, nil), weight: 1, used: true})
		slots = append(slots, s)
	}
	return slots
}

// expandAlt returns a word or translation the query used as an alternative
// plus, when it is a whole synonym form, the other forms of its group.
func (r *BM25F) expandAlt(terms []string, synW float64) []qalt {
	alts := []qalt{{terms: terms, weight: 1, used: true}}
	if n, forms := r.syn.match(terms); n == len(terms) {
		for _, f := range forms {
			switch {
			case slices.Equal(f, terms):
			case r.syn.alias(terms, f):
				alts = append(alts, qalt{terms: f, weight: 1, used: true})
			default:
				alts = append(alts, qalt{terms: f, weight: synW})
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
