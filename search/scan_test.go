package search

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/catalog/builtin"
)

// scanRunes is scan as it was first written, rune by rune: the oracle of
// its byte loop.
func scanRunes(text string, yield func(rawWord)) {
	start := -1
	var cur script
	flush := func(end int) {
		if start >= 0 {
			w := strings.Trim(text[start:end], "_-")
			if w != "" {
				off := strings.Index(text[start:end], w)
				yield(rawWord{text: w, start: start + off, end: start + off + len(w), cjk: cur == scriptCJK})
			}
			start = -1
		}
	}
	for i, r := range text {
		sc := classify(r)
		if sc == scriptJoin {
			if start >= 0 && cur == scriptCJK {
				flush(i)
			}
			if start < 0 {
				start, cur = i, scriptWord
			}
			continue
		}
		if sc == scriptSpace {
			flush(i)
			continue
		}
		if start >= 0 && (sc == scriptCJK) != (cur == scriptCJK) {
			flush(i)
		}
		if start < 0 {
			start, cur = i, sc
		}
	}
	flush(len(text))
}

func scanned(text string, scanner func(string, func(rawWord))) []rawWord {
	var out []rawWord
	scanner(text, func(w rawWord) { out = append(out, w) })
	return out
}

// scanCases are texts whose words scan must find as scanRunes does: joiners
// at the edges and inside words, scripts that meet without a space, marks,
// digits and invalid UTF-8.
var scanCases = []string{
	"", " ", "_", "-_-", "a", "list_issues", "_private_", "--flag-name--", "a-b_c",
	"ListIssues HTTPServer ec2Instance", "列出所有的pod并且删除", "创建_文件", "pod列出-x",
	"café naïve résumé", "e\u0301t\u0301e", "日本語のテキストとカタカナー", "한국어 텍스트",
	"tab\tnew\nline\r", "\xff\xfe_word\xff", "创建\xff文件", "x\u00a0y\u2003z", "١٢٣ ٤٥٦",
	"(see https://example.com/a-b_c?q=1&r=2)", "emoji 🙂 in_text", "ＡＢＣ full-width",
}

func TestScanIsScanRunes(t *testing.T) {
	check := func(text string) {
		t.Helper()
		if got, want := scanned(text, scan), scanned(text, scanRunes); !slices.Equal(got, want) {
			t.Fatalf("scan(%q) = %v, want %v", text, got, want)
		}
	}
	for _, text := range scanCases {
		check(text)
	}
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		for _, tl := range s.Tools {
			check(tl.Name)
			check(tl.Description)
			check(string(tl.InputSchema))
		}
	}
	// Random strings over an alphabet of every class, and bytes that are
	// not UTF-8.
	alphabet := []string{"a", "Z", "7", "_", "-", " ", ".", "é", "\u0301", "列", "カ", "ー", "한", "\xff", "\xe5", "🙂", "\u00a0"}
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range 20000 {
		b.Reset()
		for range rng.IntN(24) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		check(b.String())
	}
}

func FuzzScan(f *testing.F) {
	for _, text := range scanCases {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := scanned(text, scan), scanned(text, scanRunes); !slices.Equal(got, want) {
			t.Fatalf("scan(%q) = %v, want %v", text, got, want)
		}
	})
}

// BenchmarkScan measures splitting the built-in catalog's descriptions and
// schemas into words.
func BenchmarkScan(b *testing.B) {
	servers, err := builtin.Servers()
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	size := 0
	for _, s := range servers {
		for _, tl := range s.Tools {
			texts = append(texts, tl.Description, string(tl.InputSchema))
			size += len(tl.Description) + len(tl.InputSchema)
		}
	}
	b.SetBytes(int64(size))
	words := 0
	for b.Loop() {
		for _, text := range texts {
			scan(text, func(rawWord) { words++ })
		}
	}
	if words == 0 {
		b.Fatal("no words")
	}
}
