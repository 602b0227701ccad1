package safetext

import (
	"io"
	"unicode/utf8"
)

// String returns s with every unsafe character made visible. It returns s
// itself when nothing needs escaping.
func String(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	return string(appendSafe(b, s[i:]))
}

// firstUnsafe returns the index of the first byte of s that needs an
// escape, or len(s).
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeASCII(c) && (c != '\r' || i+1 >= len(s) || s[i+1] != '\n') {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// appendSafe appends s to b with every unsafe character escaped.
func appendSafe(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
				b = append(b, '\r', '\n')
				i += 2
				continue
			case unsafeASCII(c):
				b = appendByteEscape(b, c)
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = appendByteEscape(b, c)
		case unsafeRune(r):
			b = appendRuneEscape(b, r)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// unsafeASCII reports whether an ASCII byte is a control other than tab
// and newline (a carriage return included: the caller keeps CRLF).
func unsafeASCII(c byte) bool {
	return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f
}

// unsafeRune reports whether a non-ASCII rune is a C1 control, a
// bidirectional control, an invisible direction mark or a line or
// paragraph separator.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

func appendByteEscape(b []byte, c byte) []byte {
	switch c {
	case '\a':
		return append(b, `\a`...)
	case '\b':
		return append(b, `\b`...)
	case '\v':
		return append(b, `\v`...)
	case '\f':
		return append(b, `\f`...)
	case '\r':
		return append(b, `\r`...)
	}
	return append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

func appendRuneEscape(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// Writer writes text made safe by [String] to an underlying writer, for
// text that arrives in pieces (a model's streamed answer): a carriage
// return at the end of a piece, and the start of a rune cut between two
// pieces, are held until the next piece shows what they are. Flush writes
// what is held.
type Writer struct {
	w    io.Writer
	held []byte
	buf  []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p made safe, holding back an incomplete end. It returns
// len(p) unless the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	data := append(w.held, p...)
	keep := incompleteTail(data)
	w.buf = appendSafe(w.buf[:0], string(data[:len(data)-keep]))
	w.held = append(w.held[:0:0], data[len(data)-keep:]...)
	if len(w.buf) == 0 {
		return len(p), nil
	}
	if _, err := w.w.Write(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (w *Writer) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Flush writes what is held, escaped as it stands: a lone carriage return,
// or the bytes of an unfinished rune.
func (w *Writer) Flush() error {
	if len(w.held) == 0 {
		return nil
	}
	w.buf = appendSafe(w.buf[:0], string(w.held))
	w.held = w.held[:0]
	_, err := w.w.Write(w.buf)
	return err
}

// incompleteTail returns how many bytes at the end of data may belong
// with what comes next: a final carriage return, or the start of a rune
// that is not complete yet.
func incompleteTail(data []byte) int {
	n := len(data)
	if n == 0 {
		return 0
	}
	if data[n-1] == '\r' {
		return 1
	}
	for k := 1; k <= utf8.UTFMax-1 && k <= n; k++ {
		c := data[n-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(data[n-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}
