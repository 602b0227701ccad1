package session

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/transcript"
)

// SyncPolicy says when a session flushes its file to stable storage; see
// the package documentation for what each policy guarantees.
type SyncPolicy int

// The sync policies.
const (
	// SyncOnClose writes each entry with one write(2) call and calls
	// fsync(2) only in Close: a killed process loses at most the entry
	// being written; a power loss may lose entries since the last fsync.
	SyncOnClose SyncPolicy = iota
	// SyncEveryEntry also calls fsync(2) after every entry, before the
	// append returns: an appended entry survives a power loss.
	SyncEveryEntry
	// syncNone never calls fsync(2). Only tests use it (export_test.go):
	// fuzzing Open on disk is about what it does to the file, not about
	// durability, and an fsync costs more than the rest of an input.
	syncNone
)

// Options configure a session. A nil *Options means the zero value.
type Options struct {
	// Sync is the sync policy; the default is SyncOnClose.
	Sync SyncPolicy
	// Now returns the current time for timestamps; nil means time.Now.
	Now func() time.Time
	// Cwd is recorded in the header of new sessions. Fork keeps the
	// source's when it is empty.
	Cwd string
	// MCPFile, the MCP servers file the session runs with, is recorded in
	// the header of new sessions. Fork keeps the source's when it is
	// empty.
	MCPFile string
	// ReadOnly makes Open read the file without opening it for writing
	// and without changing it: a torn final line is dropped in memory
	// only (and still reported by Recovered), and appends fail with
	// ErrReadOnly. It suits readers of a session another process may be
	// writing. Create and Fork ignore it.
	ReadOnly bool
}

func (o *Options) now() time.Time {
	now := time.Now
	if o != nil && o.Now != nil {
		now = o.Now
	}
	return now().UTC().Truncate(time.Millisecond)
}

func (o *Options) syncPolicy() SyncPolicy {
	if o == nil {
		return SyncOnClose
	}
	return o.Sync
}

// Session is an open session file: its entries in memory and the file,
// open for appending. A Session is safe for concurrent use by multiple
// goroutines.
type Session struct {
	path      string
	header    Header
	policy    SyncPolicy
	opts      Options
	recovered int64
	readOnly  bool

	mu      sync.Mutex // guards the fields below
	f       *os.File   // nil once closed
	err     error      // a failed write or fsync: no more appends
	p       *parsed    // the entries
	leaf    string
	size    int64  // of the file
	dirty   bool   // written since the last fsync
	dirSync string // directory to fsync on Close (a new file under SyncOnClose)
}

// Create starts a new session in dir, which is made (mode 0700) if
// needed: a file named after the UTC creation time and the session id,
// "20260102T150405Z_4f1c9a0b2d3e4f50.jsonl" (mode 0600), holding the
// header.
func Create(dir string, opts *Options) (*Session, error) {
	h := Header{Version: Version, ID: randomHex(8), Timestamp: opts.now()}
	if opts != nil {
		h.Cwd, h.MCPFile = opts.Cwd, opts.MCPFile
	}
	return create(dir, h, nil, opts)
}

// create writes a new session file in dir with the header h followed by
// the entry lines body, and opens it.
func create(dir string, h Header, body []byte, opts *Options) (*Session, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating session directory: %w", err)
	}
	line, err := h.MarshalJSON()
	if err != nil {
		return nil, err
	}
	data := append(append(line, '\n'), body...)
	name := h.Timestamp.UTC().Format(nameLayout) + "_" + h.ID + ".jsonl"
	path := filepath.Join(dir, name)
	p, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	// Write a temporary file and rename it, so that a session file always
	// has its header and, for a fork, all of its copied entries.
	tmp := filepath.Join(dir, "."+name+".tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating session: %w", err)
	}
	if err := lockFile(f, path); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	s := newSession(path, f, p, opts)
	fail := func(err error) (*Session, error) {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("creating session %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if s.policy == SyncEveryEntry {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if s.policy == SyncEveryEntry {
		if err := syncDir(dir); err != nil {
			f.Close()
			os.Remove(path)
			return nil, fmt.Errorf("creating session %s: %w", path, err)
		}
	} else if s.policy != syncNone {
		s.dirty, s.dirSync = true, dir
	}
	return s, nil
}

// Open opens the session file at path for reading and appending (only
// reading with [Options.ReadOnly]). A torn final line is dropped and
// truncated away ([Session.Recovered] says how many bytes); any other
// problem is a [*FormatError] and leaves the file as it was. The leaf is
// the last entry of the file.
//
// A Session open for appending holds the file's advisory lock until
// Close: opening for appending a file that another writer holds, in this
// process or another, fails at once with a [*LockedError] (ErrLocked)
// naming the holder. Read-only opens neither take nor heed the lock.
func Open(path string, opts *Options) (*Session, error) {
	if opts != nil && opts.ReadOnly {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("opening session: %w", err)
		}
		p, err := parse(path, data)
		if err != nil {
			return nil, err
		}
		s := newSession(path, nil, p, opts)
		s.recovered, s.readOnly = p.torn, true
		return s, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("opening session: %w", err)
	}
	// One writer at a time; the file is read once the lock is held, so
	// what was appended before is seen.
	if err := lockFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading session %s: %w", path, err)
	}
	p, err := parse(path, data)
	if err != nil {
		f.Close()
		return nil, err
	}
	s := newSession(path, f, p, opts)
	if p.torn > 0 {
		if err := f.Truncate(p.end); err != nil {
			f.Close()
			return nil, fmt.Errorf("dropping the torn last line of session %s: %w", path, err)
		}
		if opts.syncPolicy() != syncNone {
			if err := f.Sync(); err != nil {
				f.Close()
				return nil, fmt.Errorf("dropping the torn last line of session %s: %w", path, err)
			}
		}
		s.recovered = p.torn
	}
	return s, nil
}

func newSession(path string, f *os.File, p *parsed, opts *Options) *Session {
	s := &Session{path: path, header: p.header, policy: opts.syncPolicy(), f: f, p: p,
		leaf: p.leaf(), size: p.end}
	if opts != nil {
		s.opts = *opts
	}
	return s
}

// Path returns the session file's path.
func (s *Session) Path() string { return s.path }

// ID returns the session's id.
func (s *Session) ID() string { return s.header.ID }

// Header returns the session's header.
func (s *Session) Header() Header { return s.header }

// Recovered returns the number of bytes of a torn final line that [Open]
// dropped from the file, 0 when there was none. Callers should report a
// recovery to the user.
func (s *Session) Recovered() int64 { return s.recovered }

// Append adds a message entry as a child of the leaf and makes it the
// leaf. A message that fails [llm.Message.Validate] is rejected and
// nothing is written. The returned entry is as a reader of the file will
// see it.
func (s *Session) Append(m llm.Message) (Entry, error) {
	if err := m.Validate(); err != nil {
		return Entry{}, fmt.Errorf("appending to session: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(Entry{Type: TypeMessage, Message: &m})
}

// AppendData adds an entry of an application's own type, carrying data
// (any JSON value) as its "data" field, as a child of the leaf, and makes it
// the leaf. Readers that do not know the type keep it; the conversation
// (Messages) skips it. typ must not be one of the package's types.
func (s *Session) AppendData(typ EntryType, data any) (Entry, error) {
	if typ == "" || typ == TypeMessage || typ == TypeCompaction || typ == headerType {
		return Entry{}, fmt.Errorf("appending to session: %q is not an application entry type", typ)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return Entry{}, fmt.Errorf("appending to session: encoding %s data: %w", typ, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(Entry{Type: typ, Data: raw})
}

// AppendCompaction adds a compaction entry as a child of the leaf and
// makes it the leaf. summary replaces the conversation before
// firstKeptID, an entry of the current branch (the leaf included) or ""
// to keep nothing. The entry's system message checkpoint is computed from
// the current context, so that the tools and prompt the model knows
// survive the compaction.
func (s *Session) AppendCompaction(summary, firstKeptID string) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if firstKeptID != "" && !s.p.isAncestor(firstKeptID, s.leaf) {
		if _, ok := s.p.index[firstKeptID]; ok {
			return Entry{}, fmt.Errorf("compacting session: entry %q is not on the current branch", firstKeptID)
		}
		return Entry{}, fmt.Errorf("compacting session: entry %q: %w", firstKeptID, ErrUnknownEntry)
	}
	e := Entry{Type: TypeCompaction, Summary: summary, FirstKeptID: firstKeptID}
	if sys, ok := transcript.Replay(s.messagesLocked()).SystemMessage(); ok {
		e.SystemMessage = &sys
	}
	return s.appendLocked(e)
}

// appendLocked fills in e's id, parent and timestamp, writes it and makes
// it the leaf.
func (s *Session) appendLocked(e Entry) (Entry, error) {
	if s.readOnly {
		return Entry{}, ErrReadOnly
	}
	if s.f == nil {
		return Entry{}, ErrClosed
	}
	if s.err != nil {
		return Entry{}, s.err
	}
	e.ID = s.newID()
	e.ParentID = s.leaf
	e.Timestamp = s.opts.now()
	line, err := e.MarshalJSON()
	if err != nil {
		return Entry{}, fmt.Errorf("encoding session entry: %w", err)
	}
	// Keep what a reader of the file will see.
	var stored Entry
	if err := stored.UnmarshalJSON(line); err != nil {
		return Entry{}, fmt.Errorf("encoding session entry: %w", err)
	}
	buf := make([]byte, 0, len(line)+2)
	if s.p.needNewline {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	if n, err := s.f.Write(buf); err != nil {
		err = fmt.Errorf("writing session %s: %w", s.path, err)
		if n > 0 {
			if terr := s.f.Truncate(s.size); terr != nil {
				s.err = errors.Join(err, terr)
				return Entry{}, s.err
			}
		}
		return Entry{}, err
	}
	if s.policy == SyncEveryEntry {
		if err := s.f.Sync(); err != nil {
			s.err = fmt.Errorf("syncing session %s: %w", s.path, err)
			return Entry{}, s.err
		}
	} else if s.policy != syncNone {
		s.dirty = true
	}
	s.size += int64(len(buf))
	s.p.needNewline = false
	s.p.end = s.size
	s.p.index[stored.ID] = len(s.p.entries)
	s.p.entries = append(s.p.entries, stored)
	s.leaf = stored.ID
	return stored.clone(), nil
}

// newID returns an entry id not used in the session.
func (s *Session) newID() string {
	for {
		id := randomHex(4)
		if _, used := s.p.index[id]; !used {
			return id
		}
	}
}

// Leaf returns the id of the current position, "" for an empty session.
func (s *Session) Leaf() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaf
}

// SetLeaf moves the current position to the entry id, or before the
// first entry when id is "": later appends branch from there. The move is
// not written to the file.
func (s *Session) SetLeaf(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.p.index[id]; !ok && id != "" {
		return fmt.Errorf("moving in session: entry %q: %w", id, ErrUnknownEntry)
	}
	s.leaf = id
	return nil
}

// Entries returns every entry in file order, on every branch.
func (s *Session) Entries() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, len(s.p.entries))
	for i, e := range s.p.entries {
		out[i] = e.clone()
	}
	return out
}

// Branch returns the entries from the root to the leaf.
func (s *Session) Branch() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Entry
	for _, i := range s.p.branch(s.leaf) {
		out = append(out, s.p.entries[i].clone())
	}
	return out
}

// Messages returns the context of the model at the leaf: the messages of
// the branch, with the latest compaction on it applied (see the package
// documentation).
func (s *Session) Messages() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.messagesLocked()
}

func (s *Session) messagesLocked() []llm.Message {
	branch := s.p.branch(s.leaf)
	start := 0 // of the entries whose messages count in full
	var out []llm.Message
	for c := len(branch) - 1; c >= 0; c-- {
		e := &s.p.entries[branch[c]]
		if e.Type != TypeCompaction {
			continue
		}
		if e.SystemMessage != nil {
			out = append(out, e.SystemMessage.Clone())
		}
		out = append(out, llm.UserText(SummaryPrefix+e.Summary, e.Timestamp.UnixMilli()))
		kept := c
		if e.FirstKeptID != "" {
			for k := c - 1; k >= 0; k-- {
				if s.p.entries[branch[k]].ID == e.FirstKeptID {
					kept = k
					break
				}
			}
		}
		for _, i := range branch[kept:c] {
			if m := s.p.entries[i].Message; m != nil && m.Role != llm.RoleSystem {
				out = append(out, m.Clone())
			}
		}
		start = c + 1
		break
	}
	for _, i := range branch[start:] {
		if m := s.p.entries[i].Message; m != nil {
			out = append(out, m.Clone())
		}
	}
	return out
}

// Close flushes the file to stable storage, when anything was written
// since the last flush, and closes it. Appends fail after Close; the
// entries stay readable. Close is idempotent: later calls return nil.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	f := s.f
	s.f = nil
	var err error
	if s.dirty {
		err = f.Sync()
	}
	if s.dirSync != "" && err == nil {
		err = syncDir(s.dirSync)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("closing session %s: %w", s.path, err)
	}
	return nil
}

// syncDir flushes a directory, so that a file created in it survives a
// power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// randomHex returns n random bytes as 2n hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}
