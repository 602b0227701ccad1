package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/toolshelf/toolshelf/llm"
)

// Version is the major version of the file format this package reads and
// writes.
const Version = 1

// SummaryPrefix starts the user message that carries a compaction's
// summary in [Session.Messages].
const SummaryPrefix = "Summary of the conversation so far:\n\n"

// EntryType names the kind of an entry.
type EntryType string

// The entry types this package knows. Others are kept as they are.
const (
	// TypeMessage is an entry holding one [llm.Message].
	TypeMessage EntryType = "message"
	// TypeCompaction is an entry that summarises the conversation before
	// it.
	TypeCompaction EntryType = "compaction"
)

// headerType is the type of the header line.
const headerType = "session"

// Header is the first line of a session file.
type Header struct {
	// Version is the major version of the format (see [Version]).
	Version int
	// ID is the session's id: 16 hex digits.
	ID string
	// Timestamp is when the session was created.
	Timestamp time.Time
	// Cwd is the working directory of the agent, if recorded.
	Cwd string
	// MCPFile is the MCP servers file the session was started with, an
	// absolute path, if it had one: a resumed session uses it again
	// unless told otherwise.
	MCPFile string
	// ParentSession is the path of the session this one was forked from,
	// if any.
	ParentSession string
	// ParentEntry is the id of the entry of ParentSession it was forked
	// at, if any.
	ParentEntry string
}

type headerJSON struct {
	Type          string `json:"type"`
	Version       int    `json:"version"`
	ID            string `json:"id"`
	Timestamp     string `json:"timestamp"`
	Cwd           string `json:"cwd,omitempty"`
	MCPFile       string `json:"mcpFile,omitempty"`
	ParentSession string `json:"parentSession,omitempty"`
	ParentEntry   string `json:"parentEntry,omitempty"`
}

// MarshalJSON writes the header line (without the newline).
func (h Header) MarshalJSON() ([]byte, error) {
	return marshal(headerJSON{
		Type: headerType, Version: h.Version, ID: h.ID, Timestamp: formatTime(h.Timestamp),
		Cwd: h.Cwd, MCPFile: h.MCPFile, ParentSession: h.ParentSession, ParentEntry: h.ParentEntry,
	})
}

// UnmarshalJSON reads a header line. It fails when the line is not a
// session header, lacks the id or the timestamp, or has a version other
// than [Version] (an error wrapping [ErrUnsupportedVersion]).
func (h *Header) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if fields == nil {
		return errors.New("the header is not a JSON object")
	}
	var typ string
	if err := stringField(fields, "type", &typ); err != nil || typ != headerType {
		return errors.New(`not a session header (want "type":"session")`)
	}
	raw, ok := fields["version"]
	if !ok {
		return errors.New("the header has no version")
	}
	v, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
	if err != nil || v != Version {
		return fmt.Errorf("%w %s (this reader knows version %d)", ErrUnsupportedVersion, bytes.TrimSpace(raw), Version)
	}
	out := Header{Version: v}
	if err := stringField(fields, "id", &out.ID); err != nil {
		return err
	}
	if out.ID == "" {
		return errors.New("the header has no id")
	}
	if out.Timestamp, err = timeField(fields); err != nil {
		return err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"cwd", &out.Cwd}, {"mcpFile", &out.MCPFile}, {"parentSession", &out.ParentSession}, {"parentEntry", &out.ParentEntry}} {
		if err := stringField(fields, f.key, f.dst); err != nil {
			return err
		}
	}
	*h = out
	return nil
}

// Entry is one node of the session tree: a line of the file after the
// header. Which fields apply depends on the type; the others stay zero.
type Entry struct {
	// Type is the entry's type: [TypeMessage], [TypeCompaction] or a type
	// this package does not know.
	Type EntryType
	// ID identifies the entry in its file: 8 hex digits.
	ID string
	// ParentID is the id of the parent entry, "" for a root.
	ParentID string
	// Timestamp is when the entry was written.
	Timestamp time.Time

	// Message is the message of a message entry.
	Message *llm.Message

	// Summary is a compaction's summary of the conversation it replaces.
	Summary string
	// FirstKeptID is the id of the first entry a compaction keeps
	// verbatim, "" when it keeps none.
	FirstKeptID string
	// SystemMessage is a compaction's checkpoint of the prompt state (the
	// replayed system messages), nil when there were none.
	SystemMessage *llm.Message

	// Data is the "data" payload of an entry of another type, such as an
	// application's own records (see [Session.AppendData]).
	Data json.RawMessage

	// Raw is the entry's JSON as stored in the file, without the newline
	// and surrounding white space. It is how entries of unknown types are
	// written back.
	Raw json.RawMessage
}

type entryJSON struct {
	Type          EntryType       `json:"type"`
	ID            string          `json:"id"`
	ParentID      *string         `json:"parentId"`
	Timestamp     string          `json:"timestamp"`
	Message       *llm.Message    `json:"message,omitempty"`
	Summary       *string         `json:"summary,omitempty"`
	FirstKeptID   *string         `json:"firstKeptId,omitempty"`
	SystemMessage *llm.Message    `json:"systemMessage,omitempty"`
	Data          json.RawMessage `json:"data,omitempty"`
}

// MarshalJSON writes the entry as a line of a session file (without the
// newline). Known types are written from their fields; an entry of an
// unknown type is written as its Raw JSON.
func (e Entry) MarshalJSON() ([]byte, error) {
	j := entryJSON{Type: e.Type, ID: e.ID, Timestamp: formatTime(e.Timestamp)}
	if e.ParentID != "" {
		j.ParentID = &e.ParentID
	}
	switch e.Type {
	case TypeMessage:
		if e.Message == nil {
			return nil, fmt.Errorf("message entry %s without a message", e.ID)
		}
		j.Message = e.Message
	case TypeCompaction:
		j.Summary, j.FirstKeptID, j.SystemMessage = &e.Summary, &e.FirstKeptID, e.SystemMessage
	default:
		if len(e.Raw) == 0 {
			if e.Data == nil {
				return nil, fmt.Errorf("entry %s of unknown type %q without its raw JSON", e.ID, e.Type)
			}
			j.Data = e.Data
			return marshal(j)
		}
		return bytes.Clone(e.Raw), nil
	}
	return marshal(j)
}

// marshal encodes v as compact JSON without escaping <, > and & (which
// json.Marshal turns into \u003c and the like).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads an entry line: it checks the common fields (type,
// id, timestamp, parentId) and the fields of the known types, and keeps
// the line in Raw. Messages must pass [llm.Message.Validate]; they are
// kept in the form their own encoding reads back as, so that an entry
// written and read again is equal to itself. Checks that need the whole
// file (unique ids, known parents) are [Open]'s.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if fields == nil {
		return errors.New("the entry is not a JSON object")
	}
	var out Entry
	var typ string
	if err := stringField(fields, "type", &typ); err != nil {
		return err
	}
	if typ == "" {
		return errors.New("the entry has no type")
	}
	if typ == headerType {
		return errors.New("a second session header")
	}
	out.Type = EntryType(typ)
	if err := stringField(fields, "id", &out.ID); err != nil {
		return err
	}
	if out.ID == "" {
		return errors.New("the entry has no id")
	}
	if err := stringField(fields, "parentId", &out.ParentID); err != nil {
		return err
	}
	var err error
	if out.Timestamp, err = timeField(fields); err != nil {
		return err
	}
	switch out.Type {
	case TypeMessage:
		if out.Message, err = messageField(fields, "message"); err != nil {
			return err
		}
		if out.Message == nil {
			return errors.New("a message entry without a message")
		}
	case TypeCompaction:
		if _, ok := fields["summary"]; !ok {
			return errors.New("a compaction entry without a summary")
		}
		if err := stringField(fields, "summary", &out.Summary); err != nil {
			return err
		}
		if err := stringField(fields, "firstKeptId", &out.FirstKeptID); err != nil {
			return err
		}
		if out.SystemMessage, err = messageField(fields, "systemMessage"); err != nil {
			return err
		}
		if out.SystemMessage != nil && out.SystemMessage.Role != llm.RoleSystem {
			return fmt.Errorf("the compaction's systemMessage has role %q", out.SystemMessage.Role)
		}
	default:
		if raw, ok := fields["data"]; ok {
			out.Data = bytes.Clone(raw)
		}
	}
	out.Raw = bytes.Clone(bytes.TrimSpace(b))
	*e = out
	return nil
}

// stringField sets *dst to the string at key; a missing key or null
// leaves it empty.
func stringField(fields map[string]json.RawMessage, key string, dst *string) error {
	raw, ok := fields[key]
	if !ok {
		return nil
	}
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("%s: want a string", key)
	}
	if s != nil {
		*dst = *s
	}
	return nil
}

// timeField reads the required "timestamp" field.
func timeField(fields map[string]json.RawMessage) (time.Time, error) {
	var s string
	if err := stringField(fields, "timestamp", &s); err != nil {
		return time.Time{}, err
	}
	if s == "" {
		return time.Time{}, errors.New("no timestamp")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q is not RFC 3339", s)
	}
	return t, nil
}

// messageField reads the message at key, nil when missing or null. The
// message must be valid; it is returned in canonical form.
func messageField(fields map[string]json.RawMessage, key string) (*llm.Message, error) {
	raw, ok := fields[key]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	m, err := decodeMessage(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return m, nil
}

// decodeMessage decodes and validates a message, then encodes and decodes
// it until it reads back as itself: llm's decoder accepts forms its
// encoder does not write (fields of other roles, system content as parts,
// raw JSON with white space), so an entry is kept in the form it will be
// written in. One pass normally suffices; the bound is a guard.
func decodeMessage(raw []byte) (*llm.Message, error) {
	var m llm.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	var prev []byte
	for range 64 {
		b, err := marshal(m)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(b, prev) {
			return &m, nil
		}
		var c llm.Message
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("the message does not read back: %w", err)
		}
		m, prev = c, b
	}
	return nil, errors.New("the message does not read back as itself")
}

// formatTime writes t in RFC 3339 with milliseconds, or with as many
// digits as t has when it is finer.
func formatTime(t time.Time) string {
	if t.Nanosecond()%int(time.Millisecond) == 0 {
		return t.Format("2006-01-02T15:04:05.000Z07:00")
	}
	return t.Format(time.RFC3339Nano)
}

// clone returns a deep copy of e.
func (e Entry) clone() Entry {
	c := e
	if e.Message != nil {
		m := e.Message.Clone()
		c.Message = &m
	}
	if e.SystemMessage != nil {
		m := e.SystemMessage.Clone()
		c.SystemMessage = &m
	}
	c.Raw = bytes.Clone(e.Raw)
	c.Data = bytes.Clone(e.Data)
	return c
}

// ErrUnsupportedVersion is wrapped by the error for a session file whose
// format version this package does not know.
var ErrUnsupportedVersion = errors.New("unsupported session format version")

// ErrUnknownEntry is wrapped by the errors for entry ids that are not in
// the session.
var ErrUnknownEntry = errors.New("no such entry")

// ErrClosed is returned by appends to a closed session.
var ErrClosed = errors.New("session is closed")

// ErrReadOnly is returned by appends to a session opened with
// [Options.ReadOnly].
var ErrReadOnly = errors.New("session is open read-only")

// ErrNoSessions is returned by [Latest] when the directory holds no
// readable session.
var ErrNoSessions = errors.New("no sessions")

// FormatError reports a session file that cannot be read: the file, the
// 1-based line and the problem.
type FormatError struct {
	// Path is the session file.
	Path string
	// Line is the 1-based number of the offending line.
	Line int
	// Err is the problem.
	Err error
	// Intact is the number of entries before the line, which read well;
	// LastIntact is the id of the last of them ("" when there is none).
	// A fork at LastIntact ([Fork]) recovers them.
	Intact     int
	LastIntact string
}

// Error returns "session file PATH: line N: problem".
func (e *FormatError) Error() string {
	return fmt.Sprintf("session file %s: line %d: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns the problem.
func (e *FormatError) Unwrap() error { return e.Err }
