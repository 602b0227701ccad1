package toolshelf

import (
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// TestUnloadPoints checks the cost model's decisions: changes and bridge
// unload at once; additions, none and text after a compaction or once the
// cache lifetime has lapsed, and otherwise only when carrying the tokens
// over the budget has cost, at the read price, what the rewrite costs over
// reading (with a load, none and text count only the tools the removal
// adds to the rewrite).
func TestUnloadPoints(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	warm := t0.Add(time.Minute)
	newU := func(class llm.ToolSupport, carry float64) *unloader {
		u, err := newUnloader(&UnloadConfig{Budget: 1000, Class: class}, "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		u.last, u.prompt, u.carry = t0, 10_000, carry
		return u
	}
	// Rewriting 10,000 - 2,000 prompt tokens costs 8,000 × (1.25 - 0.1)
	// = 9,200; with a load, none rewrites 5,000 - 2,000 extra: 3,450.
	for _, c := range []struct {
		name    string
		class   llm.ToolSupport
		now     time.Time
		loading bool
		carry   float64
		compact bool
		want    UnloadReason
		rewrite int
	}{
		{"changes", llm.ToolsChanges, warm, false, 0, false, UnloadFree, 0},
		{"bridge", llm.ToolsBridge, warm, true, 0, false, UnloadFree, 0},
		{"additions warm", llm.ToolsAdditions, warm, false, 9_199, false, "", 0},
		{"additions paid", llm.ToolsAdditions, warm, false, 9_200, false, UnloadCarry, 8_000},
		{"additions with a load", llm.ToolsAdditions, warm, true, 3_450, false, "", 0},
		{"additions expired", llm.ToolsAdditions, t0.Add(DefaultCacheTTL), false, 0, false, UnloadExpired, 0},
		{"additions compacted", llm.ToolsAdditions, warm, false, 0, true, UnloadCompacted, 0},
		{"none warm", llm.ToolsNone, warm, false, 3_450, false, "", 0},
		{"none with a load", llm.ToolsNone, warm, true, 3_449, false, "", 0},
		{"none with a load, paid", llm.ToolsNone, warm, true, 3_450, false, UnloadWithLoad, 3_000},
		{"none expired", llm.ToolsNone, t0.Add(DefaultCacheTTL + time.Second), false, 0, false, UnloadExpired, 0},
		{"text with a load, paid", llm.ToolsText, warm, true, 3_450, false, UnloadWithLoad, 3_000},
	} {
		u := newU(c.class, c.carry)
		u.compacted = c.compact
		reason, rewrite, ok := u.point(c.now, c.loading, 2_000, 5_000)
		if reason != c.want || rewrite != c.rewrite || ok != (c.want != "") {
			t.Errorf("%s: got %q, %d, %v; want %q, %d", c.name, reason, rewrite, ok, c.want, c.rewrite)
		}
	}
	// A caller's own model without a class is taken as none.
	if u, _ := newUnloader(&UnloadConfig{Budget: 1}, "", nil, nil); u.class != llm.ToolsNone {
		t.Errorf("the class of an unknown model is %q, want none", u.class)
	}
	if u, _ := newUnloader(&UnloadConfig{}, "changes", nil, nil); u != nil {
		t.Error("a zero budget turns unloading on")
	}
}

// TestContinuesCompaction checks that a session whose branch ends in a
// compaction, with no answer since, is a cheap point to unload at, and
// that an answer after it ends that.
func TestContinuesCompaction(t *testing.T) {
	s, err := session.Create(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if continuesCompaction(nil) || continuesCompaction(s) {
		t.Error("a session without a compaction continues one")
	}
	for _, m := range []llm.Message{llm.UserText("hi", 1), {Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("hello")}, Timestamp: 2}} {
		if _, err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AppendCompaction("They said hello.", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(llm.UserText("again", 3)); err != nil {
		t.Fatal(err)
	}
	if !continuesCompaction(s) {
		t.Error("a session that ends in a compaction and a prompt does not continue it")
	}
	if _, err := s.Append(llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("hi again")}, Timestamp: 4}); err != nil {
		t.Fatal(err)
	}
	if continuesCompaction(s) {
		t.Error("an answer after the compaction still counts as continuing it")
	}
}
