package transcript

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
)

// NewHead returns the leading system message of a new transcript: the
// prompt, its sections and the initial tools, with timestamp 0. It reports
// false when there is nothing to say (no prompt, sections or tools), so an
// empty transcript stays empty.
func NewHead(prompt string, sections llm.Sections, tools []llm.Tool) (llm.Message, bool) {
	if prompt == "" && len(sections) == 0 && len(tools) == 0 {
		return llm.Message{}, false
	}
	m := llm.Message{Role: llm.RoleSystem}
	if prompt != "" {
		m.Content = []llm.Part{llm.Text(prompt)}
	}
	if len(sections) > 0 {
		m.Sections = sections.Clone()
	}
	for _, t := range tools {
		m.ToolsAdded = append(m.ToolsAdded, t.Clone())
	}
	return m, true
}

// Leading returns the transcript's first message when it is a system
// message: the head.
func Leading(msgs []llm.Message) (llm.Message, bool) {
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		return msgs[0], true
	}
	return llm.Message{}, false
}

// WithoutLeading returns the transcript without its head.
func WithoutLeading(msgs []llm.Message) []llm.Message {
	if _, ok := Leading(msgs); ok {
		return msgs[1:]
	}
	return msgs
}

// CurrentTools replays the transcript's tools.
func CurrentTools(msgs []llm.Message) []llm.Tool { return Replay(msgs).Tools() }

// CurrentSystemMessage replays the transcript's system messages into one.
func CurrentSystemMessage(msgs []llm.Message) (llm.Message, bool) {
	return Replay(msgs).SystemMessage()
}

// SystemText returns the prompt text of a system message: its content and
// every section's text, non-empty parts joined by blank lines.
func SystemText(m *llm.Message) string {
	parts := []string{llm.ContentText(m.Content, "\n")}
	for _, sec := range m.Sections {
		if sec.Text != nil {
			parts = append(parts, *sec.Text)
		}
	}
	return joinNonEmpty(parts)
}

// RenderUpdate returns how a later system message reads to a model that
// accepts system text mid-conversation: its content, then a line per
// section patch ("Updated system prompt section "x":" and the text, or
// "Removed system prompt section "x"."), joined by blank lines. Tool
// changes are not rendered here; adapters express them their own way.
func RenderUpdate(m *llm.Message) string {
	parts := []string{llm.ContentText(m.Content, "\n")}
	for _, sec := range m.Sections {
		if sec.Text == nil {
			parts = append(parts, fmt.Sprintf("Removed system prompt section %q.", sec.Name))
		} else {
			parts = append(parts, fmt.Sprintf("Updated system prompt section %q:\n\n%s", sec.Name, *sec.Text))
		}
	}
	return joinNonEmpty(parts)
}

func joinNonEmpty(parts []string) string {
	kept := parts[:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n\n")
}

// ToolStateChanges returns what turns the tool set previous into current:
// the tools of current (in its order) that are new or whose declaration
// differs, and the tools of previous (in its order) that are gone or whose
// declaration differs. A changed declaration is therefore both removed and
// added.
func ToolStateChanges(previous, current []llm.Tool) (added []llm.Tool, removed []llm.ToolRef) {
	prev := make(map[string]llm.Tool, len(previous))
	for _, t := range previous {
		prev[t.Name] = t
	}
	cur := make(map[string]llm.Tool, len(current))
	for _, t := range current {
		cur[t.Name] = t
	}
	for _, t := range current {
		if p, ok := prev[t.Name]; !ok || !p.Equal(t) {
			added = append(added, t.Clone())
		}
	}
	for _, t := range previous {
		if c, ok := cur[t.Name]; !ok || !c.Equal(t) {
			removed = append(removed, llm.ToolRef{Name: t.Name})
		}
	}
	return added, removed
}

// DiffSections returns the patch that turns the sections previous into
// desired: changed and new sections in desired's order, then deletions of
// the names desired lacks. It returns nil when nothing changes.
func DiffSections(previous, desired llm.Sections) llm.Sections {
	var patch llm.Sections
	for _, d := range desired {
		if d.Text == nil {
			continue
		}
		if p, ok := previous.Get(d.Name); !ok || p != *d.Text {
			patch = append(patch, llm.Set(d.Name, *d.Text))
		}
	}
	for _, p := range previous {
		if _, ok := desired.Get(p.Name); !ok && p.Text != nil {
			patch = append(patch, llm.Delete(p.Name))
		}
	}
	return patch
}

// Collapse folds every system message into one leading message (the
// replay of them all) followed by the other messages in order: the
// transcript as a provider without mid-conversation updates must see it.
func Collapse(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	if head, ok := CurrentSystemMessage(msgs); ok {
		out = append(out, head)
	}
	for _, m := range msgs {
		if m.Role != llm.RoleSystem {
			out = append(out, m)
		}
	}
	return out
}

// EverAdded returns every tool a transcript ever added, at its first
// position with its last definition, removals ignored (the reference's
// getDeclaredTools). The tools declared now are [CurrentTools].
func EverAdded(msgs []llm.Message) []llm.Tool {
	var out []llm.Tool
	for i := range msgs {
		if msgs[i].Role != llm.RoleSystem {
			continue
		}
		for _, t := range msgs[i].ToolsAdded {
			if j := indexTool(out, t.Name); j >= 0 {
				out[j] = t.Clone()
			} else {
				out = append(out, t.Clone())
			}
		}
	}
	return out
}

// LateReplace reports whether a legacy replace system message follows the
// head; such a transcript can only be sent collapsed.
func LateReplace(msgs []llm.Message) bool {
	return slices.ContainsFunc(msgs[min(1, len(msgs)):], func(m llm.Message) bool {
		return m.Role == llm.RoleSystem && m.Replace
	})
}

// LastNonAdditive returns the index of the last system message that
// removes an available tool or redeclares one with a different
// definition, and the tools available right after it, in order; -1 and
// nil when the transcript has only ever added tools. An identical
// redeclaration stays additive (the reference's TR-3 variant).
func LastNonAdditive(msgs []llm.Message) (index int, available []llm.Tool) {
	index = -1
	var s State
	for i := range msgs {
		m := &msgs[i]
		if m.Role != llm.RoleSystem {
			continue
		}
		nonAdditive := slices.ContainsFunc(m.ToolsRemoved, func(r llm.ToolRef) bool {
			_, ok := s.Tool(r.Name)
			return ok
		})
		for _, t := range m.ToolsAdded {
			if old, ok := s.Tool(t.Name); ok && !old.Equal(t) {
				nonAdditive = true
			}
		}
		s.Apply(m)
		if nonAdditive {
			index, available = i, s.Tools()
		}
	}
	return index, available
}
