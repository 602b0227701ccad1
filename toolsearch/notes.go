package toolsearch

import (
	"context"
	"strings"
)

// SetNotes sets a function whose lines every tool_search result ends
// with, after the result proper: what the model should know about the
// shelf that a search cannot say, such as a server that failed to connect
// (mcpclient's Manager.SearchNotes), so that "No matching tools found."
// is not the whole story. The tool's description stays static. notes is
// called once per search, after it, and may be nil.
func (s *Searcher) SetNotes(notes func(context.Context) []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = notes
}

// withNotes appends the notes' lines to a result text.
func (s *Searcher) withNotes(ctx context.Context, text string) string {
	s.mu.Lock()
	notes := s.notes
	s.mu.Unlock()
	if notes == nil {
		return text
	}
	lines := notes(ctx)
	if len(lines) == 0 {
		return text
	}
	return text + "\n" + strings.Join(lines, "\n")
}
