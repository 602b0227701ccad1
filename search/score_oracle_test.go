package search

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The former scoring, kept as the oracle that TestPrunedRankingIsExhaustive
// compares rankSlots with: every posting of every slot, one slot after the
// other, into per-document arrays over the whole index, then the k best.

// oracleState is the oracle's per-document state over the whole index.
type oracleState struct {
	score       []float64
	name, flags []uint64
	alt         []altAcc
	touched     []int32
	altSeen     []int32
	slotDocs    []int32
	slotIDF     []float64
}

// oracleRank returns the k best documents for the slots, best first.
func (r *BM25F) oracleRank(slots []qslot, c *candidates, k int) []ranked {
	n := len(r.idx.slots)
	s := &oracleState{score: make([]float64, n), name: make([]uint64, n), flags: make([]uint64, n),
		alt: make([]altAcc, n)}
	top := &topSet{}
	top.reset(k)
	if c.n <= 0 || k <= 0 {
		return top.sorted()
	}
	nm := r.normsFor(c)
	excl := len(c.excluded) > 0
	var required uint64
	for si, sl := range slots {
		if sl.required {
			required |= slotBit(si)
		}
	}
	touch := func(d int32, bit uint64, v float64) {
		if s.score[d] == 0 {
			s.touched = append(s.touched, d)
		}
		s.flags[d] |= bit
		s.score[d] += v
	}
	for si, sl := range slots {
		bit := slotBit(si)
		plan := r.planAll(sl, c) // every phrase: rankSlots drops the dominated ones
		s.slotIDF = append(s.slotIDF, plan.idf())
		s.slotDocs = s.slotDocs[:0]
		for _, g := range plan.group {
			for i := range g.list {
				p := &g.list[i]
				if excl && c.mask[p.slot] {
					continue
				}
				v := g.weight * r.tfw(p)
				if v <= 0 {
					continue
				}
				a := &s.alt[p.slot]
				if a.sum == 0 {
					s.altSeen = append(s.altSeen, p.slot)
				}
				a.sum += v
				if p.tf[fieldName] > 0 {
					s.name[p.slot] |= bit
				}
			}
		}
		keep := func(a *altAcc, d int32, v float64) {
			if v > a.slotMax {
				if a.slotMax == 0 {
					s.slotDocs = append(s.slotDocs, d)
				}
				a.slotMax = v
			}
		}
		for _, d := range s.altSeen {
			a := &s.alt[d]
			keep(a, d, nm.saturate(plan.groupIDF, a.sum, r.wlen[d]))
			a.sum = 0
		}
		s.altSeen = s.altSeen[:0]
		for _, ph := range plan.phrases {
			for i, list := range ph.lists {
				for j := range list {
					p := &list[j]
					if excl && c.mask[p.slot] {
						continue
					}
					v := nm.saturate(ph.idfs[i], r.tfw(p), r.wlen[p.slot])
					if v <= 0 {
						continue
					}
					a := &s.alt[p.slot]
					if a.sum == 0 {
						s.altSeen = append(s.altSeen, p.slot)
					}
					a.sum += v
					if p.tf[fieldName] > 0 {
						s.name[p.slot] |= bit
					}
				}
			}
			for _, d := range s.altSeen {
				a := &s.alt[d]
				keep(a, d, ph.weight*a.sum)
				a.sum = 0
			}
			s.altSeen = s.altSeen[:0]
		}
		for _, d := range s.slotDocs {
			touch(d, bit, s.alt[d].slotMax)
			s.alt[d].slotMax = 0
		}
	}
	f := r.factorOf(s.slotIDF)
	for _, d := range s.touched {
		v := s.score[d]
		if required != 0 && s.flags[d]&required != required {
			continue
		}
		if !(v > 0) {
			continue
		}
		if hit := s.name[d]; f.scale && hit != 0 {
			v *= nameFactor(f.boost, hit, int(r.nameTerms[d]), f.idf, f.total)
		}
		if v > 0 && top.admits(v) {
			top.add(v, r.idx.slots[d].seq, d)
		}
	}
	return top.sorted()
}

// copiedDocs returns copies times the built-in catalog's documents, each
// copy's names suffixed: many documents score alike, and ties go by
// insertion order.
func copiedDocs(tb testing.TB, copies int) []Document {
	base := fuzzDocs(tb, 1<<20)
	var docs []Document
	for i := range copies {
		for _, d := range base {
			d.Name = fmt.Sprintf("%s_%d", d.Name, i)
			if d.OriginalName != "" {
				d.OriginalName = fmt.Sprintf("%s_%d", d.OriginalName, i)
			}
			docs = append(docs, d)
		}
	}
	return docs
}

// TestPrunedRankingIsExhaustive compares rankSlots, which scores windows of
// the index, skips what cannot enter the k best and shares large queries
// between processors, with the former scoring of every posting
// (oracleRank): the same documents with the same scores, to the last bit,
// in the same order, for queries of one to many words, required words,
// exclusions and several limits, on an index whose slots were freed and
// reused (so that slot order is not insertion order) and on one or four
// processors.
func TestPrunedRankingIsExhaustive(t *testing.T) {
	docs := copiedDocs(t, 13)
	r, err := NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Add(docs...)
	// Free slots early in the index and fill them with documents added
	// last; replace some in place.
	rng := rand.New(rand.NewPCG(7, 7))
	var removed []string
	for i := 0; i < 3000; i += 7 {
		removed = append(removed, docs[i].Name)
	}
	r.Remove(removed...)
	r.Add(docs[:len(removed)/2]...)
	r.Add(docs[5000:5100]...)
	checkListsSorted(t, r.idx)

	vocab := strings.Fields("add comment issue bug login github list pull request create branch repository " +
		"search web news file upload drive share team screenshot browser tab kubernetes pod logs deploy " +
		"restart namespace slack send message channel stripe refund payment customer database query notion " +
		"page jira transition sql postgres run image export figma incident datadog key redis get set " +
		"delete remove update user email calendar event 搜索 页面 仓库 issue_comment api-post-search")
	queries := append([]string{}, buildOracleQueries...)
	queries = append(queries, "add a comment to the Linear issue about the login bug",
		"show me the failing checks on my latest GitHub pull request",
		"+github +pull request", "list +xyzzy", "create +ticket",
		"search the web for recent news about Go generics", "web search news")
	for range 120 {
		n := 1 + rng.IntN(9)
		var words []string
		for range n {
			w := vocab[rng.IntN(len(vocab))]
			if rng.IntN(8) == 0 {
				w = "+" + w
			}
			words = append(words, w)
		}
		queries = append(queries, strings.Join(words, " "))
	}
	var exclude []string
	for i := 0; i < len(docs); i += 97 {
		exclude = append(exclude, docs[i].Name)
	}
	checked := 0
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for qi, text := range queries {
			k := []int{1, 3, 8, 40}[qi%4]
			var ex []string
			if qi%3 == 1 {
				ex = exclude
			}
			pq := r.parseQuery(text)
			s := r.scr.get(len(r.idx.slots))
			c := r.idx.candidates(ex, s)
			// Some searches pass over tools (those a query names exactly),
			// here every other one of the best.
			var skip []int32
			if qi%5 == 2 {
				for i, e := range r.oracleRank(pq.slots, &c, k+3) {
					if i%2 == 0 {
						skip = append(skip, e.slot)
					}
				}
				slices.Sort(skip)
			}
			var want []ranked
			for _, e := range r.oracleRank(pq.slots, &c, k+len(skip)) {
				if _, found := slices.BinarySearch(skip, e.slot); !found && len(want) < k {
					want = append(want, e)
				}
			}
			s.skip = append(s.skip[:0], skip...)
			got, _ := r.rankSlots(pq.slots, &c, s, k)
			got = append([]ranked(nil), got...)
			r.scr.put(s)
			if len(got) == 0 && len(want) == 0 {
				got, want = nil, nil
			}
			if !reflect.DeepEqual(got, want) {
				runtime.GOMAXPROCS(prev)
				t.Fatalf("%d processors, %q, limit %d, %d excluded: ranked\n%v\nwant\n%v", procs, text, k, len(ex), got, want)
			}
			if len(want) > 0 {
				checked++
			}
		}
		runtime.GOMAXPROCS(prev)
	}
	if checked < len(queries) {
		t.Errorf("only %d of %d searches found anything; the queries test little", checked, 2*len(queries))
	}
}

// checkListsSorted fails unless every list of the index is in strictly
// increasing slot order and holds only live slots.
func checkListsSorted(tb testing.TB, p *postings) {
	tb.Helper()
	for id, list := range p.lists {
		for i := range list {
			if i > 0 && list[i].slot <= list[i-1].slot {
				tb.Fatalf("list %d: slot %d after slot %d", id, list[i].slot, list[i-1].slot)
			}
			if !p.slots[list[i].slot].live {
				tb.Fatalf("list %d: slot %d is not live", id, list[i].slot)
			}
		}
	}
}

// TestFilteredRankingIsExhaustive holds the pruned ranking to the oracle
// on a catalog made for the filter of pruned windows (window.filter): tools
// whose names and descriptions are drawn from a few words, so that many
// score alike and the name factor decides which of them enter. A filter
// that misjudged a tool's partial score, the non-essential slots' bounds or
// its name factor would drop a tool the oracle ranks.
func TestFilteredRankingIsExhaustive(t *testing.T) {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima " +
		"mike november oscar papa quebec romeo sierra tango")
	rng := rand.New(rand.NewPCG(11, 3))
	// zipf draws common words far more often than rare ones.
	zipf := rand.NewZipf(rng, 1.3, 2, uint64(len(words)-1))
	pick := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	var docs []Document
	for i := range 3*scoreWindow + 500 {
		name := strings.ReplaceAll(pick(1+rng.IntN(3)), " ", "_")
		docs = append(docs, Document{
			Name:        fmt.Sprintf("%s_%d", name, i),
			Description: pick(2 + rng.IntN(12)),
		})
	}
	r, err := NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Add(docs...)
	before := filteredWindows.Load()
	for qi := range 300 {
		text := pick(2 + rng.IntN(5))
		k := []int{1, 3, 8}[qi%3]
		pq := r.parseQuery(text)
		s := r.scr.get(len(r.idx.slots))
		c := r.idx.candidates(nil, s)
		want := r.oracleRank(pq.slots, &c, k)
		got, _ := r.rankSlots(pq.slots, &c, s, k)
		got = append([]ranked(nil), got...)
		r.scr.put(s)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q, limit %d: ranked\n%v\nwant\n%v", text, k, got, want)
		}
	}
	if filtered := filteredWindows.Load() - before; filtered < 100 {
		t.Errorf("the filter ran in %d windows; the catalog tests little", filtered)
	}
}

// TestUndominated drops a phrase only when another scores at least as
// much in every document, to the last bit: its words, at idfs and a
// weight no lower, in the same order unless it has two words. On the
// corpus, "search the web" gives search web and web search, the same
// words, and only the first stays.
func TestUndominated(t *testing.T) {
	ph := func(w float64, words string, idfs ...float64) phrasePlan {
		return phrasePlan{weight: w, terms: strings.Fields(words), idfs: idfs}
	}
	kept := func(phrases ...phrasePlan) []string {
		var out []string
		for _, p := range undominated(phrases) {
			out = append(out, fmt.Sprint(p.weight, p.terms))
		}
		return out
	}
	for _, c := range []struct {
		name    string
		phrases []phrasePlan
		want    []string
	}{
		{"reversed pair, lower weight", []phrasePlan{ph(1, "search web", 2, 3), ph(0.1, "web search", 3, 2)},
			[]string{"1 [search web]"}},
		{"the lower weight first", []phrasePlan{ph(0.1, "web search", 3, 2), ph(1, "search web", 2, 3)},
			[]string{"1 [search web]"}},
		{"equal: the first stays", []phrasePlan{ph(1, "pull request", 2, 3), ph(1, "pull request", 2, 3)},
			[]string{"1 [pull request]"}},
		{"a higher idf stays", []phrasePlan{ph(1, "search web", 2, 3), ph(0.1, "web search", 3.5, 2)},
			[]string{"1 [search web]", "0.1 [web search]"}},
		{"a higher weight stays", []phrasePlan{ph(0.5, "search web", 2, 3), ph(1, "web search", 3, 2)},
			[]string{"1 [web search]"}},
		{"a subset in order", []phrasePlan{ph(1, "a b c d", 1, 1, 1, 1), ph(1, "a c d", 1, 1, 1)},
			[]string{"1 [a b c d]"}},
		{"three words out of order stay", []phrasePlan{ph(1, "a b c", 1, 1, 1), ph(1, "c a b", 1, 1, 1)},
			[]string{"1 [a b c]", "1 [c a b]"}},
		{"a word the other lacks", []phrasePlan{ph(1, "pull request", 1, 1), ph(0.1, "pull req", 1, 1)},
			[]string{"1 [pull request]", "0.1 [pull req]"}},
	} {
		if got := kept(c.phrases...); !slices.Equal(got, c.want) {
			t.Errorf("%s: kept %v, want %v", c.name, got, c.want)
		}
	}

	r, err := NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Add(fuzzDocs(t, 1<<20)...)
	s := r.scr.get(len(r.idx.slots))
	defer r.scr.put(s)
	c := r.idx.candidates(nil, s)
	var all, kept2 int
	for _, sl := range r.parseQuery("search the web for news").slots {
		all += len(r.planAll(sl, &c).phrases)
		kept2 += len(r.plan(sl, &c).phrases)
	}
	if all-kept2 != 1 {
		t.Errorf("the corpus plan of %q keeps %d of %d phrases; want one dropped", "search the web for news", kept2, all)
	}
}
