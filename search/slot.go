package search

import "slices"

// commonShare is the share of candidates above which a word the query used
// is common enough that its synonyms are not searched.
const commonShare = 0.1

// slotPlan is how one query slot scores documents, given the candidates.
//
// The slot's one-word alternatives (the word the query used, its
// translations and its synonyms) are scored as one term, the way a search
// engine scores synonyms: a document's weighted frequencies of all of them
// add up (a synonym the query did not use counts at its reduced weight),
// and the idf is that of the commonest word the query used, so a rare
// synonym cannot make a common word look specific. Several-word
// alternatives (pull request for PR) are scored as the sum of their words.
// A document's slot score is the best of the two.
type slotPlan struct {
	group    []groupTerm
	groupIDF float64
	phrases  []phrasePlan
	// matched reports whether any candidate contains any term.
	matched bool
}

type groupTerm struct {
	term   string
	weight float64
	list   []posting
	df     float64 // the candidates that contain the term
}

type phrasePlan struct {
	weight float64
	terms  []string
	idfs   []float64
	lists  [][]posting
}

// plan resolves a slot's terms against the candidates, without the
// several-word alternatives that can never score above another
// (undominated).
func (r *BM25F) plan(sl qslot, c *candidates) slotPlan {
	p := r.planAll(sl, c)
	p.phrases = undominated(p.phrases)
	return p
}

// planAll resolves a slot's terms against the candidates: every
// alternative that matches one.
func (r *BM25F) planAll(sl qslot, c *candidates) slotPlan {
	var p slotPlan
	n := float64(c.n)
	df := func(t string) ([]posting, float64) { // for several-word alternatives
		list := r.idx.list(t)
		if len(list) == 0 {
			return nil, 0
		}
		return list, float64(c.df(t, list))
	}
	// The one-word alternatives, each once: a word that is both a form the
	// query used and a synonym of another counts as used, at its highest
	// weight.
	at := make(map[string]int)
	var usedTerms []bool
	for _, alt := range sl.alts {
		if len(alt.terms) != 1 || alt.weight <= 0 {
			continue
		}
		t := alt.terms[0]
		if i, ok := at[t]; ok {
			g := &p.group[i]
			g.weight = max(g.weight, alt.weight)
			usedTerms[i] = usedTerms[i] || alt.used
			continue
		}
		list := r.idx.list(t)
		if len(list) == 0 {
			continue
		}
		at[t] = len(p.group)
		p.group = append(p.group, groupTerm{term: t, weight: alt.weight, list: list})
		usedTerms = append(usedTerms, alt.used)
	}
	// The highest document frequency among the words the query used, and
	// among all one-word alternatives.
	var usedDF, anyDF float64
	kept := p.group[:0]
	keptUsed := usedTerms[:0]
	for i, g := range p.group {
		f := float64(c.df(g.term, g.list))
		if f <= 0 {
			continue
		}
		g.df = f
		kept = append(kept, g)
		keptUsed = append(keptUsed, usedTerms[i])
		anyDF = max(anyDF, f)
		if usedTerms[i] {
			usedDF = max(usedDF, f)
		}
	}
	p.group, usedTerms = kept, keptUsed
	switch {
	case usedDF > 0:
		p.groupIDF = bm25IDF(n, usedDF)
	case anyDF > 0:
		p.groupIDF = bm25IDF(n, anyDF)
	}
	// A synonym the query did not use counts at most as much as its own
	// idf says: a common word (set, for settings) must not borrow the
	// specificity of the rare word the query used (configuration).
	if p.groupIDF > 0 {
		for i := range p.group {
			if usedTerms[i] {
				continue
			}
			g := &p.group[i]
			if idf := bm25IDF(n, g.df); idf < p.groupIDF {
				g.weight *= idf / p.groupIDF
			}
		}
	}
	// A word the query used that many tools contain needs no synonyms: they
	// would add little but cost a walk over more long posting lists.
	common := usedDF >= commonShare*n
	if common {
		kept := p.group[:0]
		for i, g := range p.group {
			if usedTerms[i] {
				kept = append(kept, g)
			}
		}
		p.group = kept
	}
	// Several-word alternatives the query did not use get at most the idf
	// of the words it did use.
	limit := p.groupIDF
	for _, alt := range sl.alts {
		if len(alt.terms) < 2 || !alt.used {
			continue
		}
		for _, t := range alt.terms {
			if _, f := df(t); f > 0 {
				limit = max(limit, bm25IDF(n, f))
			}
		}
	}
	for _, alt := range sl.alts {
		if len(alt.terms) < 2 || (common && !alt.used) || alt.weight <= 0 {
			continue
		}
		ph := phrasePlan{weight: alt.weight}
		for _, t := range alt.terms {
			list, f := df(t)
			if f <= 0 {
				continue
			}
			idf := bm25IDF(n, f)
			if !alt.used && limit > 0 {
				idf = min(idf, limit)
			}
			ph.terms = append(ph.terms, t)
			ph.idfs = append(ph.idfs, idf)
			ph.lists = append(ph.lists, list)
		}
		if len(ph.terms) > 0 {
			p.phrases = append(p.phrases, ph)
		}
	}
	p.matched = len(p.group) > 0 || len(p.phrases) > 0
	return p
}

// undominated returns phrases without those another dominates: a phrase
// whose words another has, each at an idf no lower, and whose weight is
// no higher, scores no higher in any document, since a word's score rises
// with its idf and every word adds a positive score; the slot takes its
// best alternative, so the dominated one changes nothing but costs a walk
// over its lists (web search beside search web). For its sum to be no
// higher to the last bit as well, the dominated phrase has at most two
// words (a sum of two is the same in either order) or has them in the
// same order. Of two phrases that dominate each other, the first stays.
func undominated(phrases []phrasePlan) []phrasePlan {
	if len(phrases) < 2 {
		return phrases
	}
	dominates := func(a, b *phrasePlan) bool { // whether a dominates b
		if a.weight < b.weight || len(a.terms) < len(b.terms) {
			return false
		}
		from := 0 // for the order: where in a to look for b's next word
		inOrder := true
		for i, t := range b.terms {
			j := slices.Index(a.terms, t)
			if j < 0 || a.idfs[j] < b.idfs[i] {
				return false
			}
			if j < from {
				inOrder = false
			}
			from = j + 1
		}
		return inOrder || len(b.terms) <= 2
	}
	var out []phrasePlan
	for i := range phrases {
		dropped := false
		for j := range phrases {
			if j != i && dominates(&phrases[j], &phrases[i]) && (j < i || !dominates(&phrases[i], &phrases[j])) {
				dropped = true
				break
			}
		}
		if !dropped {
			out = append(out, phrases[i])
		}
	}
	return out
}

// idf returns the slot's specificity: its group's idf, or the highest idf
// of a word of its several-word alternatives; 0 when nothing matched.
func (p *slotPlan) idf() float64 {
	idf := p.groupIDF
	for _, ph := range p.phrases {
		for _, v := range ph.idfs {
			idf = max(idf, v)
		}
	}
	return idf
}
