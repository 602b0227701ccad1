package search

import (
	"cmp"
	"math/bits"
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
// or between a word of the probe and a word of a tool's name (which costs
// more, the more so the less of the probe the word covers). Names more
// than half the probe's length away are not suggested. The cost grows with
// the number of distinct tool names and name words, not with the catalog's
// text; length and character differences rule out most of them.
func (r *BM25F) nearest(probes []string, c *candidates) []string {
	var near nearProbe
	return r.nearestBy(probes, c, func(probe string, vocab slotLists, maxDist int, yield func(string, int)) {
		near.set(probe)
		for _, key := range keyTable(vocab) {
			if dist, ok := near.within(key, maxDist); ok {
				yield(key.key, dist)
			}
		}
	})
}

// nearestBy is nearest with the keys of vocab within maxDist of a probe
// found by keysNear.
func (r *BM25F) nearestBy(probes []string, c *candidates,
	keysNear func(probe string, vocab slotLists, maxDist int, yield func(key string, dist int))) []string {
	type match struct {
		key   string
		slots []int32
		dist  float64
		word  bool // a name word's, not a short name's
	}
	var matches []match
	// consider scores the keys of vocab near probe; a word of a longer
	// probe counts less the less of the probe it covers.
	consider := func(probe string, vocab slotLists, word bool, penalty float64) {
		n := utf8.RuneCountInString(probe)
		if n < 3 {
			return
		}
		keysNear(probe, vocab, n/2, func(key string, dist int) {
			matches = append(matches, match{key, vocab.get(key), float64(dist)/float64(n) + penalty, word})
		})
	}
	for _, p := range probes {
		k := normName(p)
		consider(k, r.shortKeys, false, 0)
		kn := float64(utf8.RuneCountInString(k))
		for _, w := range strings.Split(k, "_") {
			consider(w, r.nameWords, true, 0.05+0.5*(1-float64(utf8.RuneCountInString(w))/kn))
		}
	}
	slices.SortFunc(matches, func(a, b match) int {
		if x := cmp.Compare(a.dist, b.dist); x != 0 {
			return x
		}
		if x := cmp.Compare(a.key, b.key); x != 0 {
			return x
		}
		// A key both a short name and a name word, as far from its
		// probes: the short name's tools first, whatever the maps' order.
		switch {
		case a.word == b.word:
			return 0
		case !a.word:
			return -1
		}
		return 1
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

// keyInfo is a key of a hint's vocabulary with what nearest reads of it
// before it compares it with a probe: its length in runes, its signature,
// and whether it is ASCII.
type keyInfo struct {
	key   string
	sig   uint64
	runes int
	ascii bool
}

// newKeyInfo reads key.
func newKeyInfo(key string) keyInfo {
	k := keyInfo{key: key, ascii: true}
	for _, r := range key {
		k.runes++
		k.sig |= charBit(r)
		k.ascii = k.ascii && r < utf8.RuneSelf
	}
	return k
}

// keyTable returns the keys of vocab as nearest reads them, in no order.
// It reads them once, until a key is added or dropped: searches read
// vocab at once (under the index's read lock), and one of them builds the
// table when it has none.
func keyTable(vocab slotLists) []keyInfo {
	if t := vocab.keys.Load(); t != nil {
		return *t
	}
	t := make([]keyInfo, 0, len(vocab.one)+len(vocab.many))
	for k := range vocab.all() {
		t = append(t, newKeyInfo(k))
	}
	vocab.keys.Store(&t)
	return t
}

// charBit is a rune's bit in a signature, the set of the characters of a
// string: one bit for each ASCII lowercase letter, digit and _, the others
// share the rest. The characters one string has that the other lacks are
// at least the bits one signature has that the other lacks, and each needs
// an edit of its own.
func charBit(r rune) uint64 {
	switch {
	case r >= 'a' && r <= 'z':
		return 1 << (r - 'a')
	case r >= '0' && r <= '9':
		return 1 << (26 + r - '0')
	case r == '_':
		return 1 << 36
	}
	return 1 << (37 + uint32(r)%27)
}

// nearProbe is a probe of nearest, read once for its comparisons with
// every key: its runes and signature and, when it has at most 64 runes,
// the bit set of its positions holding each rune (peq for ASCII, others
// for the rest), for editBits.
type nearProbe struct {
	runes  []rune
	sig    uint64
	peq    [utf8.RuneSelf]uint64
	others []runeBits
}

// runeBits is the bit set of a probe's positions holding a rune.
type runeBits struct {
	r    rune
	bits uint64
}

// set makes p the probe.
func (p *nearProbe) set(probe string) {
	p.runes = append(p.runes[:0], []rune(probe)...)
	p.sig = 0
	for _, r := range p.runes {
		p.sig |= charBit(r)
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
// and key when it is at most k: Myers' bit-parallel algorithm (1999) as
// Hyyrö (2001) gives it for the distance between two whole strings. Bit i
// of pv and mv says whether the column's value at row i+1 is one more or
// one less than at row i; score follows the last row, which the key's
// remaining runes can lower by one each at most.
func (p *nearProbe) editBits(key keyInfo, k int) (int, bool) {
	last := uint64(1) << (len(p.runes) - 1)
	pv, mv := ^uint64(0), uint64(0)
	score, left := len(p.runes), key.runes
	if key.ascii {
		for i := 0; i < len(key.key); i++ {
			var d int
			pv, mv, d = myersStep(p.peq[key.key[i]], pv, mv, last)
			score, left = score+d, left-1
			if score-left > k {
				return 0, false
			}
		}
		return score, score <= k
	}
	for _, r := range key.key {
		var d int
		pv, mv, d = myersStep(p.positions(r), pv, mv, last)
		score, left = score+d, left-1
		if score-left > k {
			return 0, false
		}
	}
	return score, score <= k
}

// myersStep moves editBits' columns past a rune of the key whose
// positions in the probe are eq, and returns how the last row's value
// changes.
func myersStep(eq, pv, mv, last uint64) (_, _ uint64, d int) {
	xv := eq | mv
	xh := (((eq & pv) + pv) ^ pv) | eq
	ph := mv | ^(xh | pv)
	mh := pv & xh
	switch {
	case ph&last != 0:
		d = 1
	case mh&last != 0:
		d = -1
	}
	ph = ph<<1 | 1 // the first row counts up: D(0, j) is j
	mh <<= 1
	return mh | ^(xv | ph), ph & xv, d
}

// within returns the edit distance between the probe and key when it is
// at most k. It tries the cheap lower bounds first: the difference in
// length, then the characters one signature has that the other lacks.
func (p *nearProbe) within(key keyInfo, k int) (int, bool) {
	if d := key.runes - len(p.runes); d > k || -d > k {
		return 0, false
	}
	if bits.OnesCount64(p.sig&^key.sig) > k || bits.OnesCount64(key.sig&^p.sig) > k {
		return 0, false
	}
	if m := len(p.runes); m >= 1 && m <= 64 {
		return p.editBits(key, k)
	}
	d := levenshtein.ComputeDistance(string(p.runes), key.key)
	return d, d <= k
}
