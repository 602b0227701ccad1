package search

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
)

// maxNearest is how many tool names a hint suggests.
const maxNearest = 3

// hint explains an empty result: the words no tool contains, the words
// only loaded tools contain, required words no tool has together, and the
// candidate names closest to the unmatched words.
func (r *BM25F) hint(slots []qslot, matchedAny []bool, c *candidates) *Hint {
	h := &Hint{}
	var required []string
	for i, sl := range slots {
		if sl.required {
			required = append(required, "+"+sl.surface)
		}
		if matchedAny[i] || slices.Contains(h.Unmatched, sl.surface) || slices.Contains(h.OnlyLoaded, sl.surface) {
			continue
		}
		if r.anyDocHas(sl) {
			h.OnlyLoaded = append(h.OnlyLoaded, sl.surface)
		} else {
			h.Unmatched = append(h.Unmatched, sl.surface)
		}
	}
	if len(h.Unmatched) == 0 && len(h.OnlyLoaded) == 0 && len(required) > 1 {
		h.Together = required
	}
	h.Nearest = r.nearest(h.Unmatched, c)
	if h.empty() {
		return nil
	}
	return h
}

// anyDocHas reports whether any indexed document, candidate or not,
// contains a term of the slot.
func (r *BM25F) anyDocHas(sl qslot) bool {
	for _, alt := range sl.alts {
		for _, t := range alt.terms {
			if len(r.idx.list(t)) > 0 {
				return true
			}
		}
	}
	return false
}

// nearest returns the candidate names that look most like any of the
// probes: by edit distance, relative to the probe's length, between the
// normalised probe and a tool's normalised name without its server prefix,
// or between a word of the probe and a word of a tool's name (which costs more, the more so the less
// of the probe the word covers). Names more
// than half the probe's length away are not suggested. The cost grows with
// the number of distinct tool names and name words, not with the catalog's
// text; length and letter differences prune most comparisons.
func (r *BM25F) nearest(probes []string, c *candidates) []string {
	type match struct {
		key   string
		slots []int32
		dist  float64
	}
	var matches []match
	// consider scores the keys of vocab near probe; a word of a longer
	// probe counts less the less of the probe it covers.
	consider := func(probe string, vocab slotLists, penalty float64) {
		n := utf8.RuneCountInString(probe)
		if n < 3 {
			return
		}
		maxDist := n / 2
		for key, slots := range vocab.all() {
			if d := utf8.RuneCountInString(key) - n; d > maxDist || -d > maxDist {
				continue
			}
			if bagDistance(probe, key) > maxDist {
				continue
			}
			if dist := levenshtein.ComputeDistance(probe, key); dist <= maxDist {
				matches = append(matches, match{key, slots, float64(dist)/float64(n) + penalty})
			}
		}
	}
	for _, p := range probes {
		k := normName(p)
		consider(k, r.shortKeys, 0)
		kn := float64(utf8.RuneCountInString(k))
		for _, w := range strings.Split(k, "_") {
			consider(w, r.nameWords, 0.05+0.5*(1-float64(utf8.RuneCountInString(w))/kn))
		}
	}
	slices.SortFunc(matches, func(a, b match) int {
		if x := cmp.Compare(a.dist, b.dist); x != 0 {
			return x
		}
		return cmp.Compare(a.key, b.key)
	})
	var out []string
	for _, m := range matches {
		if len(out) == maxNearest {
			break
		}
		out = r.shortest(out, m.slots, c)
	}
	return out
}

// shortest appends to out, up to maxNearest names in all, the names of the
// candidate slots not yet in out: the shortest first, since they match a
// probe most closely, then the first indexed. A name's key may hold
// thousands of tools, so it keeps the few best as it reads them rather
// than sorting them all.
func (r *BM25F) shortest(out []string, slots []int32, c *candidates) []string {
	need := maxNearest - len(out)
	if need <= 0 {
		return out
	}
	before := func(a, b int32) bool {
		if la, lb := len(r.docs[a].display), len(r.docs[b].display); la != lb {
			return la < lb
		}
		return compareSeq(r.idx, a, b) < 0
	}
	var best [maxNearest]int32
	n := 0
	for _, slot := range slots {
		if c.mask[slot] || n == need && !before(slot, best[n-1]) || slices.Contains(out, r.docs[slot].display) {
			continue
		}
		i := n
		for i > 0 && before(slot, best[i-1]) {
			i--
		}
		n = min(n+1, need)
		copy(best[i+1:n], best[i:n-1])
		best[i] = slot
	}
	for _, slot := range best[:n] {
		out = append(out, r.docs[slot].display)
	}
	return out
}

// bagDistance is a cheap lower bound of the edit distance of two strings:
// the characters one has that the other lacks, counted as multisets. It
// returns 0 (no bound) unless both are ASCII.
func bagDistance(a, b string) int {
	var count [utf8.RuneSelf]int32
	for i := 0; i < len(a); i++ {
		if a[i] >= utf8.RuneSelf {
			return 0
		}
		count[a[i]]++
	}
	matched := 0
	for i := 0; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return 0
		}
		if count[b[i]] > 0 {
			count[b[i]]--
			matched++
		}
	}
	return max(len(a), len(b)) - matched
}
