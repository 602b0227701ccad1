package search

import "math/bits"

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
// frequencies times the fields' weights, summed in field order over the
// fields the term is in (most terms are in one or two of them).
func (r *BM25F) tfw(p *posting) float64 {
	var tfw float64
	for in := p.in; in != 0; in &= in - 1 {
		f := bits.TrailingZeros8(in)
		tfw += r.weight[f] * float64(p.tf[f])
	}
	return tfw
}

// saturate turns a term's weighted frequency in a document of weighted
// length wlen into its score.
func (nm *norms) saturate(idf, tfw float64, wlen float32) float64 {
	return idf * tfw * (nm.k1 + 1) / (tfw + nm.add + nm.mul*float64(wlen))
}
