package jsonscan

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// ScanString reads the string that starts at b[i] (a quote). It returns the
// index after its closing quote, whether its raw bytes are also its
// encoding by encoding/json's Marshal (plain: no escape, no byte Marshal
// escapes), and whether it is a valid string.
func ScanString(b []byte, i int) (end int, plain, ok bool) {
	plain = true
	i++
	for i < len(b) {
		// Most bytes of most strings are plain ASCII: pass over them in a
		// loop of one test each.
		for i < len(b) && plainByte[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
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

// plainByte is true for the bytes ScanString passes over without a second
// look: ASCII, neither a quote, a backslash, a control character nor one
// of the characters Marshal escapes for HTML.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// ScanNumber reads the number that starts at b[i]. It returns the index
// after it, whether its bytes are also its encoding by encoding/json's
// Marshal as a float64 (a small integer without a sign), and whether it
// is a valid number.
func ScanNumber(b []byte, i int) (end int, plain, ok bool) {
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

// ScanValue reads the value that starts at b[i] (after white space) and
// returns the index after it, or ok false when it is not valid JSON or
// nests deeper than depth.
func ScanValue(b []byte, i, depth int) (end int, ok bool) {
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
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == closing {
			return i + 1, true
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return 0, false
				}
				if i, _, ok = ScanString(b, i); !ok {
					return 0, false
				}
				if i = SkipSpace(b, i); i >= len(b) || b[i] != ':' {
					return 0, false
				}
				i = SkipSpace(b, i+1)
			}
			if i, ok = ScanValue(b, i, depth-1); !ok {
				return 0, false
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return 0, false
			}
			if b[i] == closing {
				return i + 1, true
			}
			if b[i] != ',' {
				return 0, false
			}
			i = SkipSpace(b, i+1)
		}
	case c == '"':
		end, _, ok = ScanString(b, i)
		return end, ok
	case c == '-' || (c >= '0' && c <= '9'):
		end, _, ok = ScanNumber(b, i)
		return end, ok
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(b[i:], []byte(lit)) {
			return i + len(lit), true
		}
	}
	return 0, false
}

// SkipValue returns the index after the value that starts at b[i], which
// ScanValue found valid.
func SkipValue(b []byte, i int) int {
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

// Member is one member of an object read by Members: its key (decoded) and
// its value's bytes.
type Member struct {
	Key        string
	Plain      bool // the key's raw bytes are its encoding
	Start, End int  // the value
}

// Members reads the members of the valid object that starts at b[i]. Keys
// are decoded; a key that cannot be (a lone surrogate escape) gives ok
// false.
func Members(b []byte, i int, into []Member) ([]Member, bool) {
	i = SkipSpace(b, i+1)
	if b[i] == '}' {
		return into, true
	}
	for {
		end, plain, _ := ScanString(b, i)
		key, ok := DecodeString(b[i:end], plain)
		if !ok {
			return into, false
		}
		i = SkipSpace(b, SkipSpace(b, end)+1)
		vend := SkipValue(b, i)
		into = append(into, Member{Key: key, Plain: plain, Start: i, End: vend})
		i = SkipSpace(b, vend)
		if b[i] == '}' {
			return into, true
		}
		i = SkipSpace(b, i+1)
	}
}

// DecodeString returns the value of a valid string's bytes (quotes
// included), or ok false for a lone surrogate escape, whose decoding the
// JSON decoders do not agree on.
func DecodeString(raw []byte, plain bool) (string, bool) {
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

// IsCompact reports whether b is one valid JSON value, nested at most
// depth deep, with no white space outside its strings: bytes that
// encoding/json's Compact would leave as they are.
func IsCompact(b []byte, depth int) bool {
	end, ok := ScanValue(b, 0, depth)
	return ok && end == len(b) && !HasSpace(b)
}

// HasSpace reports whether the valid JSON value b holds white space
// outside its strings.
func HasSpace(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case ' ', '\t', '\n', '\r':
			return true
		}
	}
	return false
}
