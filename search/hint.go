package search

import (
	"cmp"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// maxNearest is how many tool names a hint suggests.
const maxNearest = 3

// hint explains an empty result: the visible slots no candidate matches,
// and the candidate names closest to them (or to the whole query).
func (r *BM25F) hint(slots []qslot, matchedAny []bool, c *candidates, text string) *Hint {
	h := &Hint{}
	for i, sl := range slots {
		if !matchedAny[i] && !slices.Contains(h.Unmatched, sl.surface) {
			h.Unmatched = append(h.Unmatched, sl.surface)
		}
	}
	probe := h.Unmatched
	if len(probe) == 0 {
		if t := strings.TrimSpace(text); t != "" {
			probe = []string{t}
		}
	}
	h.Nearest = r.nearest(probe, c)
	if len(h.Unmatched) == 0 && len(h.Nearest) == 0 {
		return nil
	}
	return h
}

// nearest returns the candidate names that look most like any of the
// probes: by edit distance between the normalised probe and the tool's
// names (full and server-local) or any word of them, relative to the
// probe's length. Names further than half the probe's length are not
// suggested.
func (r *BM25F) nearest(probes []string, c *candidates) []string {
	if len(probes) == 0 {
		return nil
	}
	keys := make([]string, 0, len(probes))
	for _, p := range probes {
		if k := normName(p); k != "" {
			keys = append(keys, k)
		}
	}
	type cand struct {
		name string
		dist float64
		seq  uint64
	}
	var best []cand
	for slot, meta := range r.docs {
		d := r.idx.slots[slot]
		if !d.live || c.mask[slot] {
			continue
		}
		dist := 2.0
		for _, k := range keys {
			for _, dk := range meta.keys {
				dist = min(dist, relDistance(k, dk))
				for _, part := range strings.Split(dk, "_") {
					if len(part) > 2 {
						dist = min(dist, relDistance(k, part)+0.05)
					}
				}
			}
		}
		if dist <= 0.5 {
			best = append(best, cand{meta.display, dist, d.seq})
		}
	}
	slices.SortFunc(best, func(a, b cand) int {
		if x := cmp.Compare(a.dist, b.dist); x != 0 {
			return x
		}
		return cmp.Compare(a.seq, b.seq)
	})
	var out []string
	for _, b := range best {
		if len(out) == maxNearest {
			break
		}
		if !slices.Contains(out, b.name) {
			out = append(out, b.name)
		}
	}
	return out
}

// relDistance is the edit distance between a and b relative to a's length.
func relDistance(a, b string) float64 {
	if a == "" {
		return 2
	}
	return float64(levenshtein.ComputeDistance(a, b)) / float64(len([]rune(a)))
}
