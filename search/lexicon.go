package search

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

//go:embed bilingual.txt
var bilingualText string

// lexicon maps CJK words to English translations for the commonest tool
// verbs and nouns, and marks CJK function words to skip.
type lexicon struct {
	entries map[string][][]string // word → translations, each a word list; empty = skip
	maxLen  int                   // longest key in runes
}

// parseLexicon reads lines of the form
//
//	创建 新建 = create
//	删除 = delete, remove
//	的 =
//
// Keys left of "=" share the comma-separated translations on the right; an
// empty right side marks function words to skip. # starts a comment.
func parseLexicon(text string) (*lexicon, error) {
	lx := &lexicon{entries: make(map[string][][]string)}
	err := tableLines(strings.NewReader(text), func(line string) error {
		left, right, ok := strings.Cut(line, "=")
		if !ok {
			return errors.New(`want "word ... = translation, ..."`)
		}
		var trs [][]string
		for _, tr := range strings.Split(right, ",") {
			if ws := strings.Fields(strings.ToLower(tr)); len(ws) > 0 {
				trs = append(trs, ws)
			}
		}
		keys := strings.Fields(left)
		if len(keys) == 0 {
			return errors.New(`no word before "="`)
		}
		for _, k := range keys {
			lx.entries[k] = append(lx.entries[k], trs...)
			lx.maxLen = max(lx.maxLen, utf8.RuneCountInString(k))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return lx, nil
}

// tableLines calls fn with every line of a table file that is not blank
// once its # comment is cut off. An error names the line.
func tableLines(r io.Reader, fn func(line string) error) error {
	sc := bufio.NewScanner(r)
	n := 1
	for ; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("line %d: longer than %d bytes: shorten it", n, bufio.MaxScanTokenSize)
	} else if err != nil {
		return fmt.Errorf("line %d: %w", n, err)
	}
	return nil
}

// segment is one piece of a CJK run: a dictionary word or a stretch of
// characters the dictionary does not know.
type segment struct {
	text         string
	known        bool
	translations [][]string
}

// segment splits a CJK run by greedy longest match against the dictionary.
// Unknown characters are grouped into runs of their own.
func (lx *lexicon) segment(run string) []segment {
	var segs []segment
	// Byte offsets come from decoding, so an invalid byte (decoded as one
	// replacement rune) keeps its one-byte width.
	var rs []rune
	var offs []int
	for o := 0; o < len(run); {
		r, w := utf8.DecodeRuneInString(run[o:])
		rs = append(rs, r)
		offs = append(offs, o)
		o += w
	}
	offs = append(offs, len(run))
	unknownStart := -1
	flushUnknown := func(end int) {
		if unknownStart >= 0 {
			segs = append(segs, segment{text: run[offs[unknownStart]:offs[end]]})
			unknownStart = -1
		}
	}
	for i := 0; i < len(rs); {
		matched := 0
		for l := min(lx.maxLen, len(rs)-i); l >= 1; l-- {
			if _, ok := lx.entries[string(rs[i:i+l])]; ok {
				matched = l
				break
			}
		}
		if matched == 0 {
			if unknownStart < 0 {
				unknownStart = i
			}
			i++
			continue
		}
		flushUnknown(i)
		w := string(rs[i : i+matched])
		segs = append(segs, segment{text: w, known: true, translations: lx.entries[w]})
		i += matched
	}
	flushUnknown(len(rs))
	return segs
}
