package reftext

import (
	"strings"
	"unicode"
)

// Stem is the reference's light plural stemmer: ies→y and the
// ches/shes/sses/xes/zes endings lose "es" on words longer than four
// letters; otherwise a final s (not ss) is dropped from words longer than
// three.
func Stem(tok string) string {
	n := len(tok)
	switch {
	case n > 4 && strings.HasSuffix(tok, "ies"):
		return tok[:n-3] + "y"
	case n > 4 && (strings.HasSuffix(tok, "ches") || strings.HasSuffix(tok, "shes") ||
		strings.HasSuffix(tok, "sses") || strings.HasSuffix(tok, "xes") || strings.HasSuffix(tok, "zes")):
		return tok[:n-2]
	case n > 3 && strings.HasSuffix(tok, "s") && !strings.HasSuffix(tok, "ss"):
		return tok[:n-1]
	}
	return tok
}

// TrimJS removes the white space JavaScript's String.prototype.trim
// removes: Unicode space separators, tab, line feed, vertical tab, form
// feed, carriage return, the line and paragraph separators and the byte
// order mark. (Go's strings.TrimSpace also removes U+0085 and keeps U+FEFF.)
func TrimJS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', '\u2028', '\u2029', '\uFEFF':
			return true
		}
		return unicode.Is(unicode.Zs, r)
	})
}
