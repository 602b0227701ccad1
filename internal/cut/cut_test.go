package cut

import (
	"testing"
	"unicode/utf8"
)

func TestCutsKeepWholeRunes(t *testing.T) {
	s := "aü中😀b" // 1, 2, 3, 4 and 1 bytes
	for i := -1; i <= len(s)+1; i++ {
		b, a := Before(s, i), After(s, i)
		if !utf8.ValidString(s[:b]) || !utf8.ValidString(s[b:]) || !utf8.ValidString(s[:a]) || !utf8.ValidString(s[a:]) {
			t.Errorf("i=%d: Before %d, After %d split a rune", i, b, a)
		}
		if i >= 0 && i <= len(s) && (b > i || a < i) {
			t.Errorf("i=%d: Before %d, After %d on the wrong side", i, b, a)
		}
	}
	if got := Before(s, 4); got != 3 {
		t.Errorf("Before(4) = %d, want 3 (the start of 中)", got)
	}
	if got := After(s, 4); got != 6 {
		t.Errorf("After(4) = %d, want 6 (the start of 😀)", got)
	}
}
