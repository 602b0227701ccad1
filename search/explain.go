package search

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Explain returns a line per query slot with its contribution to the named
// document's score for q and the frequencies, per field, of the terms that
// matched. It is a debugging aid; the format may change.
func (r *BM25F) Explain(q Query, name string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	pq := r.parseQuery(q.Text)
	slot, ok := r.idx.byName[name]
	if !ok {
		return fmt.Sprintf("%s is not indexed\n", name)
	}
	s := r.scr.get(len(r.idx.slots))
	defer r.scr.put(s)
	c := r.idx.candidates(q.Exclude, s)
	if c.mask[slot] {
		return fmt.Sprintf("%s is excluded\n", name)
	}
	nm := r.normsFor(&c)
	wlen := r.wlen[slot]
	postingOf := func(list []posting) *posting {
		if i := seek(list, 0, slot); i < len(list) && list[i].slot == slot {
			return &list[i]
		}
		return nil
	}
	var b strings.Builder
	if pq.selectNames != nil || (pq.exactKey != "" && slices.Contains(r.exact.get(pq.exactKey), slot)) {
		fmt.Fprintf(&b, "%s matches the query's tool name exactly and is listed first\n", name)
		if pq.selectNames != nil {
			return b.String()
		}
	}
	total := 0.0
	var missing []string
	var nameHits uint64
	idfs := make([]float64, len(pq.slots))
	idfSum := 0.0
	for si, sl := range pq.slots {
		plan := r.plan(sl, &c)
		idfs[si] = plan.idf()
		idfSum += idfs[si]
		best, how := 0.0, ""
		tfw := 0.0
		nameHit := false
		var parts []string
		for _, g := range plan.group {
			if p := postingOf(g.list); p != nil {
				nameHit = nameHit || p.tf[fieldName] > 0
				tfw += g.weight * r.tfw(p)
				parts = append(parts, fmt.Sprintf("%s×%.1f%v", g.term, g.weight, p.tf[:numFields]))
			}
		}
		if tfw > 0 {
			best = nm.saturate(plan.groupIDF, tfw, wlen)
			how = fmt.Sprintf("idf=%.2f %s", plan.groupIDF, strings.Join(parts, " "))
		}
		for _, ph := range plan.phrases {
			v := 0.0
			parts = parts[:0]
			for i, list := range ph.lists {
				if p := postingOf(list); p != nil {
					nameHit = nameHit || p.tf[fieldName] > 0
					v += nm.saturate(ph.idfs[i], r.tfw(p), wlen)
					parts = append(parts, fmt.Sprintf("%s%v", ph.terms[i], p.tf[:numFields]))
				}
			}
			if v*ph.weight > best {
				best, how = v*ph.weight, fmt.Sprintf("phrase×%.1f %s", ph.weight, strings.Join(parts, " "))
			}
		}
		total += best
		if nameHit {
			nameHits |= slotBit(si)
		}
		if sl.required && best == 0 {
			missing = append(missing, "+"+sl.surface)
		}
		fmt.Fprintf(&b, "%-20q %6.3f  %s\n", sl.surface, best, how)
	}
	n := int(r.nameTerms[slot])
	if f := nameFactor(r.params.NameBoost, nameHits, n, idfs, idfSum); f > 1 {
		total *= f
		fmt.Fprintf(&b, "×%.3f: the query matches %d of the %d words of the tool's name\n", f,
			min(bits.OnesCount64(nameHits), n), n)
	}
	if len(missing) > 0 {
		total = 0
		fmt.Fprintf(&b, "dropped: lacks the required %s\n", strings.Join(missing, ", "))
	}
	fmt.Fprintf(&b, "total %.3f (frequencies per field: name lead body params server server-text)\n", total)
	return b.String()
}
