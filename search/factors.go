package search

import (
	"math"
	"math/bits"
)

// rank returns the k best scored tools, best first, by their final
// score: their sum over the slots times the name factor × (1 + boost ×
// coverage × √share), where boost is [Params.NameBoost], coverage is the
// share of the tool's name words the query matched and share the part of
// the query's idf mass (the sum of its slots' idfs) in the slots that
// matched the name. Ties go to the tool indexed first.
//
// Most tools of a large result cannot be among the k best: once k are
// kept, a tool whose sum times the largest factor, 1 + boost, is below the
// worst kept is passed over without computing its factor.
func (r *BM25F) rank(s *scratch, k int) []ranked {
	boost := r.params.NameBoost
	total := 0.0
	for _, v := range s.slotIDF {
		total += v
	}
	scale := boost != 0 && total != 0
	maxFactor := 1.0
	if scale && boost > 0 {
		maxFactor = 1 + boost
	}
	top := &s.top
	top.reset(k)
	for _, d := range s.touched {
		v := s.score[d]
		if !(v > 0) || !top.admits(v*maxFactor) {
			continue
		}
		if hit := s.name[d]; scale && hit != 0 {
			v *= nameFactor(boost, hit, int(r.nameTerms[d]), s.slotIDF, total)
		}
		if v > 0 && top.admits(v) {
			top.add(v, r.idx.slots[d].seq, d)
		}
	}
	return top.sorted()
}

// nameFactor is the factor for a tool whose name has n distinct words when
// the query slots in the bit set hit matched it; idf holds the slots' idfs
// and total their sum. A tool whose name the query spells out (get + teams
// for "linear teams") is more likely meant than one that shares the same
// words but names more (removeUserFromTeam); a name word the query uses
// only in passing (a date, a topic word of a long request) explains little
// of it and earns little.
func nameFactor(boost float64, hit uint64, n int, idf []float64, total float64) float64 {
	if n == 0 || hit == 0 || total <= 0 {
		return 1
	}
	share := 0.0
	for h := hit; h != 0; h &= h - 1 {
		share += idf[bits.TrailingZeros64(h)]
	}
	coverage := min(1, float64(bits.OnesCount64(hit))/float64(n))
	return 1 + boost*coverage*math.Sqrt(min(1, share/total))
}
