package codemode

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
)

// A Store holds the values a session's scripts keep with store(key,
// value) and read back with load(key). A runtime makes one per
// conversation from its transcript: each codemode result that succeeded
// carries the values its script stored ([Details.Stored]), and replaying
// them in order, on the conversation's branch, gives the store of that
// branch. A script's values reach the Store only when it succeeds. A
// Store is safe for concurrent use.
type Store struct {
	mu     sync.Mutex
	values map[string]json.RawMessage
}

// NewStore returns an empty Store.
func NewStore() *Store { return &Store{values: map[string]json.RawMessage{}} }

// Load returns the value stored under key, as JSON.
func (s *Store) Load(key string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[key]
	return v, ok
}

// Apply stores values: what one script stored, over what was there.
func (s *Store) Apply(values map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.values == nil {
		s.values = map[string]json.RawMessage{}
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		s.values[k] = values[k]
	}
}

// Keys returns the stored keys, sorted.
func (s *Store) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.values))
}

// ReplayStore returns the store of a conversation: the Stored values of
// its codemode results' details, applied in order. details are the raw
// Details of its codemode tool results, oldest first.
func ReplayStore(details []json.RawMessage) *Store {
	st := NewStore()
	for _, raw := range details {
		if d, ok := ReadDetails(raw); ok && d.Error == "" && len(d.Stored) > 0 {
			st.Apply(d.Stored)
		}
	}
	return st
}

type storeKey struct{}

// WithStore returns ctx carrying st: the scripts run with it load from
// it, and the codemode tool applies what a successful script stored.
func WithStore(ctx context.Context, st *Store) context.Context {
	return context.WithValue(ctx, storeKey{}, st)
}

// StoreOf returns the Store ctx carries, nil when none.
func StoreOf(ctx context.Context) *Store {
	st, _ := ctx.Value(storeKey{}).(*Store)
	return st
}
