package search

import (
	"maps"
	"slices"
	"testing"
)

// TestSlotLists: adds and drops keep every key's slots as a map of
// slices does, in the order added, whether a key has one slot or many.
func TestSlotLists(t *testing.T) {
	ids := []int32{0, 1, 2, 3, 4, 5}
	m, want := newSlotLists(&ids), map[string][]int32{}
	steps := []struct {
		add  bool
		key  string
		slot int32
	}{
		{true, "a", 3}, {true, "b", 1}, {true, "a", 5}, {true, "a", 0}, {false, "a", 5}, {false, "a", 3},
		{false, "b", 2}, {false, "b", 1}, {true, "b", 4}, {false, "c", 1}, {false, "a", 0}, {true, "a", 2},
	}
	for i, s := range steps {
		if s.add {
			m.add(s.key, s.slot)
			want[s.key] = append(want[s.key], s.slot)
		} else {
			m.drop(s.key, s.slot)
			if l := slices.DeleteFunc(want[s.key], func(x int32) bool { return x == s.slot }); len(l) == 0 {
				delete(want, s.key)
			} else {
				want[s.key] = l
			}
		}
		got := map[string][]int32{}
		for k, slots := range m.all() {
			got[k] = slices.Clone(slots)
			if !slices.Equal(m.get(k), slots) {
				t.Fatalf("step %d: get(%q) = %v, all gives %v", i, k, m.get(k), slots)
			}
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("step %d: lists %v, want %v", i, got, want)
		}
		if len(m.one)+len(m.many) != len(want) {
			t.Fatalf("step %d: %d keys held, want %d", i, len(m.one)+len(m.many), len(want))
		}
	}
	if m.get("missing") != nil {
		t.Fatal("a missing key has slots")
	}
}
