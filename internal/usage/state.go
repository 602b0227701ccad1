package usage

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolshelf/toolshelf/internal/userdir"
	"github.com/toolshelf/toolshelf/tool"
)

// FileName is the state file's name in the user's state folder.
const FileName = "shelf.json"

// The bounds of a state file: servers files, tools per servers file and
// bytes. Applying past MaxFiles forgets the servers file applied longest
// ago; a file past maxBytes is refused.
const (
	MaxFiles = 32
	MaxTools = 64
	maxBytes = 256 << 10
)

// State is what a person applied (toolshelf shelf suggest --apply): per
// servers file, by its absolute path ("" for none), the tools new
// sessions declare from their first request.
type State struct {
	Files map[string]Applied `json:"files"`
}

// Applied is what was applied to one servers file.
type Applied struct {
	// AlwaysLoad names the tools to declare from a new session's first
	// request, by model-facing name.
	AlwaysLoad []string `json:"alwaysLoad"`
	// Time is when it was applied.
	Time time.Time `json:"time"`
}

// AlwaysLoad returns the tools applied to the servers file servers, nil
// when none were.
func (s State) AlwaysLoad(servers string) []string {
	return slices.Clone(s.Files[servers].AlwaysLoad)
}

// Apply records names as the always-load tools of servers at now, sorted
// and without repeats. It refuses a name that is not a tool name and more
// than MaxTools names; past MaxFiles servers files, the one applied
// longest ago is forgotten.
func (s *State) Apply(servers string, names []string, now time.Time) error {
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	if len(names) > MaxTools {
		return fmt.Errorf("%d tools to always load: at most %d are kept; apply fewer", len(names), MaxTools)
	}
	for _, n := range names {
		if !tool.ValidName(n) {
			return fmt.Errorf("%q is not a tool name", n)
		}
	}
	if s.Files == nil {
		s.Files = map[string]Applied{}
	}
	s.Files[servers] = Applied{AlwaysLoad: names, Time: now.UTC()}
	for len(s.Files) > MaxFiles {
		oldest := ""
		first := true
		for f, a := range s.Files {
			if first || a.Time.Before(s.Files[oldest].Time) || a.Time.Equal(s.Files[oldest].Time) && f < oldest {
				oldest, first = f, false
			}
		}
		delete(s.Files, oldest)
	}
	return nil
}

// check reports a state no writer produces.
func (s State) check() error {
	if len(s.Files) > MaxFiles {
		return fmt.Errorf("%d servers files, more than %d", len(s.Files), MaxFiles)
	}
	for f, a := range s.Files {
		if len(a.AlwaysLoad) > MaxTools {
			return fmt.Errorf("%d tools for %s, more than %d", len(a.AlwaysLoad), f, MaxTools)
		}
		for _, n := range a.AlwaysLoad {
			if !tool.ValidName(n) {
				return fmt.Errorf("%q is not a tool name", n)
			}
		}
	}
	return nil
}

// Load reads the state file of the folder dir (the user's state folder);
// a missing folder or file is an empty state. A file that is a link,
// another user's, open to others, too large or damaged is refused with an
// error that says what to do.
func Load(dir string) (State, error) {
	path := filepath.Join(dir, FileName)
	damaged := func(why string) (State, error) {
		return State{}, fmt.Errorf("the applied suggestions %s are damaged (%s): run toolshelf shelf suggest --reset", path, why)
	}
	data, found, err := userdir.ReadFile(dir, FileName, maxBytes)
	switch {
	case errors.Is(err, userdir.ErrTooLarge):
		return damaged(fmt.Sprintf("larger than %d bytes", maxBytes))
	case err != nil:
		return State{}, fmt.Errorf("reading the applied suggestions: %w", err)
	case !found:
		return State{}, nil
	}
	var s State
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return damaged(err.Error())
	}
	if err := s.check(); err != nil {
		return damaged(err.Error())
	}
	return s, nil
}

// Save writes the state to the folder dir, creating it private (0700),
// through a temporary file renamed into place, with mode 0600.
func (s State) Save(dir string) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("saving the applied suggestions: %w", err)
	}
	if s.Files == nil {
		s.Files = map[string]Applied{}
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := userdir.WriteFile(dir, FileName, append(data, '\n')); err != nil {
		return fmt.Errorf("saving the applied suggestions: %w", err)
	}
	return nil
}

// Reset removes the state file of the folder dir; it reports whether
// there was one.
func Reset(dir string) (bool, error) {
	removed, err := userdir.RemoveFile(dir, FileName)
	if err != nil {
		return false, fmt.Errorf("clearing the applied suggestions: %w", err)
	}
	return removed, nil
}
