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
	var near nearProbe
	// consider scores the keys of vocab near probe; a word of a longer
	// probe counts less the less of the probe it covers.
	consider := func(probe string, vocab slotLists, penalty float64) {
		near.set(probe)
		n := len(near.runes)
		if n < 3 {
			return
		}
		maxDist := n / 2
		for key, slots := range vocab.all() {
			if dist, ok := near.within(key, maxDist); ok {
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

// nearProbe is a probe of nearest, read once for its comparisons with
// every key: its runes; when it is ASCII, its count of each byte; when it
// has at most 64 runes, the bit set of its positions holding each rune
// (peq for ASCII, others for the rest), for editBits.
type nearProbe struct {
	runes  []rune
	ascii  bool
	count  [utf8.RuneSelf]int32
	peq    [utf8.RuneSelf]uint64
	others []runeBits
	taken  []byte // the key's bytes bag counted down, to count up again
}

// runeBits is the bit set of a probe's positions holding a rune.
type runeBits struct {
	r    rune
	bits uint64
}

// set makes p the probe.
func (p *nearProbe) set(probe string) {
	p.runes = append(p.runes[:0], []rune(probe)...)
	p.count = [utf8.RuneSelf]int32{}
	p.ascii = true
	for i := 0; i < len(probe); i++ {
		if probe[i] >= utf8.RuneSelf {
			p.ascii = false
			break
		}
		p.count[probe[i]]++
	}
	p.peq, p.others = [utf8.RuneSelf]uint64{}, p.others[:0]
	if len(p.runes) > 64 {
		return
	}
	for i, r := range p.runes {
		if r < utf8.RuneSelf {
			p.peq[r] |= 1 << i
			continue
		}
		j := slices.IndexFunc(p.others, func(o runeBits) bool { return o.r == r })
		if j < 0 {
			j = len(p.others)
			p.others = append(p.others, runeBits{r: r})
		}
		p.others[j].bits |= 1 << i
	}
}

// positions returns the bit set of the probe's positions holding r.
func (p *nearProbe) positions(r rune) uint64 {
	if r < utf8.RuneSelf {
		return p.peq[r]
	}
	for _, o := range p.others {
		if o.r == r {
			return o.bits
		}
	}
	return 0
}

// editBits returns the edit distance between the probe, of 1 to 64 runes,
// and key: Myers' bit-parallel algorithm (1999) as Hyyrö (2001) gives it
// for the distance between two whole strings. Bit i of pv and mv says
// whether the column's value at row i+1 is one more or one less than at
// row i; score follows the last row.
func (p *nearProbe) editBits(key string) int {
	m := len(p.runes)
	last := uint64(1) << (m - 1)
	pv, mv := ^uint64(0), uint64(0)
	score := m
	for _, r := range key {
		eq := p.positions(r)
		xv := eq | mv
		xh := (((eq & pv) + pv) ^ pv) | eq
		ph := mv | ^(xh | pv)
		mh := pv & xh
		switch {
		case ph&last != 0:
			score++
		case mh&last != 0:
			score--
		}
		ph = ph<<1 | 1 // the first row counts up: D(0, j) is j
		mh <<= 1
		pv = mh | ^(xv | ph)
		mv = ph & xv
	}
	return score
}

// within returns the edit distance between the probe and key when it is
// at most k. It tries the cheap lower bounds first: the difference in
// length, then for ASCII the characters one has that the other lacks,
// counted as multisets.
func (p *nearProbe) within(key string, k int) (int, bool) {
	n := utf8.RuneCountInString(key)
	if d := n - len(p.runes); d > k || -d > k {
		return 0, false
	}
	if p.ascii && p.bag(key) > k {
		return 0, false
	}
	d := 0
	if m := len(p.runes); m >= 1 && m <= 64 {
		d = p.editBits(key)
	} else {
		d = levenshtein.ComputeDistance(string(p.runes), key)
	}
	return d, d <= k
}

// bag returns the characters the probe has that key lacks, or key has that
// the probe lacks, counted as multisets: a lower bound of their edit
// distance. It returns 0 (no bound) unless key is ASCII too.
func (p *nearProbe) bag(key string) int {
	p.taken = p.taken[:0]
	ascii := true
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if p.count[c] > 0 {
			p.count[c]--
			p.taken = append(p.taken, c)
		}
	}
	for _, c := range p.taken {
		p.count[c]++
	}
	if !ascii {
		return 0
	}
	return max(len(p.runes), len(key)) - len(p.taken)
}
