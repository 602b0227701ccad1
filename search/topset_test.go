package search

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopSetMatchesSort checks that a topSet keeps what sorting every
// document and taking the first k gives, ties included.
func TestTopSetMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := rng.IntN(200)
		k := rng.IntN(12)
		all := make([]ranked, n)
		for i := range all {
			// Few distinct scores, so that ties are common.
			all[i] = ranked{score: float64(rng.IntN(6)), seq: uint64(rng.IntN(1000)), slot: int32(i)}
		}
		var top topSet
		top.reset(k)
		for _, e := range all {
			if top.admits(e.score) {
				top.add(e.score, e.seq, e.slot)
			}
		}
		got := top.sorted()
		want := slices.Clone(all)
		slices.SortStableFunc(want, func(a, b ranked) int {
			if c := better(a, b); c != 0 {
				return c
			}
			return int(a.slot - b.slot)
		})
		want = want[:min(k, n)]
		// Entries equal in score and seq may be kept in either order of
		// slot; compare what better sees.
		if len(got) != len(want) {
			t.Fatalf("trial %d: kept %d, want %d", trial, len(got), len(want))
		}
		for i := range got {
			if better(got[i], want[i]) != 0 {
				t.Fatalf("trial %d: entry %d is %+v, want %+v", trial, i, got[i], want[i])
			}
		}
	}
}
