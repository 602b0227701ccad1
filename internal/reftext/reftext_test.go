package reftext

import "testing"

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"queries": "query", "ies": "ies", "lies": "lie", // ies→y needs length > 4, s-removal > 3
		"searches": "search", "pushes": "push", "classes": "class", "boxes": "box", "fizzes": "fizz",
		"issues": "issue", "class": "class", "gas": "gas", "bus": "bus", "runs": "run",
		"go": "go", "s": "s",
	} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTrimJS checks the white space JavaScript trims and Go's TrimSpace
// does not agree on.
func TestTrimJS(t *testing.T) {
	for in, want := range map[string]string{
		" \t\n\v\f\r q \u00a0\u3000": "q",
		"\uFEFFq\u2028\u2029":        "q",             // the byte order mark and the line separators go
		"\u0085q\u0085":              "\u0085q\u0085", // NEL stays, as JavaScript keeps it
		"":                           "",
		" a b ":                      "a b",
	} {
		if got := TrimJS(in); got != want {
			t.Errorf("TrimJS(%q) = %q, want %q", in, got, want)
		}
	}
}
