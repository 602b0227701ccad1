package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/catalog/builtin"
)

// TestRegisteredSchemaBytes pins the parameter bytes registered for a
// listed tool: its input schema as the SDK decodes it and encoding/json
// writes it again (keys sorted, <, > and & escaped, numbers as float64
// writes them), with "type": "object" put first when missing.
func TestRegisteredSchemaBytes(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "a", Description: "A.", InputSchema: json.RawMessage(
		`{"type":"object","required":["z"],"properties":{"z":{"type":"string","description":"<b> & \u00e9","pattern":"^a+$"},` +
			`"a":{"type":"number","minimum":1.50,"maximum":1e3,"default":10}},"additionalProperties":false}`)}, noop)
	srv.AddTool(&mcp.Tool{Name: "b", Description: "B.", InputSchema: json.RawMessage(`{"properties":{"x":{}},"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"r":{"type":"integer"}}}`)}, noop)
	f := newFixture(t, memServer("s"))
	useMemServers(f.m, map[string]*mcp.Server{"s": srv})
	f.m.Start(f.ctx())
	f.waitAll()
	for name, want := range map[string]string{
		"mcp__s__a": `{"additionalProperties":false,"properties":{"a":{"default":10,"maximum":1000,"minimum":1.5,"type":"number"},` +
			`"z":{"description":"\u003cb\u003e \u0026 é","pattern":"^a+$","type":"string"}},"required":["z"],"type":"object"}`,
		"mcp__s__b": `{"properties":{"x":{}},"type":"object"}`,
	} {
		got, ok := f.reg.Get(name)
		if !ok {
			t.Fatalf("%s not registered: %v", name, f.reg.Tools())
		}
		if string(got.Parameters) != want {
			t.Errorf("%s parameters\n%s\nwant\n%s", name, got.Parameters, want)
		}
	}
}

// TestRawToolSchemas: the middleware keeps a listed tool's decoded input
// schema as a listedSchema holding the JSON json.Marshal gives for it, and
// its output schema as that JSON; it leaves a missing output schema
// missing, and other answers alone. In refresh's listing, a page without
// TTL is left to the SDK as names and annotations, and the listing hands
// the tools over whole; a page with a TTL keeps them.
func TestRawToolSchemas(t *testing.T) {
	in := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string", "description": "a<b"}}}
	want, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var listed *mcp.ListToolsResult
	page := func(ttl int) *mcp.ListToolsResult {
		listed = &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "a", Description: "A.", InputSchema: in}, nil,
			{Name: "b", InputSchema: in, OutputSchema: in}}}
		listed.TTLMs = ttl
		return listed
	}
	other := &mcp.ListPromptsResult{}
	h := rawToolSchemas(nil)(func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			return listed, nil
		}
		return other, nil
	})
	check := func(what string, a, b *mcp.Tool) {
		t.Helper()
		if raw, ok := a.InputSchema.(json.RawMessage); !ok || string(raw) != string(want) || a.Description != "A." {
			t.Errorf("%s: tool a %#v, want its description and input schema %s", what, a, want)
		}
		if a.OutputSchema != nil {
			t.Errorf("%s: a missing output schema became %#v", what, a.OutputSchema)
		}
		if raw, ok := b.OutputSchema.(json.RawMessage); !ok || string(raw) != string(want) {
			t.Errorf("%s: output schema %#v, want %s", what, b.OutputSchema, want)
		}
	}
	for _, ttl := range []int{0, 60000} {
		p := page(ttl)
		if res, err := h(t.Context(), "tools/list", nil); err != nil || res != p {
			t.Fatalf("tools/list answered %v, %v", res, err)
		}
		for _, tl := range []*mcp.Tool{p.Tools[0], p.Tools[2]} {
			if s, ok := tl.InputSchema.(*listedSchema); !ok || string(s.full) != string(want) {
				t.Errorf("ttl %d: %s input schema %#v, want a listedSchema of %s", ttl, tl.Name, tl.InputSchema, want)
			}
		}
		check(fmt.Sprintf("outside a listing, ttl %d", ttl), wholeTool(p.Tools[0]), wholeTool(p.Tools[2]))

		l := &listing{}
		p = page(ttl)
		if _, err := h(context.WithValue(t.Context(), listingKey{}, l), "tools/list", nil); err != nil {
			t.Fatal(err)
		}
		a, b := p.Tools[0], p.Tools[2]
		stripped := a.Description == "" && b.OutputSchema == nil && a.InputSchema.(*listedSchema).full == nil
		if stripped != (ttl == 0) {
			t.Errorf("in a listing, ttl %d: the SDK keeps %#v", ttl, a)
		}
		check(fmt.Sprintf("in a listing, ttl %d", ttl), l.take(a), l.take(b))
	}
	if res, err := h(t.Context(), "prompts/list", nil); err != nil || res != other {
		t.Errorf("prompts/list answered %v, %v", res, err)
	}
}

// sdkHeaderView is what the MCP SDK (v1.8.0, streamable_headers.go) decodes
// a tool's encoded input schema into to find x-mcp-header annotations,
// with its JSON library's case-sensitive field matching.
type sdkHeaderView struct {
	Type       string                   `json:"type"`
	XMCPHeader json.RawMessage          `json:"x-mcp-header,omitempty"`
	Properties map[string]sdkHeaderView `json:"properties,omitempty"`
}

// sdkRead encodes v and decodes it as the SDK does.
func sdkRead(t *testing.T, v any) (sdkHeaderView, error) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		return sdkHeaderView{}, err // the SDK reads no annotation
	}
	dec := segjson.NewDecoder(bytes.NewReader(b))
	dec.DontMatchCaseInsensitiveStructFields()
	var h sdkHeaderView
	err = dec.Decode(&h)
	return h, err
}

// annotated reports whether a view holds an x-mcp-header annotation.
func annotated(h sdkHeaderView) bool {
	if h.XMCPHeader != nil {
		return true
	}
	for _, p := range h.Properties {
		if annotated(p) {
			return true
		}
	}
	return false
}

// TestListedSchemaReadsAsTheWhole: what the SDK reads of a listedSchema
// (its headers) decodes as the whole schema does, errors included, for
// every built-in corpus tool's schema and for schemas that exercise the
// annotation's edge cases.
func TestListedSchemaReadsAsTheWhole(t *testing.T) {
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	var schemas []string
	for _, s := range servers {
		for _, e := range s.Tools {
			schemas = append(schemas, string(e.InputSchema))
		}
	}
	schemas = append(schemas,
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region","description":"d"},`+
			`"nested":{"type":"object","properties":{"id":{"type":"integer","x-mcp-header":"Id"}},"required":["id"]}}}`,
		`{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"Bad"}}}`,
		`{"type":["string","null"],"properties":{"a":{"x-mcp-header":"A"}}}`,
		`{"type":"object","properties":{"a":true,"b":null,"c":{"type":7}}}`,
		`{"type":"object","properties":[1,2]}`,
		`{"Type":"object","PROPERTIES":{"a":{"X-MCP-HEADER":"A"}},"properties":{"b":{"x-mcp-header":12,"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A","items":{"properties":{"z":{"x-mcp-header":"Z"}}}}}}`,
		`{"anyOf":[{"properties":{"a":{"x-mcp-header":"A"}}}],"x-mcp-header":"Top","type":"boolean"}`,
		`"just a string"`, `[]`, `null`, `{}`)
	headers := 0
	for _, raw := range schemas {
		var decoded any
		if err := json.Unmarshal([]byte(raw), &decoded); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if _, a := headerPart(decoded); a != hasHeaderAnnotation(decoded) {
			t.Fatalf("%s: headerPart finds an annotation: %v; hasHeaderAnnotation: %v", raw, a, !a)
		}
		whole, werr := sdkRead(t, decoded)
		view := listed(decoded)
		part, perr := sdkRead(t, view)
		if s, ok := view.(*listedSchema); ok && s.headers == nil {
			// Read as no annotation, as the whole schema must be.
			if werr == nil && annotated(whole) {
				t.Fatalf("%s: the SDK finds annotations in %+v, the listed schema has none", raw, whole)
			}
			continue
		}
		if (werr == nil) != (perr == nil) || !reflect.DeepEqual(whole, part) {
			t.Fatalf("%s: the SDK reads the whole schema as %+v (%v), the listed one as %+v (%v)", raw, whole, werr, part, perr)
		}
		if strings.Contains(raw, "x-mcp-header") {
			headers++
		}
		if s, ok := view.(*listedSchema); ok {
			if b, _ := json.Marshal(decoded); string(s.full) != string(b) {
				t.Fatalf("%s: the listed schema keeps %s, want %s", raw, s.full, b)
			}
		}
	}
	if headers < 6 {
		t.Fatalf("only %d schemas carry annotations", headers)
	}
}

// TestListedToolReadsAsItsEncoding: catalog.ParseListed of listedTool's
// tools gives the same server and problems as catalog.ParseList of the
// tools' encodings (what refresh did before), for every built-in corpus
// tool decoded as the SDK decodes a page, and for tools that exercise
// the checks: bad names, schemas that are not objects, annotations,
// invalid UTF-8 and a duplicate.
func TestListedToolReadsAsItsEncoding(t *testing.T) {
	t.Parallel()
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	var objects []string
	for _, s := range servers {
		for _, e := range s.Tools {
			o := map[string]any{"name": e.Name, "description": e.Description, "inputSchema": e.InputSchema}
			if e.Title != "" {
				o["title"] = e.Title
			}
			if e.OutputSchema != nil {
				o["outputSchema"] = e.OutputSchema
			}
			if e.Annotations != nil {
				o["annotations"] = e.Annotations
			}
			b, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			objects = append(objects, string(b))
		}
	}
	objects = append(objects,
		`{"name":"plain","inputSchema":{"type":"object"}}`,
		`{"name":"no_schema","description":"none at all"}`,
		`{"name":"null_schema","inputSchema":null}`,
		`{"name":"empty_schema","inputSchema":{}}`,
		`{"name":"props_only","inputSchema":{"properties":{"a":{"type":"string"}}}}`,
		`{"name":"string_type","inputSchema":{"type":"string"}}`,
		`{"name":"array_schema","inputSchema":[1,2]}`,
		`{"name":"string_schema","inputSchema":"object"}`,
		`{"name":"","inputSchema":{"type":"object"}}`,
		`{"name":"   ","inputSchema":{"type":"object"}}`,
		`{"inputSchema":{"type":"object"}}`,
		`{"name":"`+strings.Repeat("n", 129)+`","inputSchema":{"type":"object"}}`,
		`{"name":"`+strings.Repeat("é", 128)+`","inputSchema":{"type":"object"}}`,
		`{"name":"escapes","title":"<T> & \u2028","description":"a <b> & c \u2029 \ufffd","inputSchema":{"type":"object","properties":{"x":{"description":"<&>","type":"string"}}}}`,
		`{"name":"out_string","inputSchema":{"type":"object"},"outputSchema":"s"}`,
		`{"name":"out_array","inputSchema":{"type":"object"},"outputSchema":[{}]}`,
		`{"name":"out_object","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"r":{"type":"number"}}}}`,
		`{"name":"ann_empty","inputSchema":{"type":"object"},"annotations":{}}`,
		`{"name":"ann_all","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":true,"title":"All"}}`,
		`{"name":"ann_some","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,"title":"<x>"}}`,
		`{"name":"meta","inputSchema":{"type":"object"},"_meta":{"k":[1,{"v":null}]},"icons":[{"src":"https://example.com/i.png"}]}`,
		`{"name":"bad_def","description":"","inputSchema":{"type":"object","properties":{"a":{"type":"nonsense"}}}}`,
		`{"name":"plain","description":"listed twice","inputSchema":{"type":"object"}}`,
	)
	var decoded []*mcp.Tool
	for _, o := range objects {
		var tl mcp.Tool
		dec := segjson.NewDecoder(strings.NewReader(o))
		dec.DontMatchCaseInsensitiveStructFields()
		if err := dec.Decode(&tl); err != nil {
			t.Fatalf("decoding %s: %v", o, err)
		}
		decoded = append(decoded, &tl)
	}
	// Strings the SDK could hand over that no JSON decoder writes.
	decoded = append(decoded,
		&mcp.Tool{Name: "bad\xffutf8", Title: "t\xc3", Description: "d\xe2\x82 ok \xff\xfe", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{Title: "a\xff"}},
		&mcp.Tool{Name: "\xff\xfe\xfd", InputSchema: map[string]any{}})
	var encoded []json.RawMessage
	var listedTools []catalog.ListedTool
	for _, tl := range decoded {
		// As rawToolSchemas and refresh's listing.take leave the tool.
		tl.InputSchema, tl.OutputSchema = listed(tl.InputSchema), rawSchema(tl.OutputSchema)
		whole := wholeTool(tl)
		b, err := marshal(whole)
		if err != nil {
			t.Fatalf("encoding %s: %v", tl.Name, err)
		}
		encoded = append(encoded, b)
		lt, err := listedTool(whole)
		if err != nil {
			t.Fatalf("listedTool(%s): %v", tl.Name, err)
		}
		listedTools = append(listedTools, lt)
	}
	want, wantErr := catalog.ParseList("f", "srv", " a server ", "use it", encoded)
	got, gotErr := catalog.ParseListed("f", "srv", " a server ", "use it", listedTools)
	errorsAsText := cmp.Comparer(func(a, b error) bool { return fmt.Sprint(a) == fmt.Sprint(b) })
	rawAsString := cmp.Transformer("string", func(r json.RawMessage) string { return string(r) })
	if diff := cmp.Diff(want, got, errorsAsText, rawAsString); diff != "" {
		t.Errorf("ParseListed's server differs from ParseList's (-ParseList +ParseListed):\n%s", diff)
	}
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Errorf("ParseListed's problems\n%v\nParseList's\n%v", gotErr, wantErr)
	}
	if want == nil || len(want.Tools) < 1000 || len(want.Refused) == 0 || len(catalog.Problems(wantErr)) < 12 {
		t.Fatalf("the cases do not exercise the checks: %d tools, %d refused, %d problems",
			len(want.Tools), len(want.Refused), len(catalog.Problems(wantErr)))
	}
}
