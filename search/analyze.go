package search

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/toolshelf/toolshelf/internal/reftext"
)

// stopWords are dropped by the toolshelf analyser, in documents and
// queries: function words and the filler of requests ("please show me all
// my ..."), which carry no tool meaning.
var stopWords = makeSet(`a about above after again against all also am an and any are as at be
been before being below between both but by can could did do does doing done down during each
else etc every few for from further had has have having he her here hers him his how i if in into
is it its itself just let lets like may me might more most must my myself no nor of off on once
only onto or other our ours ourselves out over own per please same shall she should so some such
than that the their theirs them then there these they this those through thus to too under until
up upon us use used uses using very via want wants was we were what whatever when where whether
which while who whom whose why will with within without would yet you your yours yourself`)

// IsStopWord reports whether the analyser drops w (lower case): a function
// word or request filler that says nothing about which tool is meant.
func IsStopWord(w string) bool { return stopWords[w] }

func makeSet(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// maxStemCache bounds the stem cache; it is cleared when full.
const maxStemCache = 1 << 18

// stemmer reduces English words to index terms with the reference's light
// plural stemmer (after dropping the plural s of short abbreviations, PRs),
// and gives each term its Porter2 (Snowball English) stem, which groups
// the index's terms into the families a query's word also matches
// ([FactorStemming]). Porter2 stems are cached. It is safe for concurrent
// use.
type stemmer struct {
	ref   bool         // FactorStemming off: the reference's stemmer alone
	mu    sync.RWMutex // guards cache
	cache map[string]string
}

func newStemmer() *stemmer { return &stemmer{cache: make(map[string]string)} }

// stem returns a word's index term.
func (s *stemmer) stem(w string) string {
	if s.ref {
		return reftext.Stem(w)
	}
	return reftext.Stem(abbreviationSingular(w))
}

// family returns the Porter2 stem of an index term: the key of the terms
// that share it (create, created, creating, creation).
func (s *stemmer) family(t string) string {
	if !isASCIIWord(t) {
		return t
	}
	s.mu.RLock()
	st, ok := s.cache[t]
	s.mu.RUnlock()
	if ok {
		return st
	}
	st = english.Stem(t, true)
	if st == "" {
		st = t
	}
	s.mu.Lock()
	if len(s.cache) >= maxStemCache {
		clear(s.cache)
	}
	s.cache[t] = st
	s.mu.Unlock()
	return st
}

func isASCIIWord(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z') {
			return false
		}
	}
	return len(w) > 0
}

// script classifies a rune for tokenization.
type script uint8

const (
	scriptSpace script = iota // separators and punctuation
	scriptWord                // letters and digits of alphabetic scripts
	scriptJoin                // _ and -, which join identifier parts
	scriptCJK                 // Han, Hiragana, Katakana and Hangul
)

func classify(r rune) script {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return scriptWord
		case r == '_' || r == '-':
			return scriptJoin
		}
		return scriptSpace
	case isCJK(r):
		return scriptCJK
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
		return scriptWord
	}
	return scriptSpace
}

// isCJK reports whether r is written without spaces between words: Han
// ideographs, Hiragana, Katakana (including the prolonged sound mark) and
// Hangul.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) || r == 'ー'
}

// rawWord is a maximal run of one script in the input, with its byte span.
type rawWord struct {
	text       string
	start, end int
	cjk        bool
}

// asciiScript is classify's script of each ASCII byte.
var asciiScript = func() (t [utf8.RuneSelf]script) {
	for c := range t {
		t[c] = classify(rune(c))
	}
	return t
}()

// isJoin reports whether c is one of the joiners "_" and "-".
func isJoin(c byte) bool { return c == '_' || c == '-' }

// scan splits text into alphabetic words (with their identifier joiners
// inside, not at their ends) and CJK runs, skipping everything else. It
// reads ASCII a byte at a time and decodes only other runes; an invalid
// byte is a separator, as U+FFFD is.
func scan(text string, yield func(rawWord)) {
	start := -1
	var cur script
	flush := func(end int) {
		if start < 0 {
			return
		}
		for start < end && isJoin(text[start]) {
			start++
		}
		for end > start && isJoin(text[end-1]) {
			end--
		}
		if start < end {
			yield(rawWord{text: text[start:end], start: start, end: end, cjk: cur == scriptCJK})
		}
		start = -1
	}
	for i := 0; i < len(text); {
		at := i
		var sc script
		if c := text[i]; c < utf8.RuneSelf {
			sc = asciiScript[c]
			i++
		} else {
			r, n := utf8.DecodeRuneInString(text[i:])
			sc = classify(r)
			i += n
		}
		switch {
		case sc == scriptJoin:
			if start >= 0 && cur == scriptCJK {
				flush(at)
			}
			if start < 0 {
				start, cur = at, scriptWord
			}
		case sc == scriptSpace:
			flush(at)
		default:
			if start >= 0 && (sc == scriptCJK) != (cur == scriptCJK) {
				flush(at)
			}
			if start < 0 {
				start, cur = at, sc
			}
			if cur == scriptWord {
				// ASCII letters, digits and joiners that follow in a
				// word change nothing: pass over them.
				for ; i < len(text) && text[i] < utf8.RuneSelf; i++ {
					if sc := asciiScript[text[i]]; sc != scriptWord && sc != scriptJoin {
						break
					}
				}
			}
		}
	}
	flush(len(text))
}

// splitIdentifier splits a word into its lowercase parts at _ and -, at
// lower-to-upper case changes (listIssues), before the last capital of a
// capital run followed by a lowercase letter (HTTPServer, but not the
// plural PRs), and where a capital follows a digit (ec2Instance).
func splitIdentifier(w string) []string {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return splitIdentifierRunes(w)
		}
	}
	return splitIdentifierASCII(w)
}

// splitIdentifierASCII is splitIdentifier for ASCII text, the common case:
// the same rules on bytes, with parts cut from w instead of built.
func splitIdentifierASCII(w string) []string {
	var parts []string
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, strings.ToLower(w[start:end]))
		}
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c == '_' || c == '-' {
			flush(i)
			start = i + 1
			continue
		}
		if i > 0 && isUpperASCII(c) {
			prev := w[i-1]
			pluralS := i+1 < len(w) && w[i+1] == 's' && (i+2 == len(w) || !isLetterASCII(w[i+2]))
			nextLower := i+1 < len(w) && isLowerASCII(w[i+1]) && !pluralS
			if isLowerASCII(prev) || isDigitASCII(prev) || (isUpperASCII(prev) && nextLower) {
				flush(i)
				start = i
			}
		}
	}
	flush(len(w))
	return parts
}

func isUpperASCII(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLowerASCII(c byte) bool  { return c >= 'a' && c <= 'z' }
func isDigitASCII(c byte) bool  { return c >= '0' && c <= '9' }
func isLetterASCII(c byte) bool { return isUpperASCII(c) || isLowerASCII(c) }

// splitIdentifierRunes is splitIdentifier for any text.
func splitIdentifierRunes(w string) []string {
	var parts []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			parts = append(parts, strings.ToLower(b.String()))
			b.Reset()
		}
	}
	runes := []rune(w)
	for i, r := range runes {
		if r == '_' || r == '-' {
			flush()
			continue
		}
		if i > 0 && unicode.IsUpper(r) {
			prev := runes[i-1]
			// A capital run followed by lowercase starts a new word at
			// its last capital (HTTPServer), except for a plural s
			// (PRs, URLs).
			pluralS := i+1 < len(runes) && runes[i+1] == 's' && (i+2 == len(runes) || !unicode.IsLetter(runes[i+2]))
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1]) && !pluralS
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		b.WriteRune(r)
	}
	flush()
	return parts
}

// analyzer turns text into index terms for the toolshelf ranker.
type analyzer struct {
	stem      *stemmer
	bilingual *lexicon
	// stops are the words dropped; refStops (FactorStopWords off) means
	// they are the reference's, and one-letter words are kept as the
	// reference keeps them.
	stops    map[string]bool
	refStops bool
	// noJoined leaves out the joined forms of identifiers (FactorJoined
	// off), noBigrams keeps a CJK run as one term (FactorBigrams off).
	noJoined, noBigrams bool
	// refWords splits words outside CJK runs as the reference does
	// (FactorIdentifiers off): at camel-case boundaries and every
	// character outside a-z and 0-9.
	refWords bool
}

// split returns a word's identifier parts in lower case.
func (a *analyzer) split(w string) []string { return splitIdentifier(w) }

// bigrams appends the bigrams of a CJK run, or the run itself when runs
// are not split.
func (a *analyzer) bigrams(run string, out []string) []string {
	if a.noBigrams {
		return append(out, run)
	}
	return appendBigrams(run, out)
}

// fieldTerms analyses document text. A word made of several parts
// (create_issue, jsonPath, GitHub, PromQL) yields its parts and its joined
// form, so a query matches it whether it splits the word or not.
func (a *analyzer) fieldTerms(text string, out []string) []string {
	return a.terms(text, out, true)
}

// distinctWords counts the distinct terms of text's words and word parts,
// leaving out the joined forms fieldTerms adds: how many words a tool's
// name has.
func (a *analyzer) distinctWords(text string) int {
	terms := a.terms(text, nil, false)
	slices.Sort(terms)
	return len(slices.Compact(terms))
}

// terms appends text's terms to out: CJK runs as bigrams and
// translations, other words as their analysed parts, and, when joined is
// set, the joined form of a word of several parts.
func (a *analyzer) terms(text string, out []string, joined bool) []string {
	scan(text, func(w rawWord) { out = a.wordTerms(w, out, joined) })
	return out
}

// wordTerms appends the terms of one word that scan found, as terms does:
// they depend on the word's text alone, so that the index's build can
// analyse each distinct word once.
func (a *analyzer) wordTerms(w rawWord, out []string, joined bool) []string {
	if w.cjk {
		return a.cjkDocTerms(w.text, out)
	}
	if a.refWords {
		for _, p := range piWords(w.text) {
			if t, ok := a.word(p); ok {
				out = append(out, t)
			}
		}
		return out
	}
	parts := a.split(w.text)
	for _, p := range parts {
		if t, ok := a.word(p); ok {
			out = append(out, t)
		}
	}
	if joined && !a.noJoined && len(parts) > 1 {
		out = append(out, a.compound(parts))
	}
	return out
}

// compound returns the joined, stemmed form of a word's parts.
func (a *analyzer) compound(parts []string) string {
	return a.stem.stem(strings.Join(parts, ""))
}

// word normalises one lowercase word part: stop words and one-letter ASCII
// words are dropped (digits are kept), the rest is stemmed.
func (a *analyzer) word(p string) (string, bool) {
	if len(p) < 2 && !a.refStops && !(len(p) == 1 && p[0] >= '0' && p[0] <= '9') {
		return "", false
	}
	if p == "" || a.stops[p] {
		return "", false
	}
	return a.stem.stem(p), true
}

// abbreviationSingular drops the plural s of a short abbreviation without
// vowels (PRs, MRs, VMs, DMs), which the English stemmer keeps.
func abbreviationSingular(w string) string {
	if len(w) < 3 || len(w) > 4 || w[len(w)-1] != 's' || w[len(w)-2] == 's' {
		return w
	}
	for i := 0; i < len(w)-1; i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z') || strings.IndexByte("aeiouy", c) >= 0 {
			return w
		}
	}
	return w[:len(w)-1]
}

// cjkDocTerms indexes a CJK run by its character bigrams (a single
// character by itself) and by the English translations of the dictionary
// words it contains, so English queries reach tools described in Chinese,
// Japanese or Korean.
func (a *analyzer) cjkDocTerms(run string, out []string) []string {
	out = a.bigrams(run, out)
	for _, seg := range a.bilingual.segment(run) {
		for _, tr := range seg.translations {
			for _, w := range tr {
				if t, ok := a.word(w); ok {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// appendBigrams appends the overlapping character bigrams of s, or s itself
// when it is one character.
func appendBigrams(s string, out []string) []string {
	rs := []rune(s)
	if len(rs) == 1 {
		return append(out, s)
	}
	for i := 0; i+1 < len(rs); i++ {
		out = append(out, string(rs[i:i+2]))
	}
	return out
}
