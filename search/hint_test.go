package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestShortestIsSorted holds shortest, which keeps the few best slots of a
// key as it reads them, to sorting them all: the names of candidates not
// yet suggested, shortest first, then first indexed, up to maxNearest. The
// index's slots are freed and reused, so that slot order is not insertion
// order, and names of one length are many, so that ties are common.
func TestShortestIsSorted(t *testing.T) {
	r, err := NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("get list create issue pull request file user team page")
	rng := rand.New(rand.NewPCG(5, 9))
	var docs []Document
	for i := range 3000 {
		name := words[rng.IntN(len(words))] + "_" + words[rng.IntN(len(words))]
		docs = append(docs, Document{Name: fmt.Sprintf("%s_%d", name, i%(1+rng.IntN(300))), Description: "A tool."})
	}
	r.Add(docs...)
	var removed []string
	for i := 0; i < len(docs); i += 5 {
		removed = append(removed, docs[i].Name)
	}
	r.Remove(removed...)
	r.Add(docs[:len(removed)/2]...)

	want := func(out []string, slots []int32, c *candidates) []string {
		slots = slices.Clone(slots)
		slices.SortFunc(slots, func(a, b int32) int {
			if la, lb := len(r.docs[a].display), len(r.docs[b].display); la != lb {
				return la - lb
			}
			return compareSeq(r.idx, a, b)
		})
		for _, slot := range slots {
			if len(out) == maxNearest {
				break
			}
			if name := r.docs[slot].display; !c.mask[slot] && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
		return out
	}
	checked := 0
	for round := range 40 {
		var exclude []string
		for _, d := range docs {
			if rng.IntN(4) == 0 {
				exclude = append(exclude, d.Name)
			}
		}
		if round%2 == 0 {
			exclude = nil
		}
		s := r.scr.get(len(r.idx.slots))
		c := r.idx.candidates(exclude, s)
		for key, slots := range r.nameWords.all() {
			var out []string
			for range rng.IntN(maxNearest) {
				out = append(out, docs[rng.IntN(len(docs))].Name)
			}
			if rng.IntN(3) == 0 && len(slots) > 0 && len(out) < maxNearest {
				out = append(out, r.docs[slots[rng.IntN(len(slots))]].display)
			}
			got := r.shortest(slices.Clone(out), slots, &c)
			if w := want(slices.Clone(out), slots, &c); !slices.Equal(got, w) {
				t.Fatalf("key %q, %d slots, out %q: got %q, want %q", key, len(slots), out, got, w)
			}
			checked++
		}
		r.scr.put(s)
	}
	if checked < 100 {
		t.Errorf("checked %d keys; the index tests little", checked)
	}
}
