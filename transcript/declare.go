package transcript

import (
	"slices"

	"github.com/toolshelf/toolshelf/llm"
)

// Declare reconciles what the transcript says the model knows with what the
// runtime can execute, before a request. committed is the state of the
// transcript so far; pending are the messages about to be appended
// (prompts, steering, prepared updates); tools is the executable set.
// It returns the messages to append, such that replaying the transcript
// afterwards yields exactly tools:
//
//   - the last system message in pending is the anchor: its own tool fields
//     are intent, not fact, so they are left out of the baseline; earlier
//     pending system messages count as written;
//   - the difference between the baseline's tools and tools (a changed
//     declaration is a removal and an addition) becomes the anchor's tool
//     fields, replacing what it declared (so fields that change nothing are
//     dropped); with no difference and no tool fields, pending is returned
//     as is;
//   - without an anchor, a difference becomes a new system message
//     (empty content, timestamp now) placed before the first pending
//     message that is not a system message, or at the end.
//
// Declare does not modify its arguments.
func Declare(committed *State, pending []llm.Message, tools []llm.Tool, now int64) []llm.Message {
	anchor := -1
	for i := len(pending) - 1; i >= 0; i-- {
		if pending[i].Role == llm.RoleSystem {
			anchor = i
			break
		}
	}
	baseline := committed.Clone()
	for i := range pending {
		if i == anchor {
			stripped := withToolChanges(&pending[i], nil, nil)
			baseline.Apply(&stripped)
			continue
		}
		baseline.Apply(&pending[i])
	}
	added, removed := ToolStateChanges(baseline.tools, tools)
	if anchor >= 0 {
		a := &pending[anchor]
		if len(added) == 0 && len(removed) == 0 && len(a.ToolsAdded) == 0 && len(a.ToolsRemoved) == 0 {
			return pending
		}
		out := slices.Clone(pending)
		out[anchor] = withToolChanges(a, added, removed)
		return out
	}
	if len(added) == 0 && len(removed) == 0 {
		return pending
	}
	update := withToolChanges(&llm.Message{Role: llm.RoleSystem, Timestamp: now}, added, removed)
	at := slices.IndexFunc(pending, func(m llm.Message) bool { return m.Role != llm.RoleSystem })
	if at < 0 {
		at = len(pending)
	}
	return slices.Insert(slices.Clone(pending), at, update)
}

// withToolChanges returns a copy of m whose tool fields are exactly the
// given changes (empty ones left out).
func withToolChanges(m *llm.Message, added []llm.Tool, removed []llm.ToolRef) llm.Message {
	c := m.Clone()
	c.ToolsAdded, c.ToolsRemoved = nil, nil
	if len(added) > 0 {
		c.ToolsAdded = added
	}
	if len(removed) > 0 {
		c.ToolsRemoved = removed
	}
	return c
}
