package standin

import (
	"encoding/json"
	"strings"
)

// ExampleArguments returns arguments that satisfy a tool's JSON Schema,
// for responders that call tools: every required property with a plausible value
// (an enum's first value, a const, a default, a value of the right type
// and format), optional ones left out. It follows local $refs and takes
// the first branch of anyOf and oneOf.
func ExampleArguments(schema json.RawMessage) json.RawMessage {
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return json.RawMessage(`{}`)
	}
	v := example(root, root, 0)
	obj, ok := v.(map[string]any)
	if !ok {
		obj = map[string]any{}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

func example(s, root map[string]any, depth int) any {
	if depth > 12 || s == nil {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		if target := resolveRef(ref, root); target != nil {
			return example(target, root, depth+1)
		}
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if d, ok := s["default"]; ok {
		return d
	}
	if e, ok := s["examples"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if branches, ok := s[k].([]any); ok {
			for _, b := range branches {
				if bm, ok := b.(map[string]any); ok {
					if bm["type"] == "null" {
						continue
					}
					if v := example(merge(s, bm, k), root, depth+1); v != nil {
						return v
					}
				}
			}
		}
	}
	typ := schemaType(s)
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			name, ok := r.(string)
			if !ok {
				continue
			}
			ps, _ := props[name].(map[string]any)
			if ps == nil {
				out[name] = "example"
				continue
			}
			if v := example(ps, root, depth+1); v != nil {
				out[name] = v
			}
		}
		return out
	case "array":
		items, _ := s["items"].(map[string]any)
		n := 0
		if m, ok := s["minItems"].(float64); ok {
			n = int(m)
		}
		out := make([]any, 0, n)
		for range n {
			out = append(out, example(items, root, depth+1))
		}
		return out
	case "integer", "number":
		v := 1.0
		if m, ok := s["minimum"].(float64); ok && m > v {
			v = m
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok && m >= v {
			v = m + 1
		}
		if m, ok := s["maximum"].(float64); ok && m < v {
			v = m
		}
		return v
	case "boolean":
		return true
	case "null":
		return nil
	}
	return exampleString(s)
}

// merge returns a branch of a combinator with the parent's other keys, so
// a branch without a type inherits it.
func merge(parent, branch map[string]any, combinator string) map[string]any {
	out := map[string]any{}
	for k, v := range parent {
		if k != combinator && k != "anyOf" && k != "oneOf" && k != "allOf" {
			out[k] = v
		}
	}
	for k, v := range branch {
		out[k] = v
	}
	return out
}

func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok && str != "null" {
				return str
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	if _, ok := s["items"]; ok {
		return "array"
	}
	return "string"
}

func exampleString(s map[string]any) string {
	v := "example"
	switch s["format"] {
	case "date-time":
		v = "2026-11-30T12:00:00Z"
	case "date":
		v = "2026-11-30"
	case "email":
		v = "dev@example.com"
	case "uri", "url":
		v = "https://example.com/"
	case "uuid":
		v = "123e4567-e89b-12d3-a456-426614174000"
	}
	if m, ok := s["minLength"].(float64); ok && len(v) < int(m) {
		v += strings.Repeat("x", int(m)-len(v))
	}
	if m, ok := s["maxLength"].(float64); ok && int(m) < len(v) && m > 0 {
		v = v[:int(m)]
	}
	return v
}

// resolveRef follows a local reference such as #/$defs/Name or
// #/definitions/Name.
func resolveRef(ref string, root map[string]any) map[string]any {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	var cur any = root
	for _, p := range strings.Split(path, "/") {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	m, _ := cur.(map[string]any)
	return m
}
