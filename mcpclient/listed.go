package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/tool"
)

// How the SDK's list cache keeps a listed tool (its name and what it reads
// of the input schema) and how refresh gets the tool whole.

// rawToolSchemas returns a sending middleware that keeps the schemas of a
// tools/list answer's tools (which the SDK decodes into maps) as JSON
// before the SDK files the answer. The SDK keeps every page it listed for
// the session's life (its SEP-2549 cache, also when the server gives it no
// TTL) and looks a tool up there on each call, for its x-mcp-header
// annotations only; a decoded schema holds about 5 KB of heap per tool, its
// JSON about a fifth of that. The JSON is the bytes encoding/json's Marshal
// writes for the decoded schema, as the tool's definition was always
// encoded, so nothing reads it differently. An input schema is kept as a
// listedSchema, whose encoding is only what those checks read. A schema
// lists put aside (which the SDK hands over as its marker) is those bytes
// already; a description put aside comes back too.
//
// A page without a TTL is never listed from the cache again. When the
// listing is refresh's (a listing in the context), such a page's tools are
// handed to it whole there and left in the SDK's cache as their names and
// annotations alone. Both here and in refresh the bytes come from marshal.
func rawToolSchemas(lists *listBytes) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			r, ok := res.(*mcp.ListToolsResult)
			if !ok || err != nil {
				return res, err
			}
			l, _ := ctx.Value(listingKey{}).(*listing)
			once := l != nil && r.GetTTLMs() <= 0
			for _, t := range r.Tools {
				if t == nil {
					continue
				}
				if a, ok := lists.take(t.InputSchema); ok && a.schema != nil {
					t.InputSchema = &listedSchema{full: a.schema}
				}
				if a, ok := lists.take(t.OutputSchema); ok && a.schema != nil {
					t.OutputSchema = a.schema
				}
				if a, ok := lists.take(t.Description); ok && a.schema == nil {
					t.Description = a.text
				}
				in := listed(t.InputSchema)
				t.InputSchema, t.OutputSchema = in, rawSchema(t.OutputSchema)
				if s, ok := in.(*listedSchema); ok && once {
					l.keep(t, wholeTool(t))
					bare := unannotated
					if s.headers != nil {
						bare = &listedSchema{headers: s.headers}
					}
					*t = mcp.Tool{Name: t.Name, InputSchema: bare}
				}
			}
			return res, err
		}
	}
}

// listingKey is the context key of a listing.
type listingKey struct{}

// listing holds, for one listing of a server's tools, the whole tools of
// its pages that the SDK's cache keeps as their names and annotations
// (rawToolSchemas), by the pointer the SDK hands over.
type listing struct {
	mu    sync.Mutex
	whole map[*mcp.Tool]*mcp.Tool
}

// keep records t's whole form.
func (l *listing) keep(t, whole *mcp.Tool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.whole == nil {
		l.whole = make(map[*mcp.Tool]*mcp.Tool)
	}
	l.whole[t] = whole
}

// take returns the whole form of a listed tool, and forgets it.
func (l *listing) take(t *mcp.Tool) *mcp.Tool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.whole[t]; ok {
		delete(l.whole, t)
		return w
	}
	return wholeTool(t)
}

// rawSchema returns a decoded schema as JSON; nil, and what cannot be
// encoded, stay as they are.
func rawSchema(s any) any {
	switch s.(type) {
	case nil, json.RawMessage, *listedSchema:
		return s
	}
	b, err := marshal(s)
	if err != nil {
		return s
	}
	return json.RawMessage(b)
}

// listedSchema is a listed tool's input schema as the SDK keeps it: its
// JSON (full, nil once refresh has it), and the part the SDK reads
// (headers). The SDK reads a tool's input schema only to find x-mcp-header
// annotations, by encoding it and decoding the encoding, case-sensitively,
// into a struct of "type", "x-mcp-header" and "properties" (of which it
// follows only properties). MarshalJSON writes headers: those three at
// every level as they are, which decodes into the same struct, errors
// included. When there is no annotation (headers nil) it fails, which the
// SDK reads as no annotation, as it reads the whole schema, and which
// spares it a decoding for every listed tool. So the SDK checks the
// annotations (and sends the headers they ask for) as it would with the
// whole schema, at a fraction of the cost. Code of this package that encodes a listed tool restores
// the whole schema first (wholeTool, listing.take).
type listedSchema struct {
	full, headers json.RawMessage
}

// MarshalJSON writes what the SDK reads of the schema.
func (s *listedSchema) MarshalJSON() ([]byte, error) {
	if s.headers == nil {
		return nil, errNoAnnotations
	}
	return s.headers, nil
}

// unannotated is the listedSchema the SDK's cache keeps for every listed
// tool without x-mcp-header annotations once refresh has the whole tool:
// one for them all.
var unannotated = &listedSchema{}

// errNoAnnotations is how a listedSchema without x-mcp-header annotations
// encodes.
var errNoAnnotations = errors.New("the schema has no x-mcp-header annotation")

// listed returns a decoded input schema as a listedSchema; nil, and what
// cannot be encoded, stay as they are.
func listed(s any) any {
	if _, ok := s.(json.RawMessage); ok {
		return s
	}
	full, ok := rawSchema(s).(json.RawMessage)
	if !ok {
		return s // nil, a listedSchema, or what cannot be encoded
	}
	if !hasHeaderAnnotation(s) {
		return &listedSchema{full: full}
	}
	part, _ := headerPart(s)
	headers, err := marshal(part)
	if err != nil {
		return json.RawMessage(full)
	}
	return &listedSchema{full: full, headers: headers}
}

// headerPart returns what the SDK's x-mcp-header checks read of a decoded
// schema value (of an object, its "type" and "x-mcp-header" as they are
// and the header parts of its "properties"' values), and whether it holds
// an annotation.
func headerPart(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, false
	}
	out := make(map[string]any, 3)
	if x, ok := m["type"]; ok {
		out["type"] = x
	}
	x, annotated := m["x-mcp-header"]
	if annotated {
		out["x-mcp-header"] = x
	}
	if p, ok := m["properties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			out["properties"] = p
			return out, annotated
		}
		part := make(map[string]any, len(props))
		for name, x := range props {
			var a bool
			part[name], a = headerPart(x)
			annotated = annotated || a
		}
		out["properties"] = part
	}
	return out, annotated
}

// hasHeaderAnnotation reports whether headerPart(v) holds an annotation,
// without building the part: most schemas have none.
func hasHeaderAnnotation(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m["x-mcp-header"]; ok {
		return true
	}
	props, _ := m["properties"].(map[string]any)
	for _, x := range props {
		if hasHeaderAnnotation(x) {
			return true
		}
	}
	return false
}

// wholeTool returns t with its whole input schema, a copy when the SDK
// keeps it as a listedSchema.
func wholeTool(t *mcp.Tool) *mcp.Tool {
	if s, ok := t.InputSchema.(*listedSchema); ok && s.full != nil {
		c := *t
		c.InputSchema = s.full
		return &c
	}
	return t
}

// marshal is json.Marshal by the JSON library the MCP SDK decodes with
// (segmentio/encoding), which writes the same bytes as encoding/json
// (TestMarshalIsEncodingJSON) in about half the time: a listing encodes
// every schema and every tool once.
func marshal(v any) ([]byte, error) { return segjson.Marshal(v) }

// listedTool returns a listed tool (whole, as listing.take gives it) as
// catalog.ParseListed reads it: as catalog.ParseList would read the tool's
// encoding, without encoding the tool. Its schemas are the JSON
// rawToolSchemas made of them, and the encoding of what it left decoded.
func listedTool(t *mcp.Tool) (catalog.ListedTool, error) {
	in, err := schemaJSON(t.InputSchema)
	if err != nil {
		return catalog.ListedTool{}, err
	}
	out, err := schemaJSON(t.OutputSchema)
	if err != nil {
		return catalog.ListedTool{}, err
	}
	lt := catalog.ListedTool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in, OutputSchema: out}
	if a := t.Annotations; a != nil {
		// As encoded: the SDK always writes the readOnly and idempotent
		// hints, and the others when they are set.
		lt.Annotations = &tool.Annotations{ReadOnly: &a.ReadOnlyHint, Idempotent: &a.IdempotentHint,
			Destructive: a.DestructiveHint, OpenWorld: a.OpenWorldHint, Title: a.Title}
	}
	return lt, nil
}

// schemaJSON returns a listed tool's schema as JSON: nil when it is
// absent, as it is when it is JSON already.
func schemaJSON(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	}
	return marshal(v)
}
