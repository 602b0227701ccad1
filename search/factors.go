package search

import (
	"math/bits"
	"slices"
)

// nameCoverageBoost is how much more a tool scores when the query covers
// every word of its name: a tool whose name the query spells out (get +
// teams for "linear teams") is more likely meant than one that shares the
// same words but names more (removeUserFromTeam).
const nameCoverageBoost = 0.1

// scaleScores applies, in one pass over the scored tools, the name
// coverage factor, the home product boost when the query names exactly one
// product, and the demotion of products a cross-product request names only
// as context (which needs two named products, so a tool gets at most one
// of the two).
func (r *BM25F) scaleScores(pq parsedQuery, s *scratch) {
	named, context := r.productMentions(pq.words)
	var home int32 = -1
	if len(named) == 1 {
		if id, ok := r.productIDs[named[0]]; ok {
			home = id
		}
	}
	var demoted []int32
	for _, p := range context {
		if id, ok := r.productIDs[p]; ok {
			demoted = append(demoted, id)
		}
	}
	for _, d := range s.touched {
		sh := r.shapes[d]
		f := 1.0
		if hit := s.alt[d].name; hit != 0 {
			f = nameCoverage(bits.OnesCount64(hit), int(sh.nameTerms))
		}
		switch {
		case sh.product == home:
			f *= homeProductBoost
		case len(demoted) > 0 && slices.Contains(demoted, sh.product):
			f *= crossProductDemotion
		}
		s.score[d] *= f
	}
}

// nameCoverage is the factor for a tool whose name has n distinct words
// when hit query slots matched one of them.
func nameCoverage(hit, n int) float64 {
	if n == 0 || hit == 0 {
		return 1
	}
	return 1 + nameCoverageBoost*min(1, float64(hit)/float64(n))
}

// homeProductBoost scales the tools of the one product a query names: a
// request that says "postgres" or "datadog" means that product's own
// server before another server's tools that mention it (a cloud
// provider's postgres_list, datadog_monitoredresources_list).
const homeProductBoost = 1.6
