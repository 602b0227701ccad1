package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/codemode"
)

// maxSessionStores bounds the client sessions whose stored values the
// gateway holds at once: past it, the store of the session whose scripts
// ran longest ago is dropped (its later scripts start from an empty one).
const maxSessionStores = 1024

// sessionStores holds a [codemode.Store] for each client session of the
// codemode surface, so that the values a session's scripts store are
// what its later scripts load, and no other session's. A session's store
// is dropped when the session ends.
type sessionStores struct {
	mu   sync.Mutex
	max  int
	tick uint64 // counts lookups: the recency of each store
	held map[*mcp.ServerSession]*heldStore
}

// heldStore is one session's store and when a script of the session last
// used it.
type heldStore struct {
	st   *codemode.Store
	used uint64
}

func newSessionStores() *sessionStores {
	return &sessionStores{max: maxSessionStores, held: map[*mcp.ServerSession]*heldStore{}}
}

// of returns the store of the session a request of ctx belongs to, made
// at its first script; nil (values live for one script) over HTTP, which
// keeps no session: a request there has a session of its own.
func (s *sessionStores) of(ctx context.Context, ss *mcp.ServerSession) *codemode.Store {
	if ss == nil || overHTTP(ctx) {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick++
	if h, ok := s.held[ss]; ok {
		h.used = s.tick
		return h.st
	}
	for len(s.held) >= s.max {
		var oldest *mcp.ServerSession
		for k, h := range s.held {
			if oldest == nil || h.used < s.held[oldest].used {
				oldest = k
			}
		}
		delete(s.held, oldest)
	}
	h := &heldStore{st: codemode.NewStore(), used: s.tick}
	s.held[ss] = h
	go func() {
		_ = ss.Wait() // the session has ended
		s.drop(ss, h)
	}()
	return h.st
}

// drop forgets a session's store h, unless another has replaced it.
func (s *sessionStores) drop(ss *mcp.ServerSession, h *heldStore) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[ss] == h {
		delete(s.held, ss)
	}
}

// len returns how many sessions' stores are held.
func (s *sessionStores) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}
