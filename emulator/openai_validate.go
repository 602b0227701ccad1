package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file holds what both OpenAI codecs use to validate a request body
// the way the API does: a JSON tree decoded with json.Number, walked with
// the path of every value (tools[1].function.name, input[4].content[0]),
// the first problem becoming the API's 400 with its message, code and
// param.

// oaiParse decodes a request body into a JSON object. Anything else
// (malformed JSON, trailing data, an array) is the API's parse error.
func oaiParse(body []byte) (map[string]any, *Error) {
	v, err := parseBody(body)
	m, ok := v.(map[string]any)
	if err == nil && !ok {
		err = fmt.Errorf("the body is %s, not an object", oaiTypeName(v))
	}
	if err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Type: "invalid_request_error",
			Message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. " +
				"The OpenAI API expects a JSON payload, but what was sent was not valid JSON: " + err.Error() + ".)"}
	}
	return m, nil
}

// oaiInvalid returns a 400 invalid_request_error.
func oaiInvalid(param, code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Code: code,
		Message: fmt.Sprintf(format, args...)}
}

func oaiUnknown(path string) *Error {
	return oaiInvalid(path, "unknown_parameter", "Unknown parameter: '%s'.", path)
}

func oaiMissing(path string) *Error {
	return oaiInvalid(path, "missing_required_parameter", "Missing required parameter: '%s'.", path)
}

func oaiWrongType(path, want string, got any) *Error {
	return oaiInvalid(path, "invalid_type", "Invalid type for '%s': expected %s, but got %s instead.", path, want, oaiTypeName(got))
}

// oaiBadValue is the enum error: Invalid value: 'x'. Supported values
// are: 'a', 'b', and 'c'.
func oaiBadValue(path, got string, supported []string) *Error {
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = "'" + s + "'"
	}
	var list string
	switch len(q) {
	case 1:
		list = q[0]
	case 2:
		list = q[0] + " and " + q[1]
	default:
		list = strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
	}
	return oaiInvalid(path, "invalid_value", "Invalid value: '%s'. Supported values are: %s.", got, list)
}

// oaiTypeName names a JSON value's type the way the API's messages do.
func oaiTypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "an integer"
		}
		return "a decimal"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// oaiJoin and oaiIndex build JSON paths.
func oaiJoin(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func oaiIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// oaiCheck keeps the first validation error of a request; once it has
// one, the accessors return zero values and record nothing more.
type oaiCheck struct{ err *Error }

func (c *oaiCheck) fail(e *Error) {
	if c.err == nil {
		c.err = e
	}
}

func (c *oaiCheck) ok() bool { return c.err == nil }

// object returns the object at path, or a zero oaiObj after recording a
// type error.
func (c *oaiCheck) object(path string, v any) oaiObj {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(oaiWrongType(path, "an object", v))
		return oaiObj{c: c, path: path}
	}
	return oaiObj{c: c, path: path, m: m}
}

// oaiObj is a JSON object being validated, with its path.
type oaiObj struct {
	c    *oaiCheck
	path string
	m    map[string]any
}

// at returns the path of a key.
func (o oaiObj) at(key string) string { return oaiJoin(o.path, key) }

// has reports a key present with a non-null value.
func (o oaiObj) has(key string) bool { return o.m[key] != nil }

// get returns a key's value (nil when absent or null).
func (o oaiObj) get(key string) any { return o.m[key] }

// known records the first key (in sorted order) not among keys.
func (o oaiObj) known(keys ...string) {
	if o.m == nil || !o.c.ok() {
		return
	}
	var unknown []string
	for k := range o.m {
		if !slices.Contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		o.c.fail(oaiUnknown(o.at(unknown[0])))
	}
}

// require records the first missing (absent or null) key.
func (o oaiObj) require(keys ...string) {
	if o.m == nil || !o.c.ok() {
		return
	}
	for _, k := range keys {
		if !o.has(k) {
			o.c.fail(oaiMissing(o.at(k)))
			return
		}
	}
}

// str returns a string value ("" when absent).
func (o oaiObj) str(key string) string {
	v := o.get(key)
	if v == nil || !o.c.ok() {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		o.c.fail(oaiWrongType(o.at(key), "a string", v))
	}
	return s
}

// strMax returns a string value no longer than max characters.
func (o oaiObj) strMax(key string, max int) string {
	s := o.str(key)
	if n := len([]rune(s)); n > max && o.c.ok() {
		o.c.fail(oaiInvalid(o.at(key), "string_above_max_length",
			"Invalid '%s': string too long. Expected a string with maximum length %d, but got a string with length %d instead.", o.at(key), max, n))
	}
	return s
}

// boolean returns a boolean value (false when absent).
func (o oaiObj) boolean(key string) bool {
	v := o.get(key)
	if v == nil || !o.c.ok() {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		o.c.fail(oaiWrongType(o.at(key), "a boolean", v))
	}
	return b
}

// integer returns an integer value of at least min (0 when absent).
func (o oaiObj) integer(key string, min int64) int64 {
	v := o.get(key)
	if v == nil || !o.c.ok() {
		return 0
	}
	n, ok := v.(json.Number)
	i, err := n.Int64()
	if !ok || err != nil {
		o.c.fail(oaiWrongType(o.at(key), "an integer", v))
		return 0
	}
	if i < min {
		o.c.fail(oaiInvalid(o.at(key), "integer_below_min_value",
			"Invalid '%s': integer below minimum value. Expected a value >= %d, but got %d instead.", o.at(key), min, i))
	}
	return i
}

// number checks a number value in [lo, hi].
func (o oaiObj) number(key string, lo, hi float64) {
	v := o.get(key)
	if v == nil || !o.c.ok() {
		return
	}
	n, ok := v.(json.Number)
	f, err := n.Float64()
	if !ok || err != nil {
		o.c.fail(oaiWrongType(o.at(key), "a number", v))
		return
	}
	switch {
	case f < lo:
		o.c.fail(oaiInvalid(o.at(key), "decimal_below_min_value",
			"Invalid '%s': decimal below minimum value. Expected a value >= %s, but got %s instead.", o.at(key), formatNumber(lo), n))
	case f > hi:
		o.c.fail(oaiInvalid(o.at(key), "decimal_above_max_value",
			"Invalid '%s': decimal above maximum value. Expected a value <= %s, but got %s instead.", o.at(key), formatNumber(hi), n))
	}
}

// enum returns a string value that must be one of values ("" when
// absent).
func (o oaiObj) enum(key string, values ...string) string {
	s := o.str(key)
	if o.has(key) && o.c.ok() && !slices.Contains(values, s) {
		o.c.fail(oaiBadValue(o.at(key), s, values))
	}
	return s
}

// obj returns a nested object (a zero oaiObj when absent).
func (o oaiObj) obj(key string) oaiObj {
	v := o.get(key)
	if v == nil || !o.c.ok() {
		return oaiObj{c: o.c, path: o.at(key)}
	}
	return o.c.object(o.at(key), v)
}

// array returns an array value (nil when absent); min is its shortest
// allowed length.
func (o oaiObj) array(key string, min int) []any {
	v := o.get(key)
	if v == nil || !o.c.ok() {
		return nil
	}
	a, ok := v.([]any)
	if !ok {
		o.c.fail(oaiWrongType(o.at(key), "an array", v))
		return nil
	}
	if len(a) < min {
		if len(a) == 0 {
			o.c.fail(oaiInvalid(o.at(key), "empty_array",
				"Invalid '%s': empty array. Expected an array with minimum length %d, but got an empty array instead.", o.at(key), min))
		} else {
			o.c.fail(oaiInvalid(o.at(key), "array_below_min_length",
				"Invalid '%s': array too short. Expected an array with minimum length %d, but got an array with length %d instead.", o.at(key), min, len(a)))
		}
	}
	return a
}

// metadata checks a metadata object: at most 16 string values, keys up to
// 64 characters, values up to 512.
func (o oaiObj) metadata(key string) {
	m := o.obj(key)
	if m.m == nil || !o.c.ok() {
		return
	}
	if len(m.m) > 16 {
		o.c.fail(oaiInvalid(m.path, "object_above_max_properties",
			"Invalid '%s': too many properties. Expected an object with at most 16 properties, but got an object with %d properties instead.", m.path, len(m.m)))
		return
	}
	keys := make([]string, 0, len(m.m))
	for k := range m.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if n := len([]rune(k)); n > 64 {
			o.c.fail(oaiInvalid(m.path, "string_above_max_length",
				"Invalid '%s': metadata key '%s' is too long. Expected a key with maximum length 64, but got a key with length %d instead.", m.path, k, n))
			return
		}
		m.strMax(k, 512)
	}
}

// stringMap checks an object whose values are strings (client_metadata:
// the limits of metadata do not hold for it, as Codex sends longer
// values).
func (o oaiObj) stringMap(key string) {
	m := o.obj(key)
	if m.m == nil || !o.c.ok() {
		return
	}
	keys := make([]string, 0, len(m.m))
	for k := range m.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		m.str(k)
	}
}

// oaiNamePattern is the rule for function, namespace and tool names.
var oaiNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// toolName returns a tool name that must match ^[a-zA-Z0-9_-]{1,64}$.
func (o oaiObj) toolName(key string) string {
	s := o.str(key)
	if !o.c.ok() || !o.has(key) {
		return s
	}
	path := o.at(key)
	switch {
	case s == "":
		o.c.fail(oaiInvalid(path, "empty_string",
			"Invalid '%s': empty string. Expected a string with minimum length 1, but got an empty string instead.", path))
	case len(s) > 64:
		o.c.fail(oaiInvalid(path, "string_above_max_length",
			"Invalid '%s': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", path, len(s)))
	case !oaiNamePattern.MatchString(s):
		o.c.fail(oaiInvalid(path, "invalid_value",
			"Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", path))
	}
	return s
}

// oaiDuplicate is the error for a tool name used twice in one list.
func oaiDuplicate(path, name string) *Error {
	return oaiInvalid(path, "invalid_value", "Invalid '%s': duplicate tool name '%s'. Tool names must be unique within a tools list.", path, name)
}

// schema checks a function's parameters: a JSON Schema object whose root
// is an object schema; with strict, every object schema must set
// additionalProperties to false and list all its properties in required.
// It returns the parameters' canonical bytes (nil when absent).
func (o oaiObj) schema(key, function string, strict bool) json.RawMessage {
	v := o.get(key)
	if v == nil || !o.c.ok() {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		o.c.fail(oaiWrongType(o.at(key), "an object", v))
		return nil
	}
	if t, ok := m["type"]; ok && t != "object" {
		o.c.fail(oaiInvalid(o.at(key), "invalid_function_parameters",
			"Invalid schema for function '%s': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%v\"'.", function, t))
		return nil
	}
	if strict {
		if msg := oaiStrictSchema(m, nil); msg != "" {
			o.c.fail(oaiInvalid(o.at(key), "invalid_function_parameters", "Invalid schema for function '%s': %s", function, msg))
			return nil
		}
	}
	return canonical(m)
}

// oaiStrictSchema returns what makes a schema unfit for strict mode, or
// "": objects need additionalProperties false and every property
// required.
func oaiStrictSchema(s map[string]any, ctx []string) string {
	where := "In context=(" + oaiContext(ctx) + "), "
	props, hasProps := s["properties"].(map[string]any)
	if s["type"] == "object" || hasProps || (oaiTypeList(s["type"]) && slices.Contains(s["type"].([]any), any("object"))) {
		if ap, ok := s["additionalProperties"]; !ok || ap != false {
			return where + "'additionalProperties' is required to be supplied and to be false."
		}
		required, _ := s["required"].([]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.Contains(required, any(k)) {
				return where + "'required' is required to be supplied and to be an array including every key in properties. Missing '" + k + "'."
			}
		}
		for _, k := range keys {
			if sub, ok := props[k].(map[string]any); ok {
				if msg := oaiStrictSchema(sub, append(slices.Clone(ctx), "properties", k)); msg != "" {
					return msg
				}
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		if msg := oaiStrictSchema(items, append(slices.Clone(ctx), "items")); msg != "" {
			return msg
		}
	}
	for _, kw := range []string{"anyOf", "allOf"} {
		list, _ := s[kw].([]any)
		for i, sub := range list {
			if m, ok := sub.(map[string]any); ok {
				if msg := oaiStrictSchema(m, append(slices.Clone(ctx), kw, strconv.Itoa(i))); msg != "" {
					return msg
				}
			}
		}
	}
	for _, kw := range []string{"$defs", "definitions"} {
		defs, _ := s[kw].(map[string]any)
		names := make([]string, 0, len(defs))
		for k := range defs {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if m, ok := defs[k].(map[string]any); ok {
				if msg := oaiStrictSchema(m, append(slices.Clone(ctx), kw, k)); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

func oaiTypeList(v any) bool { _, ok := v.([]any); return ok }

func oaiContext(ctx []string) string {
	q := make([]string, len(ctx))
	for i, c := range ctx {
		q[i] = "'" + c + "'"
	}
	return strings.Join(q, ", ")
}

// oaiBreakpoint returns the TTL a prompt_cache_breakpoint asks for
// ({"mode":"explicit","ttl"?}), def when it names none, "" when absent.
func (o oaiObj) breakpoint(ttls []string, def TTL) TTL {
	b := o.obj("prompt_cache_breakpoint")
	if b.m == nil || !o.c.ok() {
		return ""
	}
	b.known("mode", "ttl")
	b.enum("mode", "explicit")
	ttl := b.enum("ttl", ttls...)
	if ttl == "" {
		return def
	}
	return TTL(ttl)
}

// oaiArguments returns a call's arguments string as JSON: the string
// itself when it is valid JSON, else the string as a JSON string.
func oaiArguments(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s) // strings always encode
	return b
}

// oaiImageText stands in for an image or file when tokens are counted:
// about 85 tokens, what a low-detail image costs.
var oaiImageText = strings.Repeat(" image", 85)

// oaiToolList is the tools callable at the end of a request: names in
// first-seen order, a later definition replacing an earlier one.
type oaiToolList struct {
	defs  []ToolDef
	index map[string]int
}

func (l *oaiToolList) add(t ToolDef) {
	if l.index == nil {
		l.index = map[string]int{}
	}
	if i, ok := l.index[t.Name]; ok {
		l.defs[i] = t
		return
	}
	l.index[t.Name] = len(l.defs)
	l.defs = append(l.defs, t)
}

func (l *oaiToolList) has(name string) bool { _, ok := l.index[name]; return ok }

// oaiMarks places cache breakpoints for the models with breakpoint
// caching: the explicit marks (at most the latest 3 in implicit mode, 4 in
// explicit mode) and, in implicit mode, one at the implicit position.
func oaiMarks(segs []Segment, explicit []int, implicitAt int, mode string, ttl TTL) {
	keep := 3
	if mode == "explicit" {
		keep = 4
	}
	for len(explicit) > keep {
		segs[explicit[0]].Breakpoint = ""
		explicit = explicit[1:]
	}
	if mode != "explicit" && implicitAt >= 0 && segs[implicitAt].Breakpoint == "" {
		segs[implicitAt].Breakpoint = ttl
	}
}

// oaiPromptCacheOptions reads prompt_cache_options {mode, ttl, prewarm,
// comparison_response_id} and returns the mode and the default TTL.
func (o oaiObj) promptCacheOptions(ttls []string) (mode string, ttl TTL) {
	p := o.obj("prompt_cache_options")
	ttl = "30m"
	if p.m == nil {
		return "implicit", ttl
	}
	p.known("mode", "ttl", "prewarm", "comparison_response_id")
	mode = p.enum("mode", "implicit", "explicit")
	if t := p.enum("ttl", ttls...); t != "" {
		ttl = TTL(t)
	}
	p.boolean("prewarm")
	p.str("comparison_response_id")
	if mode == "" {
		mode = "implicit"
	}
	return mode, ttl
}
