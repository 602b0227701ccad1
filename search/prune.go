package search

import (
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
)

// The pruning of a query's scoring (MaxScore): which slots are
// non-essential (prune), what a slot can score at most (bound), and a
// window's postings of the documents that can still enter the k best
// (segments, filter); score.go describes the whole.

// filteredWindows counts the windows filter has scored, for the tests.
var filteredWindows atomic.Int64

// filterRetry is how much the worst kept score must grow, after a window
// whose filter left more than half of its documents, before the next
// window is filtered.
const filterRetry = 1.1

// gallopShare is how many times more postings than documents a list's part
// in a window must have to be searched for the documents rather than read
// in full.
const gallopShare = 8

// pruneShare sets when pruning pays: when the non-essential lists have more
// than one pruneShare-th as many postings as the essential ones. Marking
// the essential lists' documents costs about that share of scoring the
// non-essential lists in full.
const pruneShare = 4

// prune makes slots non-essential, lowest bound first, while a document
// with only their terms would score below the worst kept, and reports
// whether it made any. Such a document's name factor is at most 1 + boost
// × √share, share being those slots' part of the query's idf mass.
func (w *window) prune(q *scoreQuery) bool {
	worst := w.top.h[0].score * (1 - boundMargin)
	sum := 0.0
	for _, si := range q.byBound[:w.nonEss] {
		sum += q.bound[si]
	}
	made := false
	for w.nonEss < len(q.byBound) {
		i := w.nonEss
		si := q.byBound[i]
		factor := 1.0
		if q.f.scale && q.f.boost > 0 {
			factor = 1 + q.f.boost*math.Sqrt(min(1, q.idfShare[i]*(1+boundMargin)))
		}
		if (sum+q.bound[si])*factor*(1+boundMargin) >= worst {
			break
		}
		sum += q.bound[si]
		w.ess[si] = false
		w.nonEss++
		made = true
	}
	return made
}

// bound is the most a document can score for the slot, a little more:
// saturate never reaches idf × (k1 + 1), and a phrase scores its weight
// times the sum of its words'.
func (p *slotPlan) bound(nm *norms) float64 {
	b := 0.0
	if len(p.group) > 0 {
		b = p.groupIDF * (nm.k1 + 1)
	}
	for _, ph := range p.phrases {
		sum := 0.0
		for _, idf := range ph.idfs {
			sum += idf * (nm.k1 + 1)
		}
		b = max(b, ph.weight*sum)
	}
	return max(b, 0) * (1 + boundMargin)
}

// segments sets each list's postings in the window [lo, hi) and reports
// whether there are any to score. Without pruning, a list's are all its
// postings in the window. With it, the essential lists' documents are
// marked and the non-essential lists give only their postings at those.
func (w *window) segments(q *scoreQuery, lo, hi int32, pruning bool) bool {
	any := false
	for l, list := range q.lists {
		if pruning && !w.ess[q.listSlot[l]] {
			continue
		}
		start := w.pos[l]
		end := seek(list, start, hi)
		w.segs[l] = list[start:end]
		any = any || end > start
		w.pos[l] = end
	}
	if !pruning || !any {
		return any
	}
	// The filter marks the documents it keeps itself.
	filter := w.filtering && w.top.h[0].score >= w.filterFrom
	c := q.c
	excl := len(c.excluded) > 0
	for l := range q.lists {
		if filter || !w.ess[q.listSlot[l]] {
			continue
		}
		for i := range w.segs[l] {
			d := w.segs[l][i].slot
			if excl && c.mask[d] {
				continue
			}
			o := d - lo
			w.mark[o>>6] |= 1 << (o & 63)
		}
	}
	w.gather = w.gather[:0]
	if filter && !w.filter(q, lo) {
		return false
	}
	w.marked = w.marked[:0]
	for i, m := range w.mark {
		for ; m != 0; m &= m - 1 {
			w.marked = append(w.marked, int32(i<<6+bits.TrailingZeros64(m)))
		}
	}
	if len(w.marked) == 0 {
		return false
	}
	for l, list := range q.lists {
		if w.ess[q.listSlot[l]] {
			continue
		}
		// A non-essential list is left behind in windows without marked
		// documents.
		start := seek(list, w.pos[l], lo)
		end := seek(list, start, hi)
		part := list[start:end]
		w.pos[l] = end
		from := len(w.gather)
		if len(part) > gallopShare*len(w.marked) {
			j := 0
			for _, o := range w.marked {
				if j = seek(part, j, lo+o); j == len(part) {
					break
				}
				if part[j].slot == lo+o {
					w.gather = append(w.gather, part[j])
				}
			}
		} else {
			w.gatherMarked(part, lo)
		}
		w.segs[l] = w.gather[from:len(w.gather):len(w.gather)]
	}
	clear(w.mark[:])
	return true
}

// filter scores the window's essential lists alone, then leaves marked
// only the documents whose partial score, plus the bounds of the
// non-essential slots, times the largest name factor, can reach the worst
// kept; the essential lists keep only those documents' postings. It
// reports whether any document is left. The documents it keeps have
// their essential postings scored twice, so after a window where it keeps
// more than half of them, it waits for the worst kept to grow by
// filterRetry.
func (w *window) filter(q *scoreQuery, lo int32) bool {
	filteredWindows.Add(1)
	for l := range q.lists {
		if !w.ess[q.listSlot[l]] {
			w.segs[l] = nil
		}
	}
	q.r.scoreWindow(w, q, lo)
	// A document's name factor is at most 1 + boost × √share, share
	// being the idf mass of the non-essential slots and of the
	// essential ones that matched its name.
	f := &q.f
	refine := f.scale && f.boost > 0 && f.total > 0
	rest, restIDF := 0.0, 0.0
	for _, si := range q.byBound[:w.nonEss] {
		rest += q.bound[si]
		restIDF += max(0, f.idf[si])
	}
	factor := func(hit uint64) float64 {
		if !refine {
			return f.max
		}
		share := restIDF
		for ; hit != 0; hit &= hit - 1 {
			share += max(0, f.idf[bits.TrailingZeros64(hit)])
		}
		return 1 + f.boost*math.Sqrt(min(1, share/f.total*(1+boundMargin)))
	}
	unnamed := factor(0)
	worst := w.top.h[0].score * (1 - boundMargin)
	clear(w.mark[:])
	kept := 0
	for _, o := range w.touched {
		v := w.score[o]
		w.score[o] = 0
		v = (v + rest) * (1 + boundMargin)
		if v*f.max < worst {
			continue
		}
		most := unnamed
		if hit := w.name[o]; hit != 0 {
			most = factor(hit)
		}
		if v*most >= worst {
			w.mark[o>>6] |= 1 << (o & 63)
			kept++
		}
	}
	for _, o := range w.named {
		w.name[o] = 0
	}
	if 2*kept > len(w.touched) {
		w.filterFrom = worst * filterRetry
	}
	w.touched, w.named = w.touched[:0], w.named[:0]
	if kept == 0 {
		return false
	}
	for l := range q.lists {
		if !w.ess[q.listSlot[l]] {
			continue
		}
		from := len(w.gather)
		w.gatherMarked(w.segs[l], lo)
		w.segs[l] = w.gather[from:len(w.gather):len(w.gather)]
	}
	return true
}

// gatherMarked appends to w.gather the postings of part, a window's from
// lo, at marked documents. It writes every posting and moves on past the
// marked ones only, which costs less than the branch the marks would make
// unpredictable.
func (w *window) gatherMarked(part []posting, lo int32) {
	n := len(w.gather)
	g := slices.Grow(w.gather, len(part))[:n+len(part)]
	for i := range part {
		o := part[i].slot - lo
		g[n] = part[i]
		n += int(w.mark[o>>6] >> (o & 63) & 1)
	}
	w.gather = g[:n]
}
