package safetext

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain text, tabs\tand\nnewlines\n", "plain text, tabs\tand\nnewlines\n"},
		{"日本語のテキスト 한국어 中文", "日本語のテキスト 한국어 中文"},
		{"emoji 🙂 👩‍👩‍👧 🇫🇷 é", "emoji 🙂 👩‍👩‍👧 🇫🇷 é"},
		{"windows\r\nline endings\r\n", "windows\r\nline endings\r\n"},
		{"\x1b[2Jclear", `\x1b[2Jclear`},
		{"bell\a", `bell\a`},
		{"over\rwrite", `over\rwrite`},
		{"ends in CR\r", `ends in CR\r`},
		{"CR CR LF\r\r\n", "CR CR LF\\r\r\n"},
		{"\x00\x01\b\v\f\x7f", `\x00\x01\b\v\f\x7f`},
		{"title \x1b]0;owned\a", `title \x1b]0;owned\a`},
		{"C1 CSI \u009b31m and NEL \u0085", `C1 CSI \u009b31m and NEL \u0085`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"\u202a\u202b\u202c\u202d \u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d \u2066\u2067\u2068\u2069`},
		{"marks \u200e\u200f\u061c", `marks \u200e\u200f\u061c`},
		{"separators \u2028\u2029", `separators \u2028\u2029`},
		{"invalid \xff\xfe bytes", `invalid \xff\xfe bytes`},
		{"cut rune \xe6\x97", `cut rune \xe6\x97`},
		{"overlong \xc0\xaf", `overlong \xc0\xaf`},
		{"U+FFFD itself \ufffd stays", "U+FFFD itself \ufffd stays"},
		{`a backslash \x1b stays`, `a backslash \x1b stays`},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// unsafeIn reports the first character of s a terminal could act on.
func unsafeIn(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return "invalid UTF-8", true
	}
	for i, r := range s {
		switch {
		case r == '\r' && !strings.HasPrefix(s[i:], "\r\n"):
			return "lone CR", true
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f, unsafeRune(r):
			return string(r), true
		}
	}
	return "", false
}

func TestStringSafeInputUnchanged(t *testing.T) {
	s := "line one\r\nline two\n\ttab 日本 🙂"
	if got := String(s); got != s {
		t.Errorf("String changed safe text: %q", got)
	}
	if testing.AllocsPerRun(100, func() { _ = String(s) }) != 0 {
		t.Errorf("String allocates for text that needs no escape")
	}
}

func TestWriterJoinsPieces(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	// A CRLF and runes cut between pieces come out whole; a CR before
	// other text and a rune left unfinished at the end are escaped.
	for _, piece := range []string{"one\r", "\ntwo \xe6", "\x97\xa5", " \r", "x \xf0\x9f", "\x99\x82", " \x1b[2J", "\u202e\xe6\x97"} {
		if n, err := w.WriteString(piece); err != nil || n != len(piece) {
			t.Fatalf("Write(%q) = %d, %v", piece, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "one\r\ntwo 日 \\rx 🙂 \\x1b[2J\\u202e\\xe6\\x97"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestWriterMatchesString(t *testing.T) {
	in := "a\r\nb\rc\x1b[31m日本\u202e🙂\xff\r"
	for size := 1; size <= len(in); size++ {
		var out bytes.Buffer
		w := NewWriter(&out)
		for i := 0; i < len(in); i += size {
			w.WriteString(in[i:min(i+size, len(in))])
		}
		w.Flush()
		if out.String() != String(in) {
			t.Errorf("pieces of %d bytes: %q, want %q", size, out.String(), String(in))
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J\a\r\u202e", "a\r\nb", "\xff\xe6\x97", "👩‍👩‍👧"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		if what, bad := unsafeIn(got); bad {
			t.Fatalf("String(%q) = %q still holds %q", s, got, what)
		}
		if _, bad := unsafeIn(s); !bad && got != s {
			t.Fatalf("String(%q) = %q changed safe text", s, got)
		}
		// Streaming in two pieces gives the same text.
		for _, cut := range []int{len(s) / 2, len(s) / 3} {
			var out bytes.Buffer
			w := NewWriter(&out)
			w.WriteString(s[:cut])
			w.WriteString(s[cut:])
			w.Flush()
			if out.String() != got {
				t.Fatalf("Writer over %q cut at %d = %q, want %q", s, cut, out.String(), got)
			}
		}
	})
}
