package cut

import "unicode/utf8"

// Before returns the largest index <= i at which s can be cut: the start
// of a rune, 0, or len(s) when i is past the end.
func Before(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return max(i, 0)
}

// After returns the smallest index >= i at which s can be cut: the start
// of a rune, or len(s).
func After(s string, i int) int {
	i = max(i, 0)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return min(i, len(s))
}
