package lint

import (
	"bytes"
	"encoding/json"
	"strings"
)

// member is one name/value pair of a JSON object, its value kept as the
// bytes it was read from.
type member struct {
	key string
	val json.RawMessage
}

// parseObject returns the members of a JSON object in their order; ok is
// false when raw is not an object. Duplicate names are kept.
func parseObject(raw json.RawMessage) (ms []member, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, isKey := tok.(string)
		var val json.RawMessage
		if !isKey || dec.Decode(&val) != nil {
			return nil, false
		}
		ms = append(ms, member{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	return ms, true
}

// parseArray returns the elements of a JSON array; ok is false when raw is
// not an array.
func parseArray(raw json.RawMessage) (elems []json.RawMessage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, false
	}
	return elems, true
}

// lookup returns the value of the last member named key, as a JSON
// decoder would.
func lookup(ms []member, key string) (json.RawMessage, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			return ms[i].val, true
		}
	}
	return nil, false
}

// lookupString returns the string value of key.
func lookupString(ms []member, key string) (string, bool) {
	raw, ok := lookup(ms, key)
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// marshalString encodes s as a JSON string without escaping HTML
// characters, which would cost tokens for nothing.
func marshalString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// encodeObject writes members as a compact JSON object.
func encodeObject(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalString(m.key))
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// encodeArray writes elements as a compact JSON array.
func encodeArray(elems []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// Keywords whose values are schemas, by shape.
var (
	// schemaMapKeywords map names to schemas.
	schemaMapKeywords = map[string]bool{"properties": true, "patternProperties": true, "$defs": true,
		"definitions": true, "dependentSchemas": true}
	// schemaKeywords hold one schema (items may hold an array of them in
	// older drafts).
	schemaKeywords = map[string]bool{"items": true, "additionalProperties": true, "additionalItems": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contains": true, "propertyNames": true,
		"not": true, "if": true, "then": true, "else": true}
	// schemaListKeywords hold arrays of schemas.
	schemaListKeywords = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
)

// childPath returns the path of a subschema reached through keyword (and
// name, for the maps).
func childPath(path, keyword, name string) string {
	join := func(a, b string) string {
		if a == "" {
			return b
		}
		return a + "." + b
	}
	switch keyword {
	case "properties":
		return join(path, name)
	case "items", "prefixItems", "additionalItems", "unevaluatedItems", "contains":
		if path == "" {
			return "[]"
		}
		return path + "[]"
	case "$defs", "definitions":
		return join(path, keyword+"."+name)
	case "patternProperties", "dependentSchemas":
		return join(path, keyword+"."+name)
	}
	return path
}

// pointerPath turns a JSON pointer to a schema into a [Finding.Path].
func pointerPath(ptr string) string {
	if ptr == "" {
		return ""
	}
	tokens := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	path := ""
	for i := 0; i < len(tokens); i++ {
		kw := tokens[i]
		switch {
		case schemaMapKeywords[kw] && i+1 < len(tokens):
			path = childPath(path, kw, tokens[i+1])
			i++
		case schemaListKeywords[kw] || kw == "items":
			path = childPath(path, kw, "")
			if i+1 < len(tokens) && strings.Trim(tokens[i+1], "0123456789") == "" {
				i++
			}
		default:
			path = childPath(path, kw, "")
		}
	}
	return path
}
