package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// This file holds the generic JSON walk the Anthropic codec validates
// with: requests are decoded into maps (numbers kept as json.Number), so
// key order never matters and unknown keys can be reported with their
// dotted path, pydantic style, as the API does.

// anthInvalid returns a 400 invalid_request_error.
func anthInvalid(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// anthJoin appends path elements: "messages" + 3 + "content" is
// "messages.3.content".
func anthJoin(path string, elems ...any) string {
	var b strings.Builder
	b.WriteString(path)
	for _, e := range elems {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		fmt.Fprint(&b, e)
	}
	return b.String()
}

// anthObj is a JSON object and the dotted path it sits at.
type anthObj struct {
	path string
	m    map[string]any
}

// anthAsObj returns v as an object, or the pydantic error for a value that
// is not one.
func anthAsObj(path string, v any) (anthObj, *Error) {
	m, ok := v.(map[string]any)
	if !ok {
		return anthObj{}, anthInvalid("%s: Input should be a valid dictionary", anthLabel(path))
	}
	return anthObj{path: path, m: m}, nil
}

// anthLabel names the body itself when the path is empty.
func anthLabel(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// at returns the path of a key of the object.
func (o anthObj) at(key string) string { return anthJoin(o.path, key) }

// has reports a key that is present and not null (optional fields accept
// null as absent).
func (o anthObj) has(key string) bool { return o.m[key] != nil }

// extra rejects keys outside allowed: "<path>.<key>: Extra inputs are not
// permitted", the first such key in sorted order.
func (o anthObj) extra(allowed ...string) *Error {
	var extra []string
	for k := range o.m {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	return anthInvalid("%s: Extra inputs are not permitted", o.at(extra[0]))
}

// required returns a key's value, or "Field required".
func (o anthObj) required(key string) (any, *Error) {
	v, ok := o.m[key]
	if !ok {
		return nil, anthInvalid("%s: Field required", o.at(key))
	}
	return v, nil
}

// str returns a string field; ok is false when an optional one is absent.
func (o anthObj) str(key string, required bool) (s string, ok bool, e *Error) {
	v, present := o.m[key]
	if !present || (v == nil && !required) {
		if required {
			return "", false, anthInvalid("%s: Field required", o.at(key))
		}
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, anthInvalid("%s: Input should be a valid string", o.at(key))
	}
	return s, true, nil
}

// boolean returns an optional boolean field (false when absent).
func (o anthObj) boolean(key string) (bool, *Error) {
	v := o.m[key]
	if v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, anthInvalid("%s: Input should be a valid boolean", o.at(key))
	}
	return b, nil
}

// integer returns an integer field; ok is false when an optional one is
// absent.
func (o anthObj) integer(key string, required bool) (n int64, ok bool, e *Error) {
	v, present := o.m[key]
	if !present || (v == nil && !required) {
		if required {
			return 0, false, anthInvalid("%s: Field required", o.at(key))
		}
		return 0, false, nil
	}
	num, isNum := v.(json.Number)
	if !isNum {
		return 0, false, anthInvalid("%s: Input should be a valid integer", o.at(key))
	}
	if n, err := num.Int64(); err == nil {
		return n, true, nil
	}
	// 2.0 is an integer to pydantic; 2.5 is not.
	if f, err := num.Float64(); err == nil && f == float64(int64(f)) {
		return int64(f), true, nil
	}
	return 0, false, anthInvalid("%s: Input should be a valid integer, got a number with a fractional part", o.at(key))
}

// number checks an optional number field within [lo, hi].
func (o anthObj) number(key string, lo, hi float64) *Error {
	v := o.m[key]
	if v == nil {
		return nil
	}
	num, ok := v.(json.Number)
	if !ok {
		return anthInvalid("%s: Input should be a valid number", o.at(key))
	}
	f, err := num.Float64()
	if err != nil {
		return anthInvalid("%s: Input should be a valid number", o.at(key))
	}
	if f < lo {
		return anthInvalid("%s: Input should be greater than or equal to %s", o.at(key), formatNumber(lo))
	}
	if f > hi {
		return anthInvalid("%s: Input should be less than or equal to %s", o.at(key), formatNumber(hi))
	}
	return nil
}

// formatNumber writes a number as the APIs quote it in messages.
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// list returns an array field; ok is false when an optional one is absent.
func (o anthObj) list(key string, required bool) (l []any, ok bool, e *Error) {
	v, present := o.m[key]
	if !present || (v == nil && !required) {
		if required {
			return nil, false, anthInvalid("%s: Field required", o.at(key))
		}
		return nil, false, nil
	}
	l, isList := v.([]any)
	if !isList {
		return nil, false, anthInvalid("%s: Input should be a valid list", o.at(key))
	}
	return l, true, nil
}

// obj returns an object field; ok is false when an optional one is absent.
func (o anthObj) obj(key string, required bool) (sub anthObj, ok bool, e *Error) {
	v, present := o.m[key]
	if !present || (v == nil && !required) {
		if required {
			return anthObj{}, false, anthInvalid("%s: Field required", o.at(key))
		}
		return anthObj{}, false, nil
	}
	sub, e = anthAsObj(o.at(key), v)
	return sub, e == nil, e
}

// oneOf checks an optional string field against its literal values:
// "Input should be 'a', 'b' or 'c'".
func (o anthObj) oneOf(key string, required bool, values ...string) (string, *Error) {
	s, ok, e := o.str(key, required)
	if e != nil || !ok {
		return s, e
	}
	if !slices.Contains(values, s) {
		return "", anthInvalid("%s: Input should be %s", o.at(key), anthQuoteList(values, "or"))
	}
	return s, nil
}

// anthQuoteList renders 'a', 'b' or 'c'.
func anthQuoteList(values []string, conj string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + v + "'"
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}

// anthTag returns the discriminator of a tagged union member, with
// pydantic's errors for a missing or unknown tag.
func anthTag(o anthObj, key string, expected []string) (string, *Error) {
	v, ok := o.m[key].(string)
	if !ok {
		return "", anthInvalid("%s: Unable to extract tag using discriminator '%s'", anthLabel(o.path), key)
	}
	if !slices.Contains(expected, v) {
		return "", anthTagMismatch(o.path, key, v, expected)
	}
	return v, nil
}

func anthTagMismatch(path, key, tag string, expected []string) *Error {
	q := make([]string, len(expected))
	for i, e := range expected {
		q[i] = "'" + e + "'"
	}
	return anthInvalid("%s: Input tag '%s' found using '%s' does not match any of the expected tags: %s",
		anthLabel(path), tag, key, strings.Join(q, ", "))
}

// withoutKeys returns a shallow copy of m without the keys.
func withoutKeys(m map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}
