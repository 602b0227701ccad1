package emulator

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// canonical returns compact JSON of v with sorted keys and the cache
// markers (cache_control, prompt_cache_breakpoint) removed, the form
// segments are compared in. It writes what encoding/json would write for
// the value without the markers, HTML characters unescaped, directly from
// the decoded tree: every request's tool definitions pass through here, so
// it does not copy the tree or go through reflection.
func canonical(v any) []byte {
	return appendCanonical(make([]byte, 0, 256), v)
}

// isCacheMarker reports whether an object key is a cache marker, which is
// not part of a cache key.
func isCacheMarker(k string) bool { return k == "cache_control" || k == "prompt_cache_breakpoint" }

func appendCanonical(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case string:
		return appendJSONString(b, x)
	case json.Number:
		if x == "" {
			return append(b, '0')
		}
		return append(b, x...)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if !isCacheMarker(k) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendCanonical(b, x[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, e)
		}
		return append(b, ']')
	}
	// Values built in code (numbers, typed maps) take encoding/json's path.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // only JSON-shaped values reach canonical
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json does
// with HTML escaping off: quotes, backslashes and control characters
// escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
