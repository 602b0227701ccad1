package toolsearch_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/toolsearch"
)

func TestNotesFollowTheResult(t *testing.T) {
	reg, s := newShelf(t, search.ModeToolshelf)
	const note = `MCP server "slow" failed to connect (no answer to initialize within 5s); its tools cannot be searched or called.`
	var calls int
	s.SetNotes(func(ctx context.Context) []string {
		if ctx == nil {
			t.Error("notes got no context")
		}
		calls++
		return []string{note}
	})
	if got, want := text(call(t, reg, `{"query":"zebra giraffe"}`)), toolsearch.NoMatches; !strings.HasPrefix(got, want) ||
		!strings.HasSuffix(got, "\n"+note) {
		t.Errorf("an empty result with a note = %q, want %q first and the note last", got, want)
	}
	got := text(call(t, reg, `{"query":"select:mcp__tracker__create_issue"}`))
	if want := "Loaded 1 tool. They are available from your next call:\n- mcp__tracker__create_issue: Create an issue.\n" + note; got != want {
		t.Errorf("a result with a note = %q, want %q", got, want)
	}
	if calls != 2 {
		t.Errorf("notes called %d times for 2 searches", calls)
	}
	if d := s.Tool().Description; d != toolsearch.Description {
		t.Errorf("the description changed with notes: %q", d)
	}

	s.SetNotes(func(context.Context) []string { return nil })
	if got := text(call(t, reg, `{"query":"zebra giraffe"}`)); strings.HasSuffix(got, "\n") {
		t.Errorf("no notes left a trailing line break: %q", got)
	}
	s.SetNotes(nil)
	if got := text(call(t, reg, `{"query":"select:mcp__tracker__list_issues"}`)); got !=
		"Loaded 1 tool. They are available from your next call:\n- mcp__tracker__list_issues: List issues." {
		t.Errorf("without notes = %q", got)
	}
}
