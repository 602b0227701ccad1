package lint

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolshelf/toolshelf/internal/reftext"
)

// verbsText lists English verbs common in tool descriptions, in their base
// form, one or more a line; '#' starts a comment.
//
//go:embed verbs.txt
var verbsText string

// verbs is the set of base forms in verbs.txt.
var verbs = func() map[string]bool {
	m := make(map[string]bool)
	for line := range strings.Lines(verbsText) {
		line, _, _ = strings.Cut(line, "#")
		for _, w := range strings.Fields(line) {
			m[strings.ToLower(w)] = true
		}
	}
	return m
}()

// verbBase returns the base form of w when w is a verb of the list in its
// base (imperative) or third-person singular form: get, gets; fetch,
// fetches; query, queries. The check is deliberately lexical: a word that is
// also a noun (list, search, query) counts as a verb, which is what it is at
// the start of a tool's description.
func verbBase(w string) (string, bool) {
	w = strings.ToLower(w)
	if verbs[w] {
		return w, true
	}
	if b, ok := strings.CutSuffix(w, "ies"); ok && len(b) > 1 && verbs[b+"y"] {
		return b + "y", true
	}
	if b, ok := strings.CutSuffix(w, "es"); ok && verbs[b] {
		return b, true
	}
	if b, ok := strings.CutSuffix(w, "s"); ok && verbs[b] {
		return b, true
	}
	return "", false
}

// stopWords are dropped when descriptions and names are compared: function
// words, and words every tool description uses.
var stopWords = makeSet(`a about above after all also an and any are as at be been being both but
by can could do does each either etc for from given has have how i if in into is it its itself may
more most must my no not of on one only or other our should so some such than that the their them
then there these they this those through to too under up upon us use used uses using via was we
were what when where whether which while who will with within without would you your`)

// fillerWords describe any parameter (value, optional, specified…). A
// parameter description made only of these, stop words and words of the
// parameter's or the tool's name says nothing new: "The ID of the issue"
// for issue_id.
var fillerWords = makeSet(`field parameter param value specified specify provided provide given
optional required desired target input argument arg`)

func makeSet(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// splitWords splits text into lowercase words: runs of letters and digits,
// broken at case changes (listIssues, HTTPServer), underscores, hyphens and
// every other character.
func splitWords(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(text)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// terms returns the analysed words of text: lowercase, stop words and
// one-letter words dropped, plurals stemmed as the reference ranker does
// ([reftext.Stem]) and id spelled one way.
func terms(text string) []string {
	var out []string
	for _, w := range splitWords(text) {
		if stopWords[w] || utf8.RuneCountInString(w) < 2 && isASCII(w) {
			continue
		}
		out = append(out, normTerm(w))
	}
	return out
}

// normTerm stems a lowercase word and maps a few spellings of one idea to
// one term.
func normTerm(w string) string {
	switch w {
	case "identifier", "identifiers", "ids":
		return "id"
	}
	return reftext.Stem(w)
}

// termSet returns the distinct terms of text.
func termSet(text string) map[string]bool {
	m := make(map[string]bool)
	for _, t := range terms(text) {
		m[t] = true
	}
	return m
}

// jaccard returns |a ∩ b| / |a ∪ b|, 0 for two empty sets.
func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// abbreviations end in a period without ending a sentence.
var abbreviations = makeSet(`e.g. i.e. etc. vs. approx. incl. no. min. max. ex. esp. cf. resp. mr. ms. dr. st. e.t.c.`)

// sentences splits a description into sentences. A sentence ends at ., !
// or ? followed by white space (not after an abbreviation such as e.g.), at
// 。！？, and at the end of a paragraph, heading or list item, so that every
// item of a list counts as one; a line break inside a paragraph (text
// wrapped by hand) does not end one. A fenced code block counts as one
// sentence; text without letters or digits counts as none.
func sentences(desc string) []string {
	var out []string
	var unit strings.Builder
	flush := func() {
		out = append(out, splitLine(unit.String())...)
		unit.Reset()
	}
	inFence := false
	for line := range strings.Lines(desc) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "```"):
			flush()
			if !inFence {
				out = append(out, line)
			}
			inFence = !inFence
			continue
		case inFence:
			continue
		case line == "" || startsBlock(line):
			flush()
		case unit.Len() > 0:
			unit.WriteByte(' ')
		}
		unit.WriteString(line)
		if strings.HasPrefix(line, "#") {
			flush()
		}
	}
	flush()
	return out
}

// startsBlock reports whether a line starts a list item or a heading.
func startsBlock(line string) bool {
	if strings.HasPrefix(line, "#") {
		return true
	}
	for _, m := range []string{"- ", "* ", "+ ", "• ", "– "} {
		if strings.HasPrefix(line, m) {
			return true
		}
	}
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	return i > 0 && i < len(line) && (line[i] == '.' || line[i] == ')')
}

// splitLine splits one line into sentences.
func splitLine(line string) []string {
	var out []string
	start := 0
	add := func(end int) {
		if s := strings.TrimSpace(line[start:end]); hasAlnum(s) {
			out = append(out, s)
		}
		start = end
	}
	for i, r := range line {
		switch r {
		case '。', '！', '？':
			add(i + utf8.RuneLen(r))
		case '.', '!', '?':
			next := i + 1
			if next < len(line) && line[next] != ' ' && line[next] != '\t' {
				continue // 1.5, example.com, "?q="
			}
			if r == '.' {
				word := line[strings.LastIndexAny(line[:i], " \t(")+1 : next]
				if abbreviations[strings.ToLower(word)] {
					continue
				}
			}
			add(next)
		}
	}
	add(len(line))
	return out
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// firstWord returns the first word of a sentence, with leading symbols,
// emoji, markdown and quotes skipped and anything after a slash cut
// ("List/enumerate" gives List).
func firstWord(s string) string {
	s = strings.TrimLeftFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' && r != '\'' })
	if end >= 0 {
		s = s[:end]
	}
	return strings.Trim(s, "-'")
}

// leadWords returns up to n words of s, starting with the first, each
// trimmed as firstWord trims.
func leadWords(s string, n int) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		if len(out) == n {
			break
		}
		if w := firstWord(f); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// englishWords counts the words of ASCII letters (two or more) in s and
// the letters outside ASCII.
func englishWords(s string) (words, foreignLetters int) {
	run := 0
	end := func() {
		if run >= 2 {
			words++
		}
		run = 0
	}
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && unicode.IsLetter(r):
			run++
		case unicode.IsLetter(r):
			foreignLetters++
			end()
		default:
			end()
		}
	}
	end()
	return words, foreignLetters
}
