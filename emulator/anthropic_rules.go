package emulator

import (
	"fmt"
	"slices"
	"strings"
)

// anthEntry is a turn of the conversation as the API sees it:
// consecutive messages of one role merged (user or assistant messages
// into one turn, system messages into one section).
type anthEntry struct {
	role string
	msgs []*anthMsg
}

func (e *anthEntry) first() int { return e.msgs[0].idx }
func (e *anthEntry) last() int  { return e.msgs[len(e.msgs)-1].idx }

// toolUses returns an assistant turn's tool_use blocks with their
// message indexes.
func (e *anthEntry) toolUses() (ids []string, where map[string]int) {
	where = map[string]int{}
	for _, m := range e.msgs {
		for _, b := range m.blocks {
			if b.typ == "tool_use" {
				ids = append(ids, b.id)
				where[b.id] = m.idx
			}
		}
	}
	return ids, where
}

// anthEntries merges consecutive messages of one role. Effort-only
// system messages render nothing and are left out.
func anthEntries(msgs []*anthMsg) []*anthEntry {
	var out []*anthEntry
	for _, m := range msgs {
		if m.effortOnly {
			continue
		}
		if n := len(out); n > 0 && out[n-1].role == m.role {
			out[n-1].msgs = append(out[n-1].msgs, m)
			continue
		}
		out = append(out, &anthEntry{role: m.role, msgs: []*anthMsg{m}})
	}
	return out
}

// anthPlacement checks where system sections sit: never first, right
// after a user turn (or an assistant turn ending in a server tool
// result), never between a tool_use and its tool_result, and last or
// right before an assistant turn.
func anthPlacement(entries []*anthEntry) *Error {
	for p, e := range entries {
		if e.role != "system" {
			continue
		}
		if p == 0 {
			return anthInvalid("messages.%d: a system message cannot be the first message. Put initial instructions in the top-level `system` parameter.", e.first())
		}
		if prev := entries[p-1]; prev.role == "assistant" {
			if ids, _ := prev.toolUses(); len(ids) > 0 {
				return anthInvalid("messages.%d: a system message cannot be placed between a `tool_use` block and its `tool_result` block (%s). Send it after the user message holding the tool results.",
					e.first(), strings.Join(ids, ", "))
			}
			if !prev.endsWithServerResult() {
				return anthInvalid("messages.%d: a system message must immediately follow a user message (or an assistant message ending in a server tool result).", e.first())
			}
		}
		if p+1 < len(entries) && entries[p+1].role != "assistant" {
			return anthInvalid("messages.%d: a system message must be the last message or be immediately followed by an assistant message.", e.last())
		}
	}
	return nil
}

// endsWithServerResult reports an assistant turn whose last block is a
// server tool's result.
func (e *anthEntry) endsWithServerResult() bool {
	m := e.msgs[len(e.msgs)-1]
	if len(m.blocks) == 0 {
		return false
	}
	t := m.blocks[len(m.blocks)-1].typ
	return t != "tool_result" && strings.HasSuffix(t, "_tool_result")
}

// anthPairing checks tool_use and tool_result blocks: every tool_use is
// answered in the next turn, every tool_result answers a tool_use of the
// previous turn, and tool_result blocks come first in their turn.
func anthPairing(entries []*anthEntry) *Error {
	for p, e := range entries {
		switch e.role {
		case "assistant":
			ids, where := e.toolUses()
			if len(ids) == 0 {
				continue
			}
			answered := map[string]bool{}
			if p+1 < len(entries) && entries[p+1].role == "user" {
				for _, m := range entries[p+1].msgs {
					for _, b := range m.blocks {
						if b.typ == "tool_result" {
							answered[b.id] = true
						}
					}
				}
			}
			var missing []string
			for _, id := range ids {
				if !answered[id] {
					missing = append(missing, id)
				}
			}
			if len(missing) > 0 {
				return anthInvalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
					where[missing[0]], strings.Join(missing, ", "))
			}
		case "user":
			var uses []string
			if p > 0 && entries[p-1].role == "assistant" {
				uses, _ = entries[p-1].toolUses()
			}
			other := ""
			for _, m := range e.msgs {
				for _, b := range m.blocks {
					if b.typ != "tool_result" {
						if other == "" {
							other = fmt.Sprintf("messages.%d.content.%d", m.idx, b.k)
						}
						continue
					}
					if other != "" {
						return anthInvalid("messages.%d.content.%d: tool_result blocks must come first in the user message, before any other content (found %s before it).",
							m.idx, b.k, other)
					}
					if !slices.Contains(uses, b.id) {
						return anthInvalid("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
							m.idx, b.k, b.id)
					}
				}
			}
		}
	}
	return nil
}

// anthTurns returns the conversation in neutral form: a user turn's tool
// results (one "tool" turn each) then its other content, an assistant
// turn with its calls, each system message that still renders.
func anthTurns(entries []*anthEntry) []Turn {
	var turns []Turn
	for _, e := range entries {
		switch e.role {
		case "user":
			var texts []string
			other := false
			for _, m := range e.msgs {
				for _, b := range m.blocks {
					switch b.typ {
					case "tool_result":
						turns = append(turns, Turn{Role: "tool", CallID: b.id, Text: b.text, IsError: b.isError})
					case "text":
						texts, other = append(texts, b.text), true
					default:
						other = true
					}
				}
			}
			if other {
				turns = append(turns, Turn{Role: "user", Text: strings.Join(texts, "\n")})
			}
		case "assistant":
			t := Turn{Role: "assistant"}
			var texts []string
			for _, m := range e.msgs {
				for _, b := range m.blocks {
					switch b.typ {
					case "text":
						texts = append(texts, b.text)
					case "tool_use":
						t.Calls = append(t.Calls, Call{ID: b.id, Name: b.name, Arguments: b.input})
					}
				}
			}
			t.Text = strings.Join(texts, "\n")
			turns = append(turns, t)
		case "system":
			for _, m := range e.msgs {
				if m.hidden {
					continue
				}
				var texts []string
				for _, b := range m.blocks {
					if b.typ == "text" {
						texts = append(texts, b.text)
					}
				}
				turns = append(turns, Turn{Role: "system", Text: strings.Join(texts, "\n")})
			}
		}
	}
	return turns
}
