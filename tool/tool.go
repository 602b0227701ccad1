package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/toolshelf/toolshelf/internal/jsonscan"
	"github.com/toolshelf/toolshelf/llm"
)

// MaxNameLength is the longest tool name the registry accepts. It is the
// limit of OpenAI's function names, the strictest of the providers.
const MaxNameLength = 64

// ValidName reports whether name is a tool name every provider accepts,
// the names the registry takes: ^[A-Za-z0-9_-]{1,64}$ (MaxNameLength),
// checked a byte at a time, since a shelf of 100,000 tools checks 100,000
// names as it starts.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLength {
		return false
	}
	for i := range len(name) {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Tool is one executable tool: its declaration, how it reaches the model and
// the code that runs it.
//
// A Tool is a value; the registry stores copies. The slices and pointers of
// a Tool returned by a [Registry] are shared and must be treated as
// read-only. Parameters is kept
// byte-faithful (key order included) because the transcript compares
// declarations as canonical bytes.
type Tool struct {
	// Name is the model-facing name, unique in a registry, matching
	// ^[A-Za-z0-9_-]{1,64}$.
	Name string
	// Title is an optional human-readable name.
	Title string
	// Description tells the model what the tool does.
	Description string
	// Parameters is the JSON Schema of the tool's arguments, a JSON object.
	// Nil means an object schema without properties.
	Parameters json.RawMessage
	// Brief is a one-line, verb-first summary for the catalog of
	// two-phase selection; empty means one is derived from the
	// description.
	Brief string
	// Exposure says how the tool reaches the model. The zero value means
	// [Direct].
	Exposure Exposure
	// StartInactive keeps a direct or model-only tool inactive when it is
	// registered; something must activate it by name. It has no effect on
	// other exposures, which are never active on registration.
	StartInactive bool
	// Namespace groups the tool with others, usually the tools of one MCP
	// server. Nil for tools that belong to no group.
	Namespace *Namespace
	// Annotations are the MCP behaviour hints, if the server sent any.
	Annotations *Annotations
	// Origin names the tool as its server knows it. Zero for tools that do
	// not come from a server or catalog.
	Origin Origin
	// Handler runs the tool. Nil for tools that are known but cannot be
	// executed here, such as catalog entries loaded for search.
	Handler Handler
	// Sequential asks that the tool run alone: when a model calls it,
	// the calls of that response run one after another instead of in
	// parallel.
	Sequential bool
	// Reaches names the other tools a call of this tool depends on, so
	// that a runtime waits, before the call, for the servers that provide
	// them (a tool's own server is always waited for). The zero value
	// reaches nothing else. tool_search reaches every tool on the shelf.
	Reaches Reach
}

// Reach is what a tool's calls depend on besides the tool itself: every
// tool on the shelf, or some tools and namespaces by name.
type Reach struct {
	// All means every tool on the shelf, whichever server provides it:
	// tool_search, whose results depend on every server's tools.
	All bool
	// Names are model-facing tool names (mcp__github__create_issue) or
	// namespace names (mcp__github) the calls use.
	Names []string
	// Of, when set, is the reach of one call, read from its arguments:
	// a codemode script reaches the servers its code names. All and
	// Names are then the reach of a call whose arguments are not known.
	Of func(args json.RawMessage) Reach
}

// IsZero reports whether the reach names nothing beyond the tool itself
// when the arguments are not known.
func (r Reach) IsZero() bool { return !r.All && len(r.Names) == 0 }

// For returns the reach of a call with the given arguments: Of(args)
// when Of is set and args are given, else r itself.
func (r Reach) For(args json.RawMessage) Reach {
	if r.Of == nil || args == nil {
		return r
	}
	out := r.Of(args)
	out.Of = nil
	return out
}

// Declaration returns what the model is told about the tool.
func (t Tool) Declaration() llm.Tool {
	return llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}

// Namespace is a group of tools, usually the tools of one MCP server.
type Namespace struct {
	// Name is the model-facing group name, such as mcp__github.
	Name string
	// Description says what the group is for, in one line.
	Description string
	// Instructions are the server's own usage instructions, if any.
	Instructions string
}

// Annotations are the MCP tool annotations: hints about a tool's behaviour
// that clients may show or act on but must not trust blindly. A nil field
// means the server did not say.
type Annotations struct {
	// ReadOnly reports that the tool does not modify its environment.
	ReadOnly *bool `json:"readOnlyHint,omitempty"`
	// Destructive reports that the tool may perform destructive updates.
	Destructive *bool `json:"destructiveHint,omitempty"`
	// Idempotent reports that repeated calls with the same arguments have
	// no additional effect.
	Idempotent *bool `json:"idempotentHint,omitempty"`
	// OpenWorld reports that the tool interacts with external entities.
	OpenWorld *bool `json:"openWorldHint,omitempty"`
	// Title is a human-readable title for the tool.
	Title string `json:"title,omitempty"`
}

// Origin identifies a tool by the server that provides it and the name the
// server uses, the identity shared by catalogs, labeled queries and tasks.
type Origin struct {
	// Server is the server's short name, such as github.
	Server string `json:"server"`
	// Tool is the tool's name as the server lists it, such as create_issue.
	Tool string `json:"tool"`
}

// IsZero reports whether o names no server tool.
func (o Origin) IsZero() bool { return o == Origin{} }

// String returns "server/tool", or "" for the zero Origin.
func (o Origin) String() string {
	if o.IsZero() {
		return ""
	}
	return o.Server + "/" + o.Tool
}

// Handler runs a tool.
//
// Errors meant for the model (bad arguments, a failed operation) belong in a
// [Result] with IsError set; a returned error also becomes an error result
// but signals a failure of the runtime rather than of the request.
type Handler interface {
	Call(ctx context.Context, args json.RawMessage) (*Result, error)
}

// HandlerFunc adapts a function to a [Handler].
type HandlerFunc func(ctx context.Context, args json.RawMessage) (*Result, error)

// Call calls f(ctx, args).
func (f HandlerFunc) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	return f(ctx, args)
}

// Result is what a tool call produced.
type Result struct {
	// Content is what the model sees, in order.
	Content []Content
	// Structured is the tool's structured output, if it has an output
	// schema.
	Structured json.RawMessage
	// IsError marks the result as a failure the model should react to.
	IsError bool
	// Details carries data for the runtime and user interfaces that the
	// model does not see, such as the names a search loaded.
	Details any
}

// Content is one part of a [Result]: text, or an image.
type Content struct {
	// Text is the text of a text part.
	Text string
	// MIMEType is the media type of an image part, such as image/png.
	MIMEType string
	// Data holds the bytes of an image part.
	Data []byte
}

// TextResult returns a result with one text part.
func TextResult(text string) *Result {
	return &Result{Content: []Content{{Text: text}}}
}

// ErrorResult returns an error result with one text part.
func ErrorResult(text string) *Result {
	return &Result{Content: []Content{{Text: text}}, IsError: true}
}

// emptySchema is the parameter schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// ErrInvalid is wrapped by every error that reports an invalid tool.
var ErrInvalid = errors.New("invalid tool")

// refusedError is a registration refused by [CheckDefinition]: it is
// [ErrInvalid] and wraps the check's error (one error, not a join, so
// that callers listing joined problems see one problem per tool).
type refusedError struct {
	name string
	err  error
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("%v %q: %v", ErrInvalid, e.name, e.err)
}

// Is reports that the error is an [ErrInvalid].
func (e *refusedError) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the check's error.
func (e *refusedError) Unwrap() error { return e.err }

// maxScanDepth bounds the nesting of parameters that validate reads as
// already compact; deeper ones are compacted by encoding/json.
const maxScanDepth = 1000

// validate checks t and returns the copy the registry stores: exposure
// defaulted, parameters compacted (key order kept) and defaulted. The
// definition must pass [CheckDefinition].
func validate(t Tool) (Tool, error) {
	if !ValidName(t.Name) {
		if t.Name == "" {
			return t, fmt.Errorf("%w: empty name", ErrInvalid)
		}
		return t, fmt.Errorf("%w %q: the name must be 1 to %d characters from A-Z, a-z, 0-9, _ and - (use a Namer for server tools)",
			ErrInvalid, t.Name, MaxNameLength)
	}
	if t.Exposure == "" {
		t.Exposure = Direct
	}
	if _, err := ParseExposure(string(t.Exposure)); err != nil {
		return t, fmt.Errorf("%w %q: %w", ErrInvalid, t.Name, err)
	}
	switch {
	case len(bytes.TrimSpace(t.Parameters)) == 0:
		t.Parameters = slices.Clone(emptySchema)
	case jsonscan.IsCompact(t.Parameters, maxScanDepth):
		// Most parameters come compact (a catalog compacts them), and
		// checking costs less than compacting them again.
		if t.Parameters[0] != '{' {
			return t, fmt.Errorf("%w %q: parameters must be a JSON Schema object, got %.40s", ErrInvalid, t.Name, t.Parameters)
		}
		t.Parameters = bytes.Clone(t.Parameters)
	default:
		// Sized to the input, which the compacted form never exceeds: the
		// registry keeps these bytes, and a buffer grown by doubling would
		// keep about a third more.
		buf := bytes.NewBuffer(make([]byte, 0, len(t.Parameters)))
		if err := json.Compact(buf, t.Parameters); err != nil {
			return t, fmt.Errorf("%w %q: parameters are not valid JSON: %w", ErrInvalid, t.Name, err)
		}
		if buf.Len() == 0 || buf.Bytes()[0] != '{' {
			return t, fmt.Errorf("%w %q: parameters must be a JSON Schema object, got %.40s", ErrInvalid, t.Name, buf.String())
		}
		t.Parameters = json.RawMessage(buf.Bytes())
	}
	if err := CheckDefinition(t.Description, t.Parameters); err != nil {
		return t, &refusedError{name: t.Name, err: err}
	}
	t.Reaches.Names = slices.Clone(t.Reaches.Names)
	if t.Namespace != nil {
		ns := *t.Namespace
		t.Namespace = &ns
	}
	if t.Annotations != nil {
		a := *t.Annotations
		t.Annotations = &a
	}
	return t, nil
}
