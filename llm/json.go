package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// messageJSON is a Message on the wire, fields in the order written.
type messageJSON struct {
	Role         Role            `json:"role"`
	Content      json.RawMessage `json:"content,omitempty"`
	ToolCallID   string          `json:"toolCallId,omitempty"`
	ToolName     string          `json:"toolName,omitempty"`
	IsError      bool            `json:"isError,omitempty"`
	Details      json.RawMessage `json:"details,omitempty"`
	StopReason   StopReason      `json:"stopReason,omitempty"`
	Usage        *Usage          `json:"usage,omitempty"`
	Model        string          `json:"model,omitempty"`
	ErrorMessage string          `json:"errorMessage,omitempty"`
	Sections     *Sections       `json:"sections,omitempty"`
	ToolsAdded   []Tool          `json:"toolsAdded,omitempty"`
	ToolsRemoved []ToolRef       `json:"toolsRemoved,omitempty"`
	Replace      bool            `json:"replace,omitempty"`
	Timestamp    int64           `json:"timestamp"`
}

// MarshalJSON writes the message with the fields of its role. A system
// message's content is a string (its text parts joined by newlines); other
// content is an array of parts.
func (m Message) MarshalJSON() ([]byte, error) {
	j := messageJSON{Role: m.Role, Timestamp: m.Timestamp}
	var err error
	switch m.Role {
	case RoleSystem:
		if text := ContentText(m.Content, "\n"); text != "" || len(m.Content) > 0 {
			j.Content, err = marshal(text)
		}
		if m.Sections != nil {
			s := m.Sections
			j.Sections = &s
		}
		j.ToolsAdded, j.ToolsRemoved, j.Replace = m.ToolsAdded, m.ToolsRemoved, m.Replace
	default:
		content := m.Content
		if content == nil {
			content = []Part{}
		}
		j.Content, err = marshal(content)
		j.ToolCallID, j.ToolName, j.IsError = m.ToolCallID, m.ToolName, m.IsError
		if len(m.Details) > 0 && json.Valid(m.Details) {
			j.Details = m.Details
		}
		j.StopReason, j.Usage, j.Model, j.ErrorMessage = m.StopReason, m.Usage, m.Model, m.ErrorMessage
	}
	if err != nil {
		return nil, err
	}
	return marshal(j)
}

// UnmarshalJSON reads a message; content may be a string or an array of
// parts for any role.
func (m *Message) UnmarshalJSON(b []byte) error {
	var j messageJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Message{
		Role: j.Role, ToolCallID: j.ToolCallID, ToolName: j.ToolName, IsError: j.IsError,
		Details: j.Details, StopReason: j.StopReason, Usage: j.Usage, Model: j.Model,
		ErrorMessage: j.ErrorMessage, ToolsAdded: j.ToolsAdded, ToolsRemoved: j.ToolsRemoved,
		Replace: j.Replace, Timestamp: j.Timestamp,
	}
	if j.Sections != nil {
		m.Sections = *j.Sections
		if m.Sections == nil {
			m.Sections = Sections{}
		}
	}
	content := bytes.TrimSpace(j.Content)
	switch {
	case len(content) == 0 || string(content) == "null":
	case content[0] == '"':
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return err
		}
		if s != "" {
			m.Content = []Part{Text(s)}
		}
	case content[0] == '[':
		if err := json.Unmarshal(content, &m.Content); err != nil {
			return fmt.Errorf("%s message content: %w", j.Role, err)
		}
	default:
		return fmt.Errorf("%s message content must be a string or an array of parts", j.Role)
	}
	return nil
}
