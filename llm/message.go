package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Role says who wrote a message.
type Role string

// The roles.
const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "toolResult"
	RoleSystem     Role = "system"
)

// Message is one transcript entry. Which fields apply depends on the role;
// the others stay zero:
//
//   - user: Content (text and images);
//   - assistant: Content (text, thinking and tool calls), StopReason, Usage,
//     Model, ErrorMessage;
//   - toolResult: ToolCallID, ToolName, Content, IsError, Details;
//   - system: Content (text), Sections, ToolsAdded, ToolsRemoved.
//
// Every message has a Timestamp in milliseconds; a head built from a
// prompt has timestamp 0.
type Message struct {
	Role    Role
	Content []Part

	StopReason   StopReason
	Usage        *Usage
	Model        string
	ErrorMessage string

	ToolCallID string
	ToolName   string
	IsError    bool
	// Details is what the runtime and user interfaces keep about a tool
	// result; the model never sees it.
	Details json.RawMessage

	// Sections patches named prompt sections in order; a nil text
	// deletes the section.
	Sections Sections
	// ToolsAdded declares tools (full declarations, upsert semantics).
	ToolsAdded []Tool
	// ToolsRemoved withdraws tools by name.
	ToolsRemoved []ToolRef
	// Replace marks a legacy system message that replaced every earlier
	// one. Readers honour it; toolshelf never writes it.
	Replace bool

	Timestamp int64
}

// PartType says what a Part holds.
type PartType string

// The part types.
const (
	PartText     PartType = "text"
	PartThinking PartType = "thinking"
	PartImage    PartType = "image"
	PartToolCall PartType = "toolCall"
)

// Part is one piece of a message's content.
type Part struct {
	Type PartType
	// Text is the text of a text part and the reasoning of a thinking
	// part.
	Text string
	// Signature is the provider's opaque signature of a thinking part,
	// replayed unchanged.
	Signature string
	// Redacted marks a thinking part whose text the provider withheld.
	Redacted bool
	// MIMEType and Data are an image part's media type and bytes.
	MIMEType string
	Data     []byte
	// ToolCall is a tool call part's call.
	ToolCall *ToolCall
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	// ID pairs the call with its result.
	ID string
	// Name is the tool's model-facing name.
	Name string
	// Arguments is the JSON object of arguments as the model wrote it
	// (possibly invalid: model output is untrusted).
	Arguments json.RawMessage
}

// Text returns a text part.
func Text(s string) Part { return Part{Type: PartText, Text: s} }

// UserText returns a user message with one text part.
func UserText(s string, timestamp int64) Message {
	return Message{Role: RoleUser, Content: []Part{Text(s)}, Timestamp: timestamp}
}

// ToolCalls returns the tool calls of an assistant message, in order.
func (m *Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range m.Content {
		if p.Type == PartToolCall && p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// ContentText returns the text parts of content joined by sep.
func ContentText(content []Part, sep string) string {
	var texts []string
	for _, p := range content {
		if p.Type == PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, sep)
}

// Clone returns a deep copy of m.
func (m Message) Clone() Message {
	c := m
	c.Content = cloneParts(m.Content)
	if m.Usage != nil {
		u := *m.Usage
		c.Usage = &u
	}
	c.Details = bytes.Clone(m.Details)
	c.Sections = m.Sections.Clone()
	if m.ToolsAdded != nil {
		c.ToolsAdded = make([]Tool, len(m.ToolsAdded))
		for i, t := range m.ToolsAdded {
			c.ToolsAdded[i] = t.Clone()
		}
	}
	if m.ToolsRemoved != nil {
		c.ToolsRemoved = append([]ToolRef(nil), m.ToolsRemoved...)
	}
	return c
}

func cloneParts(ps []Part) []Part {
	if ps == nil {
		return nil
	}
	out := make([]Part, len(ps))
	for i, p := range ps {
		out[i] = p
		out[i].Data = bytes.Clone(p.Data)
		if p.ToolCall != nil {
			tc := *p.ToolCall
			tc.Arguments = bytes.Clone(p.ToolCall.Arguments)
			out[i].ToolCall = &tc
		}
	}
	return out
}

// Validate reports a message that cannot be part of a transcript: an
// unknown role, parts a role cannot have, tool calls without id or name,
// tool results without the call's id.
func (m *Message) Validate() error {
	allowed := map[Role][]PartType{
		RoleUser:       {PartText, PartImage},
		RoleAssistant:  {PartText, PartThinking, PartToolCall},
		RoleToolResult: {PartText, PartImage},
		RoleSystem:     {PartText},
	}
	types, ok := allowed[m.Role]
	if !ok {
		return fmt.Errorf("message role %q: use user, assistant, toolResult or system", m.Role)
	}
	for i, p := range m.Content {
		if !containsType(types, p.Type) {
			return fmt.Errorf("%s message part %d: %q parts are not allowed", m.Role, i, p.Type)
		}
		if p.Type == PartToolCall && (p.ToolCall == nil || p.ToolCall.ID == "" || p.ToolCall.Name == "") {
			return fmt.Errorf("%s message part %d: a tool call needs an id and a name", m.Role, i)
		}
	}
	if m.Role == RoleToolResult && m.ToolCallID == "" {
		return errors.New("toolResult message without toolCallId")
	}
	for _, t := range m.ToolsAdded {
		if t.Name == "" {
			return errors.New("system message adds a tool without a name")
		}
	}
	return nil
}

func containsType(ts []PartType, t PartType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// partJSON is a Part on the wire.
type partJSON struct {
	Type      PartType        `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Redacted  bool            `json:"redacted,omitempty"`
	MIMEType  string          `json:"mimeType,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// RawArguments holds arguments that are not valid JSON (model
	// output is untrusted), as a string, in place of Arguments.
	RawArguments *string `json:"rawArguments,omitempty"`
}

// MarshalJSON writes a part as {"type": ..., ...} with the fields of its
// type: text; thinking, signature, redacted; mimeType, data (base64); id,
// name, arguments.
func (p Part) MarshalJSON() ([]byte, error) {
	j := partJSON{Type: p.Type}
	switch p.Type {
	case PartText:
		j.Text = &p.Text
	case PartThinking:
		j.Thinking = &p.Text
		j.Signature, j.Redacted = p.Signature, p.Redacted
	case PartImage:
		j.MIMEType, j.Data = p.MIMEType, base64.StdEncoding.EncodeToString(p.Data)
	case PartToolCall:
		if p.ToolCall == nil {
			return nil, errors.New("toolCall part without a call")
		}
		j.ID, j.Name = p.ToolCall.ID, p.ToolCall.Name
		j.Arguments = p.ToolCall.Arguments
		if len(bytes.TrimSpace(j.Arguments)) == 0 {
			j.Arguments = json.RawMessage("{}")
		} else if !json.Valid(j.Arguments) {
			// Model output may be malformed; keep it as it was.
			raw := string(p.ToolCall.Arguments)
			j.Arguments, j.RawArguments = nil, &raw
		}
	default:
		return nil, fmt.Errorf("unknown part type %q", p.Type)
	}
	return marshal(j)
}

// UnmarshalJSON reads a part written by MarshalJSON.
func (p *Part) UnmarshalJSON(b []byte) error {
	var j partJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = Part{Type: j.Type}
	switch j.Type {
	case PartText:
		if j.Text != nil {
			p.Text = *j.Text
		}
	case PartThinking:
		if j.Thinking != nil {
			p.Text = *j.Thinking
		}
		p.Signature, p.Redacted = j.Signature, j.Redacted
	case PartImage:
		data, err := base64.StdEncoding.DecodeString(j.Data)
		if err != nil {
			return fmt.Errorf("image part: data is not base64: %w", err)
		}
		p.MIMEType, p.Data = j.MIMEType, data
	case PartToolCall:
		args := j.Arguments
		if j.RawArguments != nil {
			args = json.RawMessage(*j.RawArguments)
		}
		p.ToolCall = &ToolCall{ID: j.ID, Name: j.Name, Arguments: args}
	default:
		return fmt.Errorf("unknown part type %q", j.Type)
	}
	return nil
}
