package jsonscan

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// cases are JSON texts, valid and not, that exercise the grammar.
var cases = []string{
	`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, ` { "a" : [ 1 , 2 ] } `, `"s"`, `-0.5e+10`, `0`,
	`{"a":"\"\\\/\b\f\n\r\t\u00e9"}`, `{"\u0061":1,"a":2}`, `"é 😀"`, `"\ud800"`, `"<&>"`, "\"\u2028\"",
	`{"a":}`, `{"a" 1}`, `[1,]`, `{"a":01}`, `"\x"`, "\"\x01\"", "\"\xff\"", `{"a":1}x`, `[1.]`, `[.5]`, `[1e]`,
	`nul`, `tru`, `-`, `{"a":1,}`, `{,}`, `[`, `{"a"`, `"\u12"`, `+1`, `1e+`, `{1:2}`,
	strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65),
}

// TestScanValueIsValid: ScanValue accepts a whole text exactly when
// encoding/json finds it valid and it is valid UTF-8, and SkipValue finds
// the same end.
func TestScanValueIsValid(t *testing.T) {
	for _, c := range cases {
		checkScan(t, []byte(c))
	}
}

// FuzzScanValue is TestScanValueIsValid's check on any input.
func FuzzScanValue(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkScan)
}

func checkScan(t *testing.T, b []byte) {
	i := SkipSpace(b, 0)
	end, ok := ScanValue(b, i, 64)
	whole := ok && SkipSpace(b, end) == len(b)
	if want := json.Valid(b) && utf8.Valid(b) && depth(b) <= 64; whole != want {
		t.Fatalf("ScanValue(%q) reads the whole text: %v; encoding/json finds it valid: %v", b, whole, want)
	}
	var compacted bytes.Buffer
	same := json.Compact(&compacted, b) == nil && bytes.Equal(compacted.Bytes(), b)
	if got, want := IsCompact(b, 64), same && utf8.Valid(b) && depth(b) <= 64; got != want {
		t.Fatalf("IsCompact(%q) = %v; encoding/json's Compact leaves it as it is: %v", b, got, want)
	}
	if whole && SkipValue(b, i) != end {
		t.Fatalf("SkipValue(%q) = %d, ScanValue %d", b, SkipValue(b, i), end)
	}
	if whole && b[i] == '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		ms, ok := Members(b, i, nil)
		if !ok {
			return // a lone surrogate key
		}
		last := make(map[string]string)
		for _, x := range ms {
			last[x.Key] = string(b[x.Start:x.End])
		}
		for k, v := range m {
			if last[k] != string(v) {
				t.Fatalf("Members(%q): %q is %q, encoding/json reads %q", b, k, last[k], v)
			}
		}
		if len(last) != len(m) {
			t.Fatalf("Members(%q) reads %d keys, encoding/json %d", b, len(last), len(m))
		}
	}
}

// depth returns the nesting of a valid JSON text.
func depth(b []byte) int {
	d := json.NewDecoder(bytes.NewReader(b))
	n, most := 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			return most
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			n++
			most = max(most, n)
		case json.Delim('}'), json.Delim(']'):
			n--
		}
	}
}

// TestHasSpace: white space in strings does not count.
func TestHasSpace(t *testing.T) {
	for s, want := range map[string]bool{`{"a b":"c\td"}`: false, `{"a":1, "b":2}`: true, `["\\"," "]`: false, "[1,\n2]": true} {
		if HasSpace([]byte(s)) != want {
			t.Errorf("HasSpace(%q) = %v", s, !want)
		}
	}
}

// BenchmarkScanValue reads the largest built-in catalog file, 0.8 MB of
// real tool definitions (MB/s).
func BenchmarkScanValue(b *testing.B) {
	data, err := os.ReadFile("../../catalog/builtin/mcp/azure.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if end, ok := ScanValue(data, SkipSpace(data, 0), 1000); !ok || SkipSpace(data, end) != len(data) {
			b.Fatal("the catalog file does not read as one JSON value")
		}
	}
}
