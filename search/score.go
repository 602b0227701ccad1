package search

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// How the toolshelf ranker scores a query. A document's score is the sum,
// in slot order, of its query slots' scores, times the name factor
// (rankSlots' doc); the k best are kept in a topSet. The index's lists are
// in slot order, so scoring walks a query's lists side by side, one window
// of scoreWindow slots at a time: a window's per-document accumulators fit
// in a core's cache, and every document's sum is added up in slot order,
// whatever the window.
//
// Most documents of a large index cannot be among the k best, and most
// postings of a query are in its common words' long lists. Once k
// documents are kept, a slot's score is bounded (slotPlan.bound); the slots
// of lowest bound whose bounds together, times the largest name factor
// they allow, stay below the worst score kept are non-essential: a
// document that has none of the other (essential) slots' terms cannot
// enter. So a window scores only the documents of its essential lists, and
// reads the non-essential lists only at those documents (MaxScore, Turtle
// and Flood 1995). It first scores the essential lists alone and keeps
// only the documents whose partial score, plus the non-essential slots'
// bounds, times the largest name factor they can have, reaches the worst
// kept (filter). When a query has a required word, the documents of one
// required slot's lists are the only ones that can score.
//
// A query with many postings is scored on several processors, each
// claiming windows in turn and keeping its own k best, which are then
// merged.
// The ranking is the one scoring every posting on one processor gives, to
// the last bit (TestPrunedRankingIsExhaustive).

// scoreWindow is how many consecutive slots are scored together.
const scoreWindow = 4096

// boundMargin widens score bounds, and narrows the scores they are compared
// with, by more than floating-point rounding can move either.
const boundMargin = 1e-9

// parallelPostings is how many postings a query needs, per processor, to be
// scored on more than one.
const parallelPostings = 1 << 14

// scoreQuery is what scoring one query reads, shared by its workers.
type scoreQuery struct {
	r     *BM25F
	c     *candidates
	nm    *norms
	plans []slotPlan
	// lists holds the query's lists, slot by slot (the group's terms,
	// then each phrase's words), and listSlot their slots; slotCur[si] is
	// slot si's first list, with one more entry at the end.
	lists    [][]posting
	listSlot []int
	slotCur  []int
	bound    []float64 // by slot
	byBound  []int     // slots by bound, lowest first
	// idfShare holds, by byBound's order, the share of the query's idf
	// mass in the slots up to and including that one.
	idfShare []float64
	required uint64
	f        factorConsts
	// drive is the required slot whose documents are the only ones that
	// can score, or -1; canPrune reports whether bounds can be trusted.
	drive    int
	canPrune bool
	slotLen  []int // by slot: its lists' postings
	postings int
	k        int
	skip     []int32 // slots not to rank, ascending
	// n is the index's slots, windowsIn its windows; next is the next
	// window to claim; done is set once a worker finds that no document
	// left can enter its k best, and so the query's.
	n, windowsIn int32
	next         atomic.Int32
	done         atomic.Bool
}

// claim returns the first slot of the next window a worker is to score,
// or false when none is left. A worker's windows come in order.
func (q *scoreQuery) claim() (lo int32, ok bool) {
	if q.done.Load() {
		return 0, false
	}
	i := q.next.Add(1) - 1
	if i >= q.windowsIn {
		return 0, false
	}
	return i * scoreWindow, true
}

// window is one worker's state: by document offset in the window, what
// scoring it needs; its cursors; and the best documents it has seen.
type window struct {
	score [scoreWindow]float64
	alt   [scoreWindow]altAcc
	// name holds the bit set of the query slots that matched the tool's
	// name; flags, when the query has required words, of the slots that
	// matched at all.
	name  [scoreWindow]uint64
	flags [scoreWindow]uint64
	mark  [scoreWindow / 64]uint64 // documents of the essential lists

	touched, named, altSeen, slotDocs []int32
	marked                            []int32 // the marked offsets, ascending

	pos    []int       // by list: the first posting not yet in a window
	segs   [][]posting // by list: its postings in the window
	gather []posting   // non-essential lists' postings at marked documents
	ess    []bool      // by slot: essential
	nonEss int         // how many of byBound's first slots are not
	// filtering reports whether a pruned window first scores its
	// essential lists alone, to pass over the documents they leave
	// below the worst kept (filter).
	filtering bool
	// filterFrom is the worst kept score from which filtering is tried
	// again, after it left too many documents.
	filterFrom float64
	top        topSet
}

// windows recycles workers' states.
var windows = sync.Pool{New: func() any { return new(window) }}

// altAcc accumulates, per document, one query slot's weighted
// frequencies (sum, reset after each alternative) and the best
// alternative so far (slotMax, reset after the slot).
type altAcc struct {
	sum     float64
	slotMax float64
}

// rankSlots scores the candidates for the query slots and returns the k
// best, best first, but for the slots in s.skip, and per slot whether any
// candidate contains any of its terms. It leaves the slots' idfs in
// s.slotIDF.
//
// A document's final score is its sum over the slots times the name
// factor × (1 + boost × coverage × √share), where boost is
// [Params.NameBoost], coverage is the share of the tool's name words the
// query matched and share the part of the query's idf mass (the sum of its
// slots' idfs) in the slots that matched the name. Ties go to the tool
// indexed first.
func (r *BM25F) rankSlots(slots []qslot, c *candidates, s *scratch, k int) ([]ranked, []bool) {
	matchedAny := make([]bool, len(slots))
	top := &s.top
	top.reset(k)
	if c.n <= 0 || k <= 0 {
		return top.sorted(), matchedAny
	}
	q := &s.query
	q.r, q.c, q.nm, q.k, q.skip = r, c, r.normsFor(c), k, s.skip
	for si, sl := range slots {
		p := r.plan(sl, c)
		q.plans = append(q.plans, p)
		matchedAny[si] = p.matched
		s.slotIDF = append(s.slotIDF, p.idf())
		if sl.required {
			q.required |= slotBit(si)
		}
	}
	q.f = r.factorOf(s.slotIDF)
	q.prepare(slots)

	q.n = int32(len(r.idx.slots))
	q.windowsIn = (q.n + scoreWindow - 1) / scoreWindow
	q.next.Store(0)
	q.done.Store(false)
	workers := min(runtime.GOMAXPROCS(0), int(q.windowsIn), q.postings/parallelPostings)
	if workers <= 1 {
		w := windows.Get().(*window)
		w.run(q)
		merge(top, w)
		return top.sorted(), matchedAny
	}
	// The workers claim windows as they go, so that one that starts late
	// or meets heavier windows takes fewer; this goroutine is the first.
	ws := make([]*window, workers)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = windows.Get().(*window)
		if i > 0 {
			wg.Go(func() { ws[i].run(q) })
		}
	}
	ws[0].run(q)
	wg.Wait()
	for _, w := range ws {
		merge(top, w)
	}
	return top.sorted(), matchedAny
}

// reset empties the query's state for the next, keeping its buffers but
// no list or plan.
func (q *scoreQuery) reset() {
	clear(q.plans)
	clear(q.lists)
	*q = scoreQuery{plans: q.plans[:0], lists: q.lists[:0], listSlot: q.listSlot[:0],
		slotCur: q.slotCur[:0], bound: q.bound[:0], byBound: q.byBound[:0], idfShare: q.idfShare[:0],
		slotLen: q.slotLen[:0]}
}

// merge offers a worker's best documents to top and returns its state to
// the pool.
func merge(top *topSet, w *window) {
	for _, e := range w.top.h {
		if top.admits(e.score) {
			top.add(e.score, e.seq, e.slot)
		}
	}
	w.top.reset(0)
	windows.Put(w)
}

// prepare lists the plans' lists, each slot's score bound and the slots by
// bound, and picks a drive slot.
func (q *scoreQuery) prepare(slots []qslot) {
	for si := range q.plans {
		p := &q.plans[si]
		q.slotCur = append(q.slotCur, len(q.lists))
		for _, g := range p.group {
			q.lists = append(q.lists, g.list)
		}
		for _, ph := range p.phrases {
			q.lists = append(q.lists, ph.lists...)
		}
		n := 0
		for _, list := range q.lists[q.slotCur[si]:] {
			q.listSlot = append(q.listSlot, si)
			n += len(list)
		}
		q.slotLen = append(q.slotLen, n)
		q.postings += n
		q.bound = append(q.bound, p.bound(q.nm))
		q.byBound = append(q.byBound, si)
	}
	q.slotCur = append(q.slotCur, len(q.lists))
	slices.SortStableFunc(q.byBound, func(a, b int) int { return cmp.Compare(q.bound[a], q.bound[b]) })
	share := 0.0
	for _, si := range q.byBound {
		if q.f.total > 0 {
			share += q.f.idf[si] / q.f.total
		}
		q.idfShare = append(q.idfShare, share)
	}
	q.drive = -1
	least := 0
	for si, sl := range slots {
		// Slots from the 64th on share one required bit, so they cannot
		// drive.
		if !sl.required || si >= 63 {
			continue
		}
		if n := q.slotLen[si]; q.drive < 0 || n < least {
			q.drive, least = si, n
		}
	}
	nm := q.nm
	q.canPrune = q.drive < 0 && nm.add >= 0 && nm.mul >= 0 && nm.k1 > 0
}

// run scores the windows it claims, keeping the k best in w.top.
func (w *window) run(q *scoreQuery) {
	w.top.reset(q.k)
	w.pos = w.pos[:0]
	for range q.lists {
		w.pos = append(w.pos, 0)
	}
	w.segs = slices.Grow(w.segs[:0], len(q.lists))[:len(q.lists)]
	w.ess = w.ess[:0]
	for si := range q.plans {
		w.ess = append(w.ess, q.drive < 0 || si == q.drive)
	}
	w.nonEss = 0
	// Filtering reads the slots' name bits as their own, which the
	// slots from the 64th on share.
	w.filtering = q.canPrune && q.required == 0 && len(q.plans) < 64
	w.filterFrom = 0
	pruning := q.drive >= 0
	for {
		lo, ok := q.claim()
		if !ok {
			break
		}
		hi := min(lo+scoreWindow, q.n)
		for l, list := range q.lists {
			w.pos[l] = seek(list, w.pos[l], lo)
		}
		if !w.segments(q, lo, hi, pruning) {
			continue
		}
		q.r.scoreWindow(w, q, lo)
		w.rank(q, lo)
		if q.canPrune && len(w.top.h) == w.top.k && w.prune(q) {
			if w.nonEss == len(q.byBound) {
				// No document left can score as high as the worst kept.
				q.done.Store(true)
				break
			}
			// Marking the essential lists' documents costs less than
			// scoring the non-essential lists in full only when these
			// are long enough.
			ne := 0
			for _, si := range q.byBound[:w.nonEss] {
				ne += q.slotLen[si]
			}
			pruning = pruneShare*ne > q.postings-ne
		}
	}
	clear(w.segs)
	w.gather = w.gather[:0]
}

// slotBit is the bit of the si-th query slot in the per-document bit sets
// (which slots matched, which matched the name): its own for the first 63,
// one shared by all later slots, which a long request may have.
func slotBit(si int) uint64 { return 1 << min(si, 63) }

// factorOf returns the name factor's constants for slots of the given idfs.
func (r *BM25F) factorOf(idfs []float64) factorConsts {
	f := factorConsts{boost: r.params.NameBoost, idf: idfs, max: 1}
	for _, v := range idfs {
		f.total += v
	}
	f.scale = f.boost != 0 && f.total != 0
	if f.scale && f.boost > 0 {
		f.max = 1 + f.boost
	}
	return f
}

// factorConsts are what the name factor of one query needs: boost, the
// slots' idfs and their total, whether the factor applies (scale) and its
// largest value (max).
type factorConsts struct {
	boost, total, max float64
	idf               []float64
	scale             bool
}

// scoreWindow adds the window's documents' scores for every slot, in slot
// order, into w.score, listing the scored documents' offsets in
// w.touched.
func (r *BM25F) scoreWindow(w *window, q *scoreQuery, lo int32) {
	c, nm := q.c, q.nm
	excl := len(c.excluded) > 0
	usedFlags := q.required != 0
	// touch adds v to the score of the document at offset o.
	touch := func(o int32, bit uint64, v float64) {
		if w.score[o] == 0 {
			w.touched = append(w.touched, o)
		}
		if usedFlags {
			w.flags[o] |= bit
		}
		w.score[o] += v
	}
	setName := func(o int32, bit uint64) {
		if w.name[o] == 0 {
			w.named = append(w.named, o)
		}
		w.name[o] |= bit
	}
	for si := range q.plans {
		plan := &q.plans[si]
		bit := slotBit(si)
		segs := w.segs[q.slotCur[si]:q.slotCur[si+1]]
		if len(plan.group) == 1 && len(plan.phrases) == 0 {
			r.scoreTerm(w, segs[0], plan.group[0].weight, plan.groupIDF, bit, lo, c, nm, usedFlags)
			continue
		}
		w.slotDocs = w.slotDocs[:0]
		// The one-word alternatives add up their weighted frequencies
		// in alt.sum, then saturate once.
		for gi, g := range plan.group {
			seg := segs[gi]
			for i := range seg {
				p := &seg[i]
				if excl && c.mask[p.slot] {
					continue
				}
				v := g.weight * r.tfw(p)
				if v <= 0 {
					continue // a field or synonym weighted 0
				}
				o := p.slot - lo
				a := &w.alt[o]
				if a.sum == 0 {
					w.altSeen = append(w.altSeen, o)
				}
				a.sum += v
				if p.tf[fieldName] > 0 {
					setName(o, bit)
				}
			}
		}
		segs = segs[len(plan.group):]
		if len(plan.phrases) == 0 {
			// The group is the slot's only alternative: its score is the
			// slot's.
			for _, o := range w.altSeen {
				a := &w.alt[o]
				v := nm.saturate(plan.groupIDF, a.sum, r.wlen[lo+o])
				a.sum = 0
				if v > 0 {
					touch(o, bit, v)
				}
			}
			w.altSeen = w.altSeen[:0]
			continue
		}
		// keep records v as the slot score at offset o when it beats the
		// best alternative so far.
		keep := func(a *altAcc, o int32, v float64) {
			if v > a.slotMax {
				if a.slotMax == 0 {
					w.slotDocs = append(w.slotDocs, o)
				}
				a.slotMax = v
			}
		}
		for _, o := range w.altSeen {
			a := &w.alt[o]
			keep(a, o, nm.saturate(plan.groupIDF, a.sum, r.wlen[lo+o]))
			a.sum = 0
		}
		w.altSeen = w.altSeen[:0]
		// Each several-word alternative sums its words' scores.
		for _, ph := range plan.phrases {
			for i := range ph.lists {
				idf := ph.idfs[i]
				seg := segs[i]
				for j := range seg {
					p := &seg[j]
					if excl && c.mask[p.slot] {
						continue
					}
					v := nm.saturate(idf, r.tfw(p), r.wlen[p.slot])
					if v <= 0 {
						continue
					}
					o := p.slot - lo
					a := &w.alt[o]
					if a.sum == 0 {
						w.altSeen = append(w.altSeen, o)
					}
					a.sum += v
					if p.tf[fieldName] > 0 {
						setName(o, bit)
					}
				}
			}
			segs = segs[len(ph.lists):]
			for _, o := range w.altSeen {
				a := &w.alt[o]
				keep(a, o, ph.weight*a.sum)
				a.sum = 0
			}
			w.altSeen = w.altSeen[:0]
		}
		for _, o := range w.slotDocs {
			a := &w.alt[o]
			touch(o, bit, a.slotMax)
			a.slotMax = 0
		}
	}
}

// scoreTerm adds the scores of a slot that is one term, the commonest
// case, in one pass over its postings: what scoreWindow does for a slot of
// several alternatives, without accumulating them first.
func (r *BM25F) scoreTerm(w *window, seg []posting, weight, idf float64, bit uint64, lo int32, c *candidates, nm *norms, usedFlags bool) {
	excl := len(c.excluded) > 0
	for i := range seg {
		p := &seg[i]
		d := p.slot
		if excl && c.mask[d] {
			continue
		}
		v := nm.saturate(idf, weight*r.tfw(p), r.wlen[d])
		if v <= 0 {
			continue
		}
		o := d - lo
		if p.tf[fieldName] > 0 {
			if w.name[o] == 0 {
				w.named = append(w.named, o)
			}
			w.name[o] |= bit
		}
		if w.score[o] == 0 {
			w.touched = append(w.touched, o)
		}
		if usedFlags {
			w.flags[o] |= bit
		}
		w.score[o] += v
	}
}

// rank offers the window's scored documents to top and clears their
// accumulators. A document that lacks a required slot scores nothing; one
// whose sum times the largest factor is below the worst kept is passed over
// without computing its factor.
func (w *window) rank(q *scoreQuery, lo int32) {
	r, f, required, top := q.r, &q.f, q.required, &w.top
	for _, o := range w.touched {
		v := w.score[o]
		w.score[o] = 0
		if required != 0 {
			ok := w.flags[o]&required == required
			w.flags[o] = 0
			if !ok {
				continue
			}
		}
		if !(v > 0) || !top.admits(v*f.max) {
			continue
		}
		d := lo + o
		if hit := w.name[o]; f.scale && hit != 0 {
			v *= nameFactor(f.boost, hit, int(r.nameTerms[d]), f.idf, f.total)
		}
		if v > 0 && top.admits(v) {
			if _, skip := slices.BinarySearch(q.skip, d); !skip {
				top.add(v, r.idx.slots[d].seq, d)
			}
		}
	}
	for _, o := range w.named {
		w.name[o] = 0
	}
	w.touched, w.named = w.touched[:0], w.named[:0]
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
// frequencies times the fields' weights, summed in field order. Most terms
// are in one or two fields; the others add zero, which leaves the sum as
// it is, and summing all six costs less than a branch on each.
func (r *BM25F) tfw(p *posting) float64 {
	w, tf := &r.weight, &p.tf
	return w[0]*float64(tf[0]) + w[1]*float64(tf[1]) + w[2]*float64(tf[2]) +
		w[3]*float64(tf[3]) + w[4]*float64(tf[4]) + w[5]*float64(tf[5])
}

// tfw names each of maxFields fields: these fail to compile unless there
// are six.
var (
	_ [maxFields - 6]struct{}
	_ [6 - maxFields]struct{}
)

// saturate turns a term's weighted frequency in a document of weighted
// length wlen into its score.
func (nm *norms) saturate(idf, tfw float64, wlen float32) float64 {
	return idf * tfw * (nm.k1 + 1) / (tfw + nm.add + nm.mul*float64(wlen))
}
