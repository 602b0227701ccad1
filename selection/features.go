package selection

import (
	"slices"
	"strings"
	"unicode"

	"github.com/toolshelf/toolshelf/search"
	"golang.org/x/text/unicode/norm"
)

// numberToken stands for every token that contains a digit: "PR #412" and
// "PR #413" are the same pattern.
const numberToken = "0"

// Features normalises a task's text into the key of its pattern: Unicode
// NFKC, lower case, words of letters and digits (apostrophes kept inside
// words), the search analyser's English stop words dropped, every token with a digit replaced by
// "0", runs of Han, Hiragana, Katakana or Hangul split into overlapping
// pairs, then the distinct tokens sorted and joined by spaces. Word order,
// case, punctuation, spacing and specific numbers do not change the key;
// Features of a key is the key itself.
func Features(text string) string {
	return strings.Join(featureSet(text), " ")
}

// featureSet returns the sorted distinct feature tokens of text.
func featureSet(text string) []string {
	text = norm.NFKC.String(strings.ToLower(text))
	var toks []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		w := strings.Trim(string(word), "'")
		word = word[:0]
		if w == "" || search.IsStopWord(w) {
			return
		}
		if strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			w = numberToken
		}
		toks = append(toks, w)
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
		case 1:
			toks = append(toks, string(cjk))
		default:
			for i := 0; i+1 < len(cjk); i++ {
				toks = append(toks, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || (r == '\'' && len(word) > 0):
			flushCJK()
			word = append(word, unicode.ToLower(r))
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	slices.Sort(toks)
	return slices.Compact(toks)
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// Similarity is the Jaccard similarity of two texts' feature sets: 1 for
// the same features, 0 for none in common (or two empty texts).
func Similarity(a, b string) float64 {
	fa, fb := featureSet(a), featureSet(b)
	if len(fa) == 0 || len(fb) == 0 {
		return 0
	}
	common := 0
	for _, t := range fa {
		if _, ok := slices.BinarySearch(fb, t); ok {
			common++
		}
	}
	return float64(common) / float64(len(fa)+len(fb)-common)
}
