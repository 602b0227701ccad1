package mcpclient

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file reads JSON bytes strictly (RFC 8259, valid UTF-8) and writes a
// value as the SDK's decoding into maps and marshal's encoding would leave
// it (canonical): objects with their keys sorted and each key once (the
// last one read wins), strings and numbers in encoding/json's form. The
// reader refuses anything it is unsure of; its callers then leave the bytes
// to the SDK, which reads them as it always did.

// maxCanonicalDepth bounds the nesting canonical writes; a deeper schema is
// left to the SDK.
const maxCanonicalDepth = 200

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString reads the string that starts at b[i] (a quote). It returns the
// index after its closing quote, whether its raw bytes between the quotes
// are also its encoding by marshal (plain: no escape, no byte marshal
// escapes), and whether it is a valid string.
func scanString(b []byte, i int) (end int, plain, ok bool) {
	plain = true
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, plain, true
		case c < 0x20:
			return 0, false, false
		case c == '\\':
			plain = false
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, false, false
				}
				if _, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16); err != nil {
					return 0, false, false
				}
				i += 6
			default:
				return 0, false, false
			}
		case c == '<' || c == '>' || c == '&':
			plain = false
			i++
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				return 0, false, false
			}
			if r == '\u2028' || r == '\u2029' {
				plain = false
			}
			i += n
		}
	}
	return 0, false, false
}

// scanNumber reads the number that starts at b[i]. It returns the index
// after it, whether its bytes are also its encoding by marshal (a small
// integer without a sign), and whether it is a valid number.
func scanNumber(b []byte, i int) (end int, plain, ok bool) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0, false, false
	}
	integer := i
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	plain = integer == i && b[start] != '-' && i-start <= 15
	return i, plain, true
}

// scanValue reads the value that starts at b[i] (after white space) and
// returns the index after it, or ok false when it is not valid JSON or
// nests deeper than depth.
func scanValue(b []byte, i, depth int) (end int, ok bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth <= 0 {
			return 0, false
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closing {
			return i + 1, true
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return 0, false
				}
				if i, _, ok = scanString(b, i); !ok {
					return 0, false
				}
				if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
					return 0, false
				}
				i = skipSpace(b, i+1)
			}
			if i, ok = scanValue(b, i, depth-1); !ok {
				return 0, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return 0, false
			}
			if b[i] == closing {
				return i + 1, true
			}
			if b[i] != ',' {
				return 0, false
			}
			i = skipSpace(b, i+1)
		}
	case c == '"':
		end, _, ok = scanString(b, i)
		return end, ok
	case c == '-' || (c >= '0' && c <= '9'):
		end, _, ok = scanNumber(b, i)
		return end, ok
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(b[i:], []byte(lit)) {
			return i + len(lit), true
		}
	}
	return 0, false
}

// skipValue returns the index after the value that starts at b[i], which
// scanValue found valid.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '{', '[':
	case '"':
		return skipString(b, i)
	default:
		for i < len(b) && !isDelimiter(b[i]) {
			i++
		}
		return i
	}
	depth := 0
	for ; ; i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
}

// skipString returns the index after the valid string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; ; i++ {
		i += bytes.IndexByte(b[i:], '"')
		escapes := 0
		for p := i - 1; b[p] == '\\'; p-- {
			escapes++
		}
		if escapes%2 == 0 {
			return i + 1
		}
	}
}

// isDelimiter reports whether c ends a number or a literal.
func isDelimiter(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// member is one member of an object read by members: its key (decoded) and
// its value's bytes.
type member struct {
	key        string
	plain      bool // the key's raw bytes are its encoding
	start, end int  // the value
}

// members reads the members of the valid object that starts at b[i]. Keys
// are decoded; a key that cannot be (a lone surrogate escape) gives ok
// false.
func members(b []byte, i int, into []member) ([]member, bool) {
	i = skipSpace(b, i+1)
	if b[i] == '}' {
		return into, true
	}
	for {
		end, plain, _ := scanString(b, i)
		key, ok := decodeString(b[i:end], plain)
		if !ok {
			return into, false
		}
		i = skipSpace(b, skipSpace(b, end)+1)
		vend := skipValue(b, i)
		into = append(into, member{key: key, plain: plain, start: i, end: vend})
		i = skipSpace(b, vend)
		if b[i] == '}' {
			return into, true
		}
		i = skipSpace(b, i+1)
	}
}

// decodeString returns the value of a valid string's bytes (quotes
// included), or ok false for a lone surrogate escape, whose decoding the
// SDK's reader and encoding/json may not agree on.
func decodeString(raw []byte, plain bool) (string, bool) {
	if plain {
		return string(raw[1 : len(raw)-1]), true
	}
	out := make([]byte, 0, len(raw))
	for i := 1; i < len(raw)-1; {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
			if r >= 0xd800 && r < 0xe000 {
				return "", false
			}
			out = utf8.AppendRune(out, rune(r))
			i += 6
			continue
		default: // '"', '\\', '/'
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return string(out), true
}

// appendString appends s encoded as marshal encodes a string: HTML-safe,
// with U+2028 and U+2029 escaped. s is valid UTF-8.
func appendString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == '\u2028' || r == '\u2029' {
				out = append(out, `\u202`...)
				out = append(out, hex[r&0xf])
			} else {
				out = append(out, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\n':
			out = append(out, `\n`...)
		case c == '\r':
			out = append(out, `\r`...)
		case c == '\t':
			out = append(out, `\t`...)
		case c == '\b':
			out = append(out, `\b`...)
		case c == '\f':
			out = append(out, `\f`...)
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			out = append(out, c)
		}
		i++
	}
	return append(out, '"')
}

// span is one member of an object appendCanonical writes: its key
// (decoded; of b when plain) and its value's canonical bytes in out.
type span struct {
	key        []byte
	plain      bool
	start, end int
}

// canonicalWriter holds what appendCanonical reuses: a stack of the
// members of the objects it is in, and a buffer to put an object's members
// in order.
type canonicalWriter struct {
	spans   []span
	scratch []byte
}

// appendCanonical appends the canonical form of the valid value at b[i]
// and returns the index after it; ok is false when the value nests deeper
// than depth, holds a number outside float64's range or a lone surrogate
// escape. An object's member values are written in the order read, then
// put in key order with their keys.
func (w *canonicalWriter) appendCanonical(out, b []byte, i, depth int) (_ []byte, end int, ok bool) {
	switch c := b[i]; {
	case c == '{':
		if depth <= 0 {
			return out, 0, false
		}
		start, base := len(out), len(w.spans)
		j := skipSpace(b, i+1)
		if b[j] != '}' {
			for {
				kend, plain, _ := scanString(b, j)
				key := b[j+1 : kend-1]
				if !plain {
					k, ok := decodeString(b[j:kend], false)
					if !ok {
						return out, 0, false
					}
					key = []byte(k)
				}
				j = skipSpace(b, skipSpace(b, kend)+1)
				vstart := len(out)
				if out, j, ok = w.appendCanonical(out, b, j, depth-1); !ok {
					return out, 0, false
				}
				w.spans = append(w.spans, span{key: key, plain: plain, start: vstart, end: len(out)})
				if j = skipSpace(b, j); b[j] == '}' {
					break
				}
				j = skipSpace(b, j+1)
			}
		}
		ms := w.spans[base:]
		// Of equal keys the last read wins: a stable sort keeps them in
		// the order read.
		slices.SortStableFunc(ms, func(x, y span) int { return bytes.Compare(x.key, y.key) })
		w.scratch = append(w.scratch[:0], out[start:]...)
		out = append(out[:start], '{')
		first := true
		for k, m := range ms {
			if k+1 < len(ms) && bytes.Equal(ms[k+1].key, m.key) {
				continue
			}
			if !first {
				out = append(out, ',')
			}
			first = false
			if m.plain {
				out = append(out, '"')
				out = append(out, m.key...)
				out = append(out, '"')
			} else {
				out = appendString(out, string(m.key))
			}
			out = append(out, ':')
			out = append(out, w.scratch[m.start-start:m.end-start]...)
		}
		w.spans = w.spans[:base]
		return append(out, '}'), j + 1, true
	case c == '[':
		if depth <= 0 {
			return out, 0, false
		}
		out = append(out, '[')
		j := skipSpace(b, i+1)
		for n := 0; b[j] != ']'; n++ {
			if n > 0 {
				out = append(out, ',')
			}
			if out, j, ok = w.appendCanonical(out, b, j, depth-1); !ok {
				return out, 0, false
			}
			if j = skipSpace(b, j); b[j] == ',' {
				j = skipSpace(b, j+1)
			}
		}
		return append(out, ']'), j + 1, true
	case c == '"':
		end, plain, _ := scanString(b, i)
		if plain {
			return append(out, b[i:end]...), end, true
		}
		s, ok := decodeString(b[i:end], false)
		if !ok {
			return out, 0, false
		}
		return appendString(out, s), end, true
	case c == '-' || (c >= '0' && c <= '9'):
		end, plain, _ := scanNumber(b, i)
		if plain {
			return append(out, b[i:end]...), end, true
		}
		f, err := strconv.ParseFloat(string(b[i:end]), 64)
		if err != nil {
			return out, 0, false
		}
		return appendFloat(out, f), end, true
	case c == 'f':
		return append(out, "false"...), i + 5, true
	}
	return append(out, b[i:i+4]...), i + 4, true // true, null
}

// appendFloat appends f as encoding/json encodes a float64.
func appendFloat(out []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	out = strconv.AppendFloat(out, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 becomes 1e-7.
		if n := len(out); n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out
}

// canonical returns the canonical form of one JSON value, or ok false when
// it is not valid or appendCanonical refuses it.
func canonical(b []byte) ([]byte, bool) {
	i := skipSpace(b, 0)
	end, ok := scanValue(b, i, maxCanonicalDepth)
	if !ok || skipSpace(b, end) != len(b) {
		return nil, false
	}
	return canonicalValid(b[i:end])
}

// canonicalValid is canonical for a value scanValue found valid, with no
// white space around it.
func canonicalValid(b []byte) ([]byte, bool) {
	var w canonicalWriter
	out, _, ok := w.appendCanonical(make([]byte, 0, len(b)), b, 0, maxCanonicalDepth)
	return out, ok
}
