package lexicon

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolshelf/toolshelf/internal/userdir"
	"github.com/toolshelf/toolshelf/search"
)

// The bounds on what is kept.
const (
	// MaxEntries is the most aliases kept: the lightest go first.
	MaxEntries = 1000
	// MaxQueryBytes is the longest query learned or added; a longer one is
	// a request in the user's words, which no later search repeats.
	MaxQueryBytes = 200
	// MaxToolBytes is the longest tool name kept: model-facing names have
	// at most 64 characters.
	MaxToolBytes = 64
	// HalfLife is how fast an alias fades when unused: its weight, its
	// uses, halves every 30 days since it was last learned or used.
	HalfLife = 30 * 24 * time.Hour
	// Forget is the weight below which an alias is dropped: one learned
	// once and never used again is gone after two half-lives (60 days).
	// An alias added by hand (lexicon add) never fades.
	Forget = 0.25
	// maxFile bounds the file as it is read.
	maxFile = 4 << 20
)

// FileName is the lexicon's file in its folder of [DefaultPath].
const FileName = "aliases.json"

// DefaultPath returns the user's lexicon: $XDG_STATE_HOME/toolshelf/
// lexicon/aliases.json (or under ~/.local/state).
func DefaultPath() (string, error) {
	state, err := userdir.State()
	if err != nil {
		return "", fmt.Errorf("the lexicon of learned aliases: %w", err)
	}
	return filepath.Join(state, "lexicon", FileName), nil
}

// Entry is one learned alias: a query and the tool it meant.
type Entry struct {
	// Query is the query as it was first written.
	Query string `json:"query"`
	// Tool is the model-facing name of the tool the query meant.
	Tool string `json:"tool"`
	// Uses counts the sessions that learned or used the alias.
	Uses int `json:"uses"`
	// Last is when it was last learned or used.
	Last time.Time `json:"last"`
	// Pinned marks an alias added by hand: it never fades.
	Pinned bool `json:"pinned,omitempty"`
}

// Weight returns the entry's weight at now: its uses, halved for every
// [HalfLife] since it was last used; a pinned entry keeps its uses.
func (e Entry) Weight(now time.Time) float64 {
	if e.Pinned {
		return float64(max(e.Uses, 1))
	}
	age := now.Sub(e.Last)
	if age < 0 {
		age = 0
	}
	return float64(e.Uses) * math.Exp2(-float64(age)/float64(HalfLife))
}

// file is the lexicon's file format.
type file struct {
	Version int     `json:"version"`
	Entries []Entry `json:"entries"`
}

// version is the file format's version.
const version = 1

// Lexicon is a user's learned aliases, as read from its file at one time.
// It is safe for concurrent use.
type Lexicon struct {
	path string
	now  time.Time

	mu      sync.RWMutex // guards entries, keys and tools
	entries []Entry
	// keys holds each entry's search.QueryKey, in the same order.
	keys []string
	// tools holds the entries' tools.
	tools map[string]bool
}

// Open reads the lexicon at path; a missing file (or folder) is an empty
// lexicon, and nothing is created. The folder must be the user's alone
// and the file a regular file of the user's with no access for others
// (see [userdir.OpenPrivate]), or Open fails saying what to do. now is
// the time its entries are weighed at.
func Open(path string, now time.Time) (*Lexicon, error) {
	l := &Lexicon{path: path, now: now}
	data, err := read(path)
	if err != nil || data == nil {
		return l, err
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil || f.Version != version {
		return nil, fmt.Errorf("the lexicon %s is damaged or of another version: run toolshelf lexicon --reset to start it again", path)
	}
	for _, e := range f.Entries {
		if valid(e) {
			l.entries = append(l.entries, e)
		}
	}
	l.prune()
	return l, nil
}

// read returns the file's bytes, nil when there is no file.
func read(path string) ([]byte, error) {
	dir, name := filepath.Split(path)
	data, _, err := userdir.ReadFile(dir, name, maxFile)
	if errors.Is(err, userdir.ErrTooLarge) {
		return nil, fmt.Errorf("the lexicon %s is over %d bytes: run toolshelf lexicon --reset to start it again", path, maxFile)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lexicon: %w", err)
	}
	return data, nil
}

// valid reports whether an entry read from the file is one Learn or Add
// could have written.
func valid(e Entry) bool {
	return e.Uses > 0 && !e.Last.IsZero() && e.Tool != "" && len(e.Tool) <= MaxToolBytes &&
		utf8.ValidString(e.Query) && utf8.ValidString(e.Tool) && checkQuery(e.Query) == nil
}

// checkQuery refuses a query that cannot be an alias.
func checkQuery(q string) error {
	switch {
	case len(q) > MaxQueryBytes:
		return fmt.Errorf("the query is %d bytes long; an alias is at most %d", len(q), MaxQueryBytes)
	case search.QueryKey(q) == "":
		return fmt.Errorf("the query %q has no word a search ranks by (it is empty, a select:, only stop words, or too long): use a few words that say what the tool does", q)
	}
	return nil
}

// Path returns the lexicon's file.
func (l *Lexicon) Path() string { return l.path }

// Entries returns the aliases, heaviest first (then by query and tool).
func (l *Lexicon) Entries() []Entry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return slices.Clone(l.entries)
}

// Len returns the number of aliases.
func (l *Lexicon) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.entries)
}

// Lookup returns the tools learned for query, heaviest first: those of
// the aliases whose query has the same [search.QueryKey]. It is what
// toolsearch.Searcher reads.
func (l *Lexicon) Lookup(query string) []string {
	if len(query) > 4*MaxQueryBytes { // before the analysis, on every search
		return nil
	}
	key := search.QueryKey(query)
	if key == "" {
		return nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	var tools []string
	for i, e := range l.entries { // heaviest first
		if l.keys[i] == key && !slices.Contains(tools, e.Tool) {
			tools = append(tools, e.Tool)
		}
	}
	return tools
}

// Called reports whether an alias names tool: a session called it after
// a search. It is what toolsearch.Searcher reads to order near ties.
func (l *Lexicon) Called(tool string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.tools[tool]
}

// Pair is one thing a session learned: a query and the tool it meant.
type Pair struct {
	Query, Tool string
}

// Learn records pairs at time now: a pair of a known alias (same query
// key and tool) adds a use and renews it; a new one is added with one
// use. Pairs that cannot be aliases (too long, no key, no tool) are
// skipped. It reports how many were recorded.
func (l *Lexicon) Learn(pairs []Pair, now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, p := range pairs {
		if p.Tool == "" || len(p.Tool) > MaxToolBytes || checkQuery(p.Query) != nil {
			continue
		}
		n++
		l.touch(p.Query, p.Tool, now, false)
	}
	l.now = now
	l.prune()
	return n
}

// touch adds a use to the alias of query and tool, or adds it. Call it
// with l.mu held.
func (l *Lexicon) touch(query, tool string, now time.Time, pin bool) {
	key := search.QueryKey(query)
	for i := range l.entries {
		e := &l.entries[i]
		if e.Tool == tool && l.keys[i] == key {
			e.Uses++
			e.Last = now
			e.Pinned = e.Pinned || pin
			return
		}
	}
	l.entries = append(l.entries, Entry{Query: strings.TrimSpace(query), Tool: tool, Uses: 1, Last: now, Pinned: pin})
	l.keys = append(l.keys, key)
}

// Add adds an alias by hand, pinned so that it never fades; adding a
// known one pins it and adds a use.
func (l *Lexicon) Add(query, tool string, now time.Time) error {
	if err := checkQuery(query); err != nil {
		return err
	}
	if tool == "" || len(tool) > MaxToolBytes {
		return fmt.Errorf("the tool name %q is empty or over %d bytes: name a tool as toolshelf search shows it", tool, MaxToolBytes)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.touch(query, tool, now, true)
	l.now = now
	l.prune()
	return nil
}

// Remove drops every alias of query (any query with the same
// [search.QueryKey]) and returns how many there were.
func (l *Lexicon) Remove(query string) int {
	key := search.QueryKey(query)
	if key == "" {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.entries)
	l.entries = slices.DeleteFunc(l.entries, func(e Entry) bool { return search.QueryKey(e.Query) == key })
	l.rekey()
	return n - len(l.entries)
}

// prune drops the faded aliases, keeps the MaxEntries heaviest and sorts
// them, heaviest first. Call it with l.mu held.
func (l *Lexicon) prune() {
	now := l.now
	l.entries = slices.DeleteFunc(l.entries, func(e Entry) bool { return e.Weight(now) < Forget })
	slices.SortStableFunc(l.entries, func(a, b Entry) int {
		if c := cmp.Compare(b.Weight(now), a.Weight(now)); c != 0 {
			return c
		}
		if c := b.Last.Compare(a.Last); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Query, b.Query), strings.Compare(a.Tool, b.Tool))
	})
	if len(l.entries) > MaxEntries {
		l.entries = slices.Clip(l.entries[:MaxEntries])
	}
	l.rekey()
}

// rekey computes the entries' keys and tools. Call it with l.mu held.
func (l *Lexicon) rekey() {
	l.keys = l.keys[:0]
	l.tools = make(map[string]bool, len(l.entries))
	for _, e := range l.entries {
		l.keys = append(l.keys, search.QueryKey(e.Query))
		l.tools[e.Tool] = true
	}
}

// Save writes the lexicon to its file, replacing it atomically, with mode
// 0600, creating its folder (mode 0700) if needed.
func (l *Lexicon) Save() error {
	l.mu.RLock()
	data, err := json.MarshalIndent(file{Version: version, Entries: append([]Entry{}, l.entries...)}, "", "  ")
	l.mu.RUnlock()
	if err != nil {
		return err
	}
	dir, name := filepath.Split(l.path)
	if err := userdir.WriteFile(dir, name, append(data, '\n')); err != nil {
		return fmt.Errorf("saving the lexicon %s: %w", l.path, err)
	}
	return nil
}

// Update reads the lexicon at path afresh, applies fn to it and saves
// it, so that sessions ending one after the other all add what they
// learned. It returns the lexicon as saved.
func Update(path string, now time.Time, fn func(*Lexicon) error) (*Lexicon, error) {
	l, err := Open(path, now)
	if err != nil {
		return nil, err
	}
	if err := fn(l); err != nil {
		return nil, err
	}
	if err := l.Save(); err != nil {
		return nil, err
	}
	return l, nil
}

// Reset removes the lexicon's file; a missing one is no error. It
// reports whether there was one.
func Reset(path string) (bool, error) {
	dir, name := filepath.Split(path)
	removed, err := userdir.RemoveFile(dir, name)
	if err != nil {
		return false, fmt.Errorf("resetting the lexicon: %w", err)
	}
	return removed, nil
}
