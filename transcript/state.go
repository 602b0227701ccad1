package transcript

import (
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
)

// State is the replayed meaning of a transcript's system messages: the
// current tools, sections and prompt text. Apply folds in one message at a
// time, so a caller that appends to a transcript keeps its State current
// without replaying the whole log. The zero State is an empty transcript.
// A State is not safe for concurrent use.
type State struct {
	seen      bool  // a system message has been applied
	timestamp int64 // of the first system message
	contents  []string
	sections  llm.Sections // current values, never nil texts
	tools     []llm.Tool
}

// Replay returns the state of a whole transcript.
func Replay(msgs []llm.Message) *State {
	s := &State{}
	for i := range msgs {
		s.Apply(&msgs[i])
	}
	return s
}

// Apply folds one message into the state. Only system messages change it:
// a legacy replace message clears everything first; then, in order,
// content is kept, sections are patched (nil deletes; an existing name
// keeps its position; a deleted and re-added one goes to the end), removed
// tools are dropped and added tools are set (an existing name keeps its
// position and takes the new definition).
func (s *State) Apply(m *llm.Message) {
	if m.Role != llm.RoleSystem {
		return
	}
	if !s.seen {
		s.seen = true
		s.timestamp = m.Timestamp
	}
	if m.Replace {
		s.contents, s.sections, s.tools = nil, nil, nil
	}
	if text := llm.ContentText(m.Content, "\n"); text != "" {
		s.contents = append(s.contents, text)
	}
	for _, sec := range m.Sections {
		i := slices.IndexFunc(s.sections, func(x llm.Section) bool { return x.Name == sec.Name })
		switch {
		case sec.Text == nil && i >= 0:
			s.sections = slices.Delete(s.sections, i, i+1)
		case sec.Text == nil:
		case i >= 0:
			t := *sec.Text
			s.sections[i].Text = &t
		default:
			s.sections = append(s.sections, llm.Set(sec.Name, *sec.Text))
		}
	}
	for _, r := range m.ToolsRemoved {
		s.tools = slices.DeleteFunc(s.tools, func(t llm.Tool) bool { return t.Name == r.Name })
	}
	for _, t := range m.ToolsAdded {
		if i := indexTool(s.tools, t.Name); i >= 0 {
			s.tools[i] = t.Clone()
		} else {
			s.tools = append(s.tools, t.Clone())
		}
	}
}

func indexTool(ts []llm.Tool, name string) int {
	return slices.IndexFunc(ts, func(t llm.Tool) bool { return t.Name == name })
}

// Clone returns an independent copy of the state.
func (s *State) Clone() *State {
	c := *s
	c.contents = slices.Clone(s.contents)
	c.sections = s.sections.Clone()
	c.tools = slices.Clone(s.tools)
	return &c
}

// Tools returns the current tools in order: what the model has been told
// it can call.
func (s *State) Tools() []llm.Tool { return slices.Clone(s.tools) }

// Tool returns the current declaration of the named tool.
func (s *State) Tool(name string) (llm.Tool, bool) {
	if i := indexTool(s.tools, name); i >= 0 {
		return s.tools[i], true
	}
	return llm.Tool{}, false
}

// Sections returns the current sections (no deletions) in order.
func (s *State) Sections() llm.Sections { return s.sections.Clone() }

// SystemMessage returns one system message equivalent to the whole
// transcript: the content of every system message (non-empty ones, joined
// by blank lines), the current sections and tools, and the first system
// message's timestamp. It reports false when there was no system message
// and there are no tools.
func (s *State) SystemMessage() (llm.Message, bool) {
	if !s.seen && len(s.tools) == 0 {
		return llm.Message{}, false
	}
	m := llm.Message{Role: llm.RoleSystem, Timestamp: s.timestamp}
	if text := strings.Join(s.contents, "\n\n"); text != "" {
		m.Content = []llm.Part{llm.Text(text)}
	}
	if len(s.sections) > 0 {
		m.Sections = s.sections.Clone()
	}
	if len(s.tools) > 0 {
		m.ToolsAdded = slices.Clone(s.tools)
	}
	return m, true
}

// SystemPrompt returns the text of the replayed system message.
func (s *State) SystemPrompt() string {
	m, ok := s.SystemMessage()
	if !ok {
		return ""
	}
	return SystemText(&m)
}
