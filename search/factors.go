package search

import (
	"math"
	"math/bits"
)

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
