package emulator

import (
	"github.com/toolshelf/toolshelf/internal/ecma"

	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// anthTool is a tool definition: a top-level tools entry or an inline
// tool_definition.
type anthTool struct {
	name string
	// kind is "custom" or the server tool's type.
	kind     string
	def      map[string]any
	deferred bool
	// params is a custom tool's input_schema in canonical form, computed
	// once for the schema check and the responders.
	params []byte
}

var (
	anthToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
	anthToolID   = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	// anthServerTool matches the server tool types (dated versions and
	// the undated tool-search aliases).
	anthServerTool = regexp.MustCompile(`^(tool_search_tool_(regex|bm25)(_\d{8})?|(web_search|web_fetch|code_execution|memory|bash|text_editor|computer)_\d{8}|mcp_toolset)$`)
)

// anthToolTags lists some of the tool types the API accepts, for the tag
// error.
var anthToolTags = []string{"custom", "tool_search_tool_regex_20251119", "tool_search_tool_bm25_20251119",
	"web_search_20260318", "web_fetch_20250910", "code_execution_20260521", "memory_20250818", "mcp_toolset"}

// anthCustomToolKeys are a custom tool's fields.
var anthCustomToolKeys = []string{"name", "description", "input_schema", "type", "cache_control", "defer_loading",
	"strict", "eager_input_streaming", "input_examples", "allowed_callers"}

// toolDef returns the tool as responders see it.
func (t *anthTool) toolDef() ToolDef {
	td := ToolDef{Name: t.name}
	if s, ok := t.def["description"].(string); ok {
		td.Description = s
	}
	switch schema, ok := t.def["input_schema"]; {
	case t.params != nil:
		td.Parameters = t.params
	case ok:
		td.Parameters = canonical(schema)
	}
	return td
}

// rendered is the definition as it renders in the prompt: no cache
// marker, and no defer_loading, since an expanded deferred tool renders
// like any other.
func (t *anthTool) rendered() []byte { return canonical(withoutKeys(t.def, "defer_loading")) }

// tools decodes the top-level tools: each is validated, names are unique,
// cache_control is refused on deferred tools and a list of deferred tools
// only is refused without the inline-tools beta. Tools that are not
// deferred render in order.
func (d *anthDecoder) tools(o anthObj) *Error {
	list, _, e := o.list("tools", false)
	if e != nil {
		return e
	}
	direct := 0
	for i, raw := range list {
		t, ttl, e := d.tool(anthJoin("tools", i), raw)
		if e != nil {
			return e
		}
		if d.known[t.name] != nil {
			return anthInvalid("tools: Tool names must be unique.")
		}
		d.known[t.name] = t
		if t.deferred {
			d.deferred = true
			continue
		}
		direct++
		if t.kind != "mcp_toolset" {
			d.avail = append(d.avail, t)
		}
		d.toolSegs = append(d.toolSegs, Segment{Bytes: t.rendered(), ToolDef: true, Breakpoint: ttl})
	}
	if len(list) > 0 && direct == 0 && !d.betas[anthBetaInlineTools] {
		return anthInvalid("tools: All tools have defer_loading set. At least one tool must not be deferred (or send the anthropic-beta %s, which allows it).", anthBetaInlineTools)
	}
	return nil
}

// tool validates one tool definition at path and records its breakpoint.
func (d *anthDecoder) tool(path string, raw any) (*anthTool, TTL, *Error) {
	o, e := anthAsObj(path, raw)
	if e != nil {
		return nil, "", e
	}
	kind := "custom"
	if typ, ok := o.m["type"]; ok && typ != nil {
		s, isStr := typ.(string)
		switch {
		case !isStr:
			return nil, "", anthInvalid("%s: Unable to extract tag using discriminator 'type'", path)
		case s == "custom":
		case anthServerTool.MatchString(s):
			kind = s
		default:
			return nil, "", anthTagMismatch(path, "type", s, anthToolTags)
		}
	}
	o.path = anthJoin(path, kind)
	t := &anthTool{kind: kind, def: o.m}
	if kind == "mcp_toolset" {
		// An MCP toolset names a server, not a tool.
		name, _, e := o.str("mcp_server_name", true)
		if e != nil {
			return nil, "", e
		}
		t.name = "mcp_toolset:" + name
	} else {
		name, _, e := o.str("name", true)
		if e != nil {
			return nil, "", e
		}
		t.name = name
	}
	deferred, e := o.boolean("defer_loading")
	if e != nil {
		return nil, "", e
	}
	t.deferred = deferred
	if kind == "custom" {
		if e := anthCustomTool(o, t); e != nil {
			return nil, "", e
		}
	}
	if deferred && o.has("cache_control") {
		return nil, "", anthInvalid("Tool '%s' cannot have both defer_loading=true and cache_control set. Tools with defer_loading cannot use prompt caching.", t.name)
	}
	ttl, e := d.breakpoint(o)
	if e != nil {
		return nil, "", e
	}
	return t, ttl, nil
}

// anthCustomTool checks a custom tool's fields and keeps its schema's
// canonical form on t.
func anthCustomTool(o anthObj, t *anthTool) *Error {
	name := t.name
	if e := o.extra(anthCustomToolKeys...); e != nil {
		return e
	}
	if len(name) > 128 {
		return anthInvalid("%s: String should have at most 128 characters", o.at("name"))
	}
	if !anthToolName.MatchString(name) {
		return anthInvalid("%s: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", o.at("name"))
	}
	if _, _, e := o.str("description", false); e != nil {
		return e
	}
	for _, k := range []string{"strict", "eager_input_streaming"} {
		if _, e := o.boolean(k); e != nil {
			return e
		}
	}
	schema, _, e := o.obj("input_schema", true)
	if e != nil {
		return e
	}
	typ, ok := schema.m["type"]
	switch {
	case !ok:
		return anthInvalid("%s: Field required", schema.at("type"))
	case typ != "object":
		return anthInvalid("%s: Input should be 'object'", schema.at("type"))
	}
	t.params = canonical(schema.m)
	if err := anthCheckSchema(schema.m, t.params); err != nil {
		return anthInvalid("%s: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://docs.claude.com/en/docs/tool-use. (%v)",
			o.at("input_schema"), err)
	}
	return nil
}

// anthSchemas memoizes schema checks by canonical text: agents resend the
// same tools on every request.
var anthSchemas sync.Map // string → error (nil when valid)

type anthNoLoader struct{}

func (anthNoLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema references another document (%s)", url)
}

// anthCheckSchema compiles a schema as JSON Schema draft 2020-12, offline;
// canon is the schema's canonical form, the memo key.
// The API's rule is "must match draft 2020-12" whatever $schema says, so
// a draft-07 declaration is checked against 2020-12 (where, for example,
// an empty enum is allowed).
func anthCheckSchema(schema map[string]any, canon []byte) error {
	key := string(canon)
	if _, ok := schema["$schema"]; ok {
		copied := make(map[string]any, len(schema))
		for k, v := range schema {
			if k != "$schema" {
				copied[k] = v
			}
		}
		schema = copied
		key = string(canonical(schema))
	}
	if v, ok := anthSchemas.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(anthNoLoader{})
	c.UseRegexpEngine(ecma.Engine)
	err := c.AddResource(ecma.SchemaURL, schema)
	if err == nil {
		_, err = c.Compile(ecma.SchemaURL)
	}
	anthSchemas.Store(key, err)
	return err
}

// resolve returns the tool a reference names at the current position, or
// the tool_reference_unresolved error.
func (d *anthDecoder) resolve(path, name string) (*anthTool, *Error) {
	if t := d.known[name]; t != nil {
		return t, nil
	}
	return nil, &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: anthUnresolved,
		Message: fmt.Sprintf("%s: tool_reference '%s' does not match a tool in `tools` or a tool defined earlier in `messages`.", path, name)}
}

// offer makes a tool callable from now on; a tool of the same name is
// replaced in place. An MCP toolset is not a tool the model calls by its
// name and is not listed.
func (d *anthDecoder) offer(t *anthTool) {
	if t.kind == "mcp_toolset" {
		return
	}
	if i := slices.IndexFunc(d.avail, func(a *anthTool) bool { return a.name == t.name }); i >= 0 {
		d.avail[i] = t
		return
	}
	d.avail = append(d.avail, t)
}

// withdraw makes a tool uncallable from now on.
func (d *anthDecoder) withdraw(name string) {
	d.avail = slices.DeleteFunc(d.avail, func(a *anthTool) bool { return a.name == name })
}

// The error codes Anthropic reports in error.details.error_code. The
// Error type has no field for details; the codec carries them in Code,
// which Anthropic's errors otherwise leave empty, and writeError turns
// these codes (and only these) into details.
const (
	anthUnresolved   = "tool_reference_unresolved"
	anthNameConflict = "tool_name_conflict"
)

var anthDetailCodes = []string{anthUnresolved, anthNameConflict, "available_tools_limit_exceeded"}
