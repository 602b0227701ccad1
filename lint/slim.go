package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
)

// Slimmed is a tool's parameter schema after [Slim].
type Slimmed struct {
	// Server and Tool name the tool as its server does; both empty for a
	// tool without an origin.
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// Name is the model-facing name.
	Name string `json:"name"`
	// Schema is the slimmed parameter schema, compact JSON with the
	// original key order.
	Schema json.RawMessage `json:"schema"`
	// Before and After are the o200k tokens of the whole declaration
	// (name, description, parameters) with the original and the slimmed
	// schema.
	Before int `json:"before"`
	After  int `json:"after"`
	// Changes list what was removed; empty when the schema was kept.
	Changes []Change `json:"changes"`
}

// Change is one removal made by [Slim].
type Change struct {
	// Rule is the id of the rule the removal answers.
	Rule string `json:"rule"`
	// Path locates the schema that changed (see [Finding.Path]).
	Path string `json:"path,omitempty"`
	// Removed is what was removed.
	Removed string `json:"removed"`
}

// Slim returns t's parameter schema with what costs tokens and tells the
// model nothing removed, and the tokens of t's declaration before and
// after, counted by [tokens.Default]:
//
//   - a property's title or description that restates its name (rule
//     param-restates-name);
//   - examples and example, wherever a schema may hold them (rule
//     examples);
//   - a default stated in a property's description, as a parenthesis
//     ("(default: 10)"), a trailing clause (", defaults to 10.") or a last
//     sentence ("Default: 10."), when the schema's default keyword holds
//     the same value (rule default-in-prose).
//
// Everything else is kept byte for byte: types, enum, required, formats,
// patterns, defaults and every other keyword, the key order, and the
// subschemas more than 32 levels deep, which it does not visit. The
// result validates exactly the arguments the original did. Slim never
// returns more tokens than it was given: a rewrite that would cost more
// (which only odd escapes could cause) is dropped.
//
// An error means the schema is not JSON. A schema that is JSON but not an
// object is returned unchanged.
func Slim(t tool.Tool) (*Slimmed, error) {
	c, err := tokens.Default()
	if err != nil {
		return nil, err
	}
	return slimTool(t, c)
}

func slimTool(t tool.Tool, c *tokens.Counter) (*Slimmed, error) {
	params := t.Parameters
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{}`)
	}
	if !json.Valid(params) {
		return nil, fmt.Errorf("slimming %s: the parameter schema is not valid JSON", t.Name)
	}
	short := t.Origin.Tool
	if short == "" {
		short = t.Name
	}
	s := &slimmer{toolName: short}
	out := s.schema(params, "", "", 0)
	count := func(p json.RawMessage) int {
		return c.Tool(llm.Tool{Name: t.Name, Description: t.Description, Parameters: p})
	}
	res := &Slimmed{Server: t.Origin.Server, Tool: t.Origin.Tool, Name: t.Name, Schema: compact(params),
		Changes: []Change{}}
	res.Before = count(params)
	res.After = res.Before
	if len(s.changes) > 0 {
		out = compact(out)
		if after := count(out); after < res.Before {
			res.Schema, res.After, res.Changes = out, after, s.changes
		}
	}
	return res, nil
}

// slimmer rewrites one schema and records what it removed.
type slimmer struct {
	toolName string
	changes  []Change
}

// schema returns raw slimmed, or raw itself when nothing changed. name is
// the property's name when raw is a property's schema; depth counts the
// schema levels above raw, and raw is kept as it is from maxSchemaDepth.
func (s *slimmer) schema(raw json.RawMessage, path, name string, depth int) json.RawMessage {
	if depth >= maxSchemaDepth {
		return raw
	}
	ms, ok := parseObject(raw)
	if !ok {
		return raw
	}
	changed := false
	out := make([]member, 0, len(ms))
	for _, m := range ms {
		switch {
		case m.key == "examples" || m.key == "example":
			s.changes = append(s.changes, Change{Rule: RuleExamples, Path: path, Removed: m.key})
			changed = true
			continue
		case schemaMapKeywords[m.key]:
			if v, ok := s.schemaMap(m.val, path, m.key, depth+1); ok {
				m.val, changed = v, true
			}
		case schemaKeywords[m.key]:
			if elems, isList := parseArray(m.val); isList && m.key == "items" {
				if v, ok := s.schemaList(elems, childPath(path, m.key, ""), depth+1); ok {
					m.val, changed = v, true
				}
			} else if v := s.schema(m.val, childPath(path, m.key, ""), "", depth+1); !bytes.Equal(v, m.val) {
				m.val, changed = v, true
			}
		case schemaListKeywords[m.key]:
			if elems, isList := parseArray(m.val); isList {
				if v, ok := s.schemaList(elems, childPath(path, m.key, ""), depth+1); ok {
					m.val, changed = v, true
				}
			}
		}
		out = append(out, m)
	}
	if name != "" {
		if o, ok := s.property(out, path, name); ok {
			out, changed = o, true
		}
	}
	if !changed {
		return raw
	}
	return encodeObject(out)
}

// schemaMap slims every schema of a keyword that maps names to schemas.
func (s *slimmer) schemaMap(raw json.RawMessage, path, keyword string, depth int) (json.RawMessage, bool) {
	sub, ok := parseObject(raw)
	if !ok {
		return nil, false
	}
	changed := false
	for i, m := range sub {
		name := ""
		if keyword == "properties" {
			name = m.key
		}
		if v := s.schema(m.val, childPath(path, keyword, m.key), name, depth); !bytes.Equal(v, m.val) {
			sub[i].val, changed = v, true
		}
	}
	if !changed {
		return nil, false
	}
	return encodeObject(sub), true
}

// schemaList slims an array of schemas.
func (s *slimmer) schemaList(elems []json.RawMessage, path string, depth int) (json.RawMessage, bool) {
	changed := false
	for i, e := range elems {
		if v := s.schema(e, path, "", depth); !bytes.Equal(v, e) {
			elems[i], changed = v, true
		}
	}
	if !changed {
		return nil, false
	}
	return encodeArray(elems), true
}

// property slims a property's annotations: a title or description that
// restates the name is removed, a default repeated in the description is
// cut.
func (s *slimmer) property(ms []member, path, name string) ([]member, bool) {
	changed := false
	for _, key := range []string{"title", "description"} {
		text, ok := lookupString(ms, key)
		if !ok || !restatesName(name, s.toolName, text) {
			continue
		}
		s.changes = append(s.changes, Change{Rule: RuleParamRestatesName, Path: path,
			Removed: fmt.Sprintf("%s %q", key, text)})
		ms, changed = without(ms, key), true
	}
	desc, ok := lookupString(ms, "description")
	if !ok {
		return ms, changed
	}
	def, ok := lookup(ms, "default")
	if !ok {
		return ms, changed
	}
	cut, phrase, value, ok := cutDefault(desc)
	if !ok || !sameDefault(value, def) {
		return ms, changed
	}
	s.changes = append(s.changes, Change{Rule: RuleDefaultInProse, Path: path,
		Removed: fmt.Sprintf("%q from the description", strings.TrimSpace(phrase))})
	if strings.TrimSpace(cut) == "" {
		return without(ms, "description"), true
	}
	out := make([]member, len(ms))
	copy(out, ms)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].key == "description" {
			out[i].val = marshalString(strings.TrimSpace(cut))
			break
		}
	}
	return out, true
}

// without returns ms without the members named key.
func without(ms []member, key string) []member {
	out := make([]member, 0, len(ms))
	for _, m := range ms {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}
