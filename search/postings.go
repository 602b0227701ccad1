package search

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// maxFields is the most fields a postings index holds per document.
const maxFields = 6

// maxTF is the most occurrences of a term a posting counts in one field;
// more add nothing measurable under BM25's saturation.
const maxTF = 0xFF

// posting records how often a term occurs in each field of one document.
type posting struct {
	slot int32
	tf   [maxFields]uint8
}

// docSlot is one indexed document.
type docSlot struct {
	name string
	// seq orders documents by first insertion; it breaks score ties.
	seq  uint64
	live bool
	// terms are the document's distinct term ids, sorted, for removal and
	// for document frequencies under exclusion.
	terms []int32
}

// postings is an in-memory inverted index shared by the rankers: term →
// documents with per-field term frequencies, and per-field lengths. It is
// not safe for concurrent use; rankers guard it.
type postings struct {
	slots []docSlot
	// lens holds each slot's field lengths, apart from the rest of the
	// slot so that scoring, which reads them for every posting, touches
	// little memory.
	lens   [][maxFields]uint32
	byName map[string]int32
	free   []int32
	live   int
	seq    uint64
	termID map[string]int32
	lists  [][]posting
	sumLen [maxFields]float64

	// While a large build defers its postings (deferPostings), its
	// documents wait in pend with their postings, each numbered from 1 in
	// the build's order (doc); lastDoc holds by slot the number of the last
	// document the build put there. flush moves them to the lists and to
	// their slots' terms.
	deferring bool
	pend      []pendingDoc
	lastDoc   []int32
}

// pendingDoc is a document whose postings a build has deferred: the
// build's doc-th, in slot, with its postings under the index's term ids.
type pendingDoc struct {
	slot, doc int32
	posts     []localPosting
}

func newPostings() *postings {
	return &postings{byName: make(map[string]int32), termID: make(map[string]int32)}
}

// intern returns the id of term t, adding it to the index's terms (a copy
// of it, passed to newTerm if not nil) when the index did not have it.
func (p *postings) intern(t string, newTerm func(string)) int32 {
	if id, ok := p.termID[t]; ok {
		return id
	}
	t = strings.Clone(t)
	id := int32(len(p.lists))
	p.termID[t] = id
	p.lists = append(p.lists, nil)
	if newTerm != nil {
		newTerm(t)
	}
	return id
}

// addAnalysed indexes a document given as its field lengths and its
// postings under the index's term ids (one per term; add's result for the
// same terms), replacing a live document of the same name in place, and
// returns the document's slot. The slot's terms are kept sorted, for has;
// the lists do not depend on the order of posts. While the postings are
// deferred, it keeps posts until flush, and the slot has no terms.
func (p *postings) addAnalysed(name string, lens [maxFields]uint32, posts []localPosting) int32 {
	slot := p.takeSlot(name)
	d := &p.slots[slot]
	p.lens[slot] = lens
	for f, n := range lens {
		p.sumLen[f] += float64(n)
	}
	p.live++
	if p.deferring {
		doc := int32(len(p.pend)) + 1
		for int(slot) >= len(p.lastDoc) {
			p.lastDoc = append(p.lastDoc, 0)
		}
		p.lastDoc[slot] = doc
		p.pend = append(p.pend, pendingDoc{slot: slot, doc: doc, posts: posts})
		return slot
	}
	if len(posts) > 0 {
		d.terms = make([]int32, len(posts))
	}
	for i, lp := range posts {
		d.terms[i] = lp.term
		p.insert(lp.term, posting{slot: slot, tf: lp.tf})
	}
	slices.Sort(d.terms)
	return slot
}

// takeSlot returns the slot for a document: a live document's of the same
// name, unindexed, keeping its sequence number, or a free or new one with
// the next. The slot is live, with no terms.
func (p *postings) takeSlot(name string) int32 {
	slot, exists := p.byName[name]
	var seq uint64
	if exists {
		seq = p.slots[slot].seq
		p.unindex(slot)
	} else {
		p.seq++
		seq = p.seq
		if n := len(p.free); n > 0 {
			slot = p.free[n-1]
			p.free = p.free[:n-1]
		} else {
			slot = int32(len(p.slots))
			p.slots = append(p.slots, docSlot{})
			p.lens = append(p.lens, [maxFields]uint32{})
		}
		p.byName[name] = slot
	}
	p.slots[slot] = docSlot{name: name, seq: seq, live: true}
	return slot
}

// remove drops the named document and reports its former slot.
func (p *postings) remove(name string) (int32, bool) {
	slot, ok := p.byName[name]
	if !ok {
		return 0, false
	}
	p.unindex(slot)
	delete(p.byName, name)
	p.slots[slot] = docSlot{}
	p.free = append(p.free, slot)
	return slot, true
}

// unindex removes a live slot's postings and lengths.
func (p *postings) unindex(slot int32) {
	d := &p.slots[slot]
	for _, id := range d.terms {
		list := p.lists[id]
		if i := seek(list, 0, slot); i < len(list) && list[i].slot == slot {
			p.lists[id] = slices.Delete(list, i, i+1)
		}
	}
	for f := range maxFields {
		p.sumLen[f] -= float64(p.lens[slot][f])
	}
	p.lens[slot] = [maxFields]uint32{}
	d.terms = nil
	d.live = false
	p.live--
}

// deferDocs is how many documents one build must add for it to defer
// its postings and compact the lists when it ends (flush).
const deferDocs = 4096

// deferPostings makes the documents added until flush keep their
// postings aside. A large build appends to its lists one posting at a
// time: they grow by doubling, and each copy is garbage. A first build
// (into an empty index) makes room for its n documents, too.
func (p *postings) deferPostings(n int) {
	p.deferring = true
	p.pend = slices.Grow(p.pend, n)
	if len(p.slots) == 0 {
		p.byName = make(map[string]int32, n)
		p.slots = slices.Grow(p.slots, n)
		p.lens = slices.Grow(p.lens, n)
		p.lastDoc = slices.Grow(p.lastDoc, n)
	}
}

// flush puts the deferred postings in their lists (but those of a
// document that a later one of the build replaced in its slot), and
// copies every list into one array, each list in slot order with no spare
// capacity. A list that later grows moves out of the array alone. The
// array lives as long as one list is in it, so a shelf that changes a
// little at a time holds at most the array a large build made. The
// build's slots take their terms from the lists, in id order, which is
// sorted, from one array too.
func (p *postings) flush() {
	live := func(d *pendingDoc) bool { return p.lastDoc[d.slot] == d.doc }
	count := make([]int, len(p.lists))
	total, nterms := 0, 0
	for id, list := range p.lists {
		count[id] = len(list)
		total += len(list)
	}
	for i := range p.pend {
		if d := &p.pend[i]; live(d) {
			for _, lp := range d.posts {
				count[lp.term]++
			}
			nterms += len(d.posts)
		}
	}
	total += nterms
	all := make([]posting, total)
	next := make([]int, len(p.lists)) // by term: where its next posting goes
	at := 0
	for id, list := range p.lists {
		next[id] = at + copy(all[at:], list)
		at += count[id]
	}
	workers := 1
	if nterms >= flushParallel {
		workers = min(runtime.GOMAXPROCS(0), maxFlushWorkers)
	}
	// Each worker places the postings of a range of terms, reading the
	// documents in order, so each list is in the order one would make.
	ids := splitByWeight(len(p.lists), workers, func(id int) int { return count[id] })
	var wg sync.WaitGroup
	for k := range workers {
		lo, hi := int32(ids[k]), int32(ids[k+1])
		wg.Go(func() {
			for i := range p.pend {
				d := &p.pend[i]
				if !live(d) {
					continue
				}
				for _, lp := range d.posts {
					if lo <= lp.term && lp.term < hi {
						all[next[lp.term]] = posting{slot: d.slot, tf: lp.tf}
						next[lp.term]++
					}
				}
			}
		})
	}
	wg.Wait()
	terms := make([]int32, 0, nterms)
	for i := range p.pend {
		d := &p.pend[i]
		if !live(d) || len(d.posts) == 0 {
			continue // a slot with no terms keeps nil, as addAnalysed gives it
		}
		n := len(terms)
		p.slots[d.slot].terms = terms[n : n : n+len(d.posts)]
		terms = terms[:n+len(d.posts)]
	}
	at = 0
	for id, n := range count {
		if n == 0 {
			continue // as it was: nil, or emptied
		}
		list := all[at : at+n : at+n]
		at += n
		// A build's slots rise but where it reuses a free one.
		if !slices.IsSortedFunc(list, bySlot) {
			slices.SortFunc(list, bySlot)
		}
		p.lists[id] = list
	}
	// Each worker gives a range of the build's slots their terms, walking
	// the lists in id order.
	slots := splitByWeight(len(p.lastDoc), workers, func(int) int { return 1 })
	for k := range workers {
		lo, hi := int32(slots[k]), int32(slots[k+1])
		wg.Go(func() {
			for id, list := range p.lists {
				for _, e := range list {
					if lo <= e.slot && e.slot < hi && p.lastDoc[e.slot] != 0 {
						t := &p.slots[e.slot].terms
						*t = append(*t, int32(id))
					}
				}
			}
		})
	}
	wg.Wait()
	p.deferring, p.pend, p.lastDoc = false, nil, nil
}

// flushParallel is how many postings a flush must place for it to share
// the work between processors, at most maxFlushWorkers.
const (
	flushParallel   = 1 << 16
	maxFlushWorkers = 4
)

// splitByWeight cuts [0, n) into parts ranges of about equal total weight
// and returns their parts+1 bounds, from 0 to n.
func splitByWeight(n, parts int, weight func(int) int) []int {
	total := 0
	for i := range n {
		total += weight(i)
	}
	bounds := make([]int, 1, parts+1)
	sum := 0
	for i := range n {
		if len(bounds) < parts && sum >= total*len(bounds)/parts {
			bounds = append(bounds, i)
		}
		sum += weight(i)
	}
	for len(bounds) <= parts {
		bounds = append(bounds, n)
	}
	return bounds
}

// bySlot orders postings by slot.
func bySlot(a, b posting) int { return cmp.Compare(a.slot, b.slot) }

// insert adds e to term id's list, which is kept in slot order: scoring
// walks the lists of a query side by side, a range of slots at a time
// (score.go). A new document's slot is the highest, so building appends.
func (p *postings) insert(id int32, e posting) {
	list := p.lists[id]
	if n := len(list); n == 0 || list[n-1].slot < e.slot {
		p.lists[id] = append(list, e)
		return
	}
	p.lists[id] = slices.Insert(list, seek(list, 0, e.slot), e)
}

// seek returns the index of the first posting at or after from whose slot
// is at least slot, or len(list): it gallops, then bisects, so that
// skipping k postings costs O(log k).
func seek(list []posting, from int, slot int32) int {
	if from >= len(list) || list[from].slot >= slot {
		return from
	}
	// list[lo].slot < slot throughout; hi is past the answer once
	// list[hi].slot >= slot or hi = len(list).
	lo, step := from, 1
	hi := lo + step
	for hi < len(list) && list[hi].slot < slot {
		lo = hi
		step *= 2
		hi = lo + step
	}
	hi = min(hi, len(list))
	for lo+1 < hi {
		mid := int(uint(lo+hi) >> 1)
		if list[mid].slot < slot {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// list returns the postings of a term, nil when no document has it.
func (p *postings) list(term string) []posting {
	id, ok := p.termID[term]
	if !ok {
		return nil
	}
	return p.lists[id]
}

// has reports whether the document in slot contains the term.
func (p *postings) has(slot int32, term string) bool {
	id, ok := p.termID[term]
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(p.slots[slot].terms, id)
	return found
}

// candidates describes the documents a query may match: every live
// document except the excluded ones.
type candidates struct {
	p        *postings
	excluded []int32 // live excluded slots
	mask     []bool  // mask[slot] is true for excluded slots
	n        int
	sumLen   [maxFields]float64
}

// avgLen returns the mean length of field f over the candidates, or 1 when
// it would be zero.
func (c *candidates) avgLen(f int) float64 {
	if c.n == 0 || c.sumLen[f] == 0 {
		return 1
	}
	return c.sumLen[f] / float64(c.n)
}

// df returns the number of candidates that contain the term.
func (c *candidates) df(term string, list []posting) int {
	df := len(list)
	for _, s := range c.excluded {
		if c.p.has(s, term) {
			df--
		}
	}
	return df
}

// scratch holds per-search buffers, recycled through a pool.
type scratch struct {
	mask []bool // mask[slot] is true for excluded slots
	// score and touched are the reference ranker's per-document scores
	// and the documents it scored; query is the toolshelf ranker's query
	// state, slotIDF its slots' idfs.
	score   []float64
	touched []int32
	query   scoreQuery
	slotIDF []float64
	skip    []int32 // slots the ranking passes over, ascending
	// pos lists the documents topK ranks; top keeps the best ones;
	// excluded lists the slots set in mask.
	pos      []int32
	top      topSet
	excluded []int32
}

type scratchPool struct{ pool sync.Pool }

// get returns zeroed buffers for n slots.
func (sp *scratchPool) get(n int) *scratch {
	s, _ := sp.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if cap(s.mask) < n {
		s.mask = make([]bool, n)
	}
	s.mask = s.mask[:n]
	return s
}

// scores returns the per-document scores for n slots, zero.
func (s *scratch) scores(n int) []float64 {
	if cap(s.score) < n {
		s.score = make([]float64, n)
	}
	s.score = s.score[:n]
	return s.score
}

// put clears the entries the search set and returns the buffers to the
// pool.
func (sp *scratchPool) put(s *scratch) {
	for _, t := range s.touched {
		s.score[t] = 0
	}
	for _, t := range s.excluded {
		s.mask[t] = false
	}
	s.touched = s.touched[:0]
	s.query.reset()
	s.slotIDF = s.slotIDF[:0]
	s.skip = s.skip[:0]
	s.pos = s.pos[:0]
	s.top.reset(0)
	s.excluded = s.excluded[:0]
	sp.pool.Put(s)
}

// candidates resolves exclusions into s.mask and computes the statistics.
func (p *postings) candidates(exclude []string, s *scratch) candidates {
	c := candidates{p: p, mask: s.mask, n: p.live, sumLen: p.sumLen}
	for _, name := range exclude {
		slot, ok := p.byName[name]
		if !ok || s.mask[slot] {
			continue
		}
		s.mask[slot] = true
		s.excluded = append(s.excluded, slot)
		c.excluded = s.excluded
		c.n--
		for f := range maxFields {
			c.sumLen[f] -= float64(p.lens[slot][f])
		}
	}
	return c
}

// topK returns the k best slots among those touched with a positive score,
// by score descending and insertion order ascending. It keeps them in
// pos, which it reuses, and returns a slice of it.
func (p *postings) topK(touched []int32, score []float64, k int, top *topSet, pos []int32) []int32 {
	top.reset(k)
	for _, t := range touched {
		if v := score[t]; v > 0 && top.admits(v) {
			top.add(v, p.slots[t].seq, t)
		}
	}
	pos = pos[:0]
	for _, e := range top.sorted() {
		pos = append(pos, e.slot)
	}
	return pos
}

// ranked is a scored document a topSet keeps.
type ranked struct {
	score float64
	seq   uint64
	slot  int32
}

// better orders ranked documents: by score descending, then by insertion
// order.
func better(a, b ranked) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// topSet keeps the k best of the documents added to it, in a heap whose
// root is the worst one kept, so that most documents of a large result
// are turned away by one comparison.
type topSet struct {
	k int
	h []ranked
}

// reset empties the set to keep the k best.
func (t *topSet) reset(k int) {
	t.k = max(k, 0)
	t.h = t.h[:0]
}

// admits reports whether a document of the given score might be kept:
// false when the set keeps none, or is full and its worst document scores
// higher.
func (t *topSet) admits(score float64) bool {
	if len(t.h) < t.k {
		return true
	}
	return t.k > 0 && score >= t.h[0].score
}

// add offers a document, keeping it if it is among the k best so far.
func (t *topSet) add(score float64, seq uint64, slot int32) {
	e := ranked{score, seq, slot}
	h := t.h
	switch {
	case t.k == 0:
		return
	case len(h) < t.k:
		h = append(h, e)
		for i := len(h) - 1; i > 0; {
			parent := (i - 1) / 2
			if better(h[i], h[parent]) <= 0 { // not worse than its parent
				break
			}
			h[i], h[parent] = h[parent], h[i]
			i = parent
		}
		t.h = h
		return
	case better(e, h[0]) >= 0: // not better than the worst kept
		return
	}
	h[0] = e
	for i := 0; ; {
		l, w := 2*i+1, i
		if l < len(h) && better(h[l], h[w]) > 0 {
			w = l
		}
		if r := l + 1; r < len(h) && better(h[r], h[w]) > 0 {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// sorted returns the kept documents, best first. The set is no longer a
// heap after.
func (t *topSet) sorted() []ranked {
	slices.SortFunc(t.h, better)
	return t.h
}

// compareSeq orders slots by insertion.
func compareSeq(p *postings, a, b int32) int {
	return cmp.Compare(p.slots[a].seq, p.slots[b].seq)
}
