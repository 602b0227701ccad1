package search

import (
	"iter"
	"slices"
	"sync/atomic"
)

// slotLists maps keys (normalised names, name words) to the slots of the
// documents that have them, in the order they were added. Most keys name
// one document: such a key holds its slot alone, without a slice of its
// own, and reads as the one-slot piece of the identity list *ids
// ((*ids)[s] == s), which the ranker keeps as long as its slots.
type slotLists struct {
	one  map[string]int32
	many map[string][]int32
	ids  *[]int32
	// keys holds the keys as a hint reads them (keyTable), once it has
	// asked for them, until a key is added or dropped.
	keys *atomic.Pointer[[]keyInfo]
}

// newSlotLists returns empty lists that read their one-slot lists from
// *ids.
func newSlotLists(ids *[]int32) slotLists {
	return slotLists{one: make(map[string]int32), many: make(map[string][]int32), ids: ids,
		keys: new(atomic.Pointer[[]keyInfo])}
}

// keysChanged forgets the keys a hint read, when a key is added or dropped.
func (m slotLists) keysChanged() {
	if m.keys.Load() != nil {
		m.keys.Store(nil)
	}
}

// get returns k's slots; the result must not be changed.
func (m slotLists) get(k string) []int32 {
	if s, ok := m.one[k]; ok {
		return m.alone(s)
	}
	return m.many[k]
}

// alone returns the list of slot s alone.
func (m slotLists) alone(s int32) []int32 { return (*m.ids)[s : s+1 : s+1] }

// reserve makes room for n keys of one slot, if m is empty: a large
// first build then does not grow the map one doubling at a time.
func (m *slotLists) reserve(n int) {
	if len(m.one) == 0 && len(m.many) == 0 {
		m.one = make(map[string]int32, n)
	}
}

// add appends slot to k's slots.
func (m slotLists) add(k string, slot int32) {
	if s, ok := m.one[k]; ok {
		delete(m.one, k)
		m.many[k] = []int32{s, slot}
		return
	}
	if list, ok := m.many[k]; ok {
		m.many[k] = append(list, slot)
		return
	}
	m.one[k] = slot
	m.keysChanged()
}

// drop removes slot from k's slots.
func (m slotLists) drop(k string, slot int32) {
	if s, ok := m.one[k]; ok {
		if s == slot {
			delete(m.one, k)
			m.keysChanged()
		}
		return
	}
	list := slices.DeleteFunc(m.many[k], func(s int32) bool { return s == slot })
	switch len(list) {
	case 0:
		delete(m.many, k)
		m.keysChanged()
	case 1:
		delete(m.many, k)
		m.one[k] = list[0]
	default:
		m.many[k] = list
	}
}

// all yields every key with its slots (as get gives them), in no order.
func (m slotLists) all() iter.Seq2[string, []int32] {
	return func(yield func(string, []int32) bool) {
		for k, s := range m.one {
			if !yield(k, m.alone(s)) {
				return
			}
		}
		for k, list := range m.many {
			if !yield(k, list) {
				return
			}
		}
	}
}
