package lint

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// description runs the description rules on one tool: length, the
// verb-first brief, and English text.
func (l *linter) description(en *entry) {
	desc := strings.TrimSpace(en.e.Description)
	if desc == "" {
		if l.on(RuleMissingBrief) {
			l.addSev(RuleMissingBrief, Error, en, "",
				"the tool has no description: the model and the search see only its name",
				"write one sentence that starts with a verb and says what the tool does, e.g. \"Create an issue in a repository.\"")
		}
		return
	}
	sents := sentences(desc)
	if l.on(RuleDescriptionLength) {
		n := l.counter.Count(desc)
		if len(sents) > l.opts.MaxSentences || n > l.opts.MaxDescriptionTokens {
			l.add(RuleDescriptionLength, en, "",
				fmt.Sprintf("the description has %d sentences and %d tokens (at most %d and %d)",
					len(sents), n, l.opts.MaxSentences, l.opts.MaxDescriptionTokens),
				"keep three sentences: what the tool does, when to use it, what it cannot do; move parameter details into the parameters and usage rules into the server's instructions")
		}
	}
	words, foreign := englishWords(desc)
	latin := 0
	for _, r := range desc {
		if r < utf8.RuneSelf && unicode.IsLetter(r) {
			latin++
		}
	}
	noEnglish := foreign > latin && words < 3
	if noEnglish && l.on(RuleNoEnglish) {
		l.add(RuleNoEnglish, en, "",
			fmt.Sprintf("the description has %d English words and %d letters of other scripts: English queries cannot match it", words, foreign),
			"start with an English sentence; keep the other language after it if your users need it")
	}
	if !l.on(RuleMissingBrief) {
		return
	}
	if len(sents) == 0 {
		l.add(RuleMissingBrief, en, "",
			fmt.Sprintf("the description, %q, has no words", clip(desc, 40)),
			"write one sentence that starts with a verb and says what the tool does")
		return
	}
	first := sents[0]
	w := firstWord(first)
	if w == "" || !isASCII(w) || noEnglish {
		return // another script: no-english speaks for it
	}
	if isBrief(first) {
		return
	}
	fix := "start the description with a verb that says what the tool does, e.g. \"List the open pull requests of a repository.\""
	if s := suggestBrief(first); s != "" {
		fix = fmt.Sprintf("start with the verb: %q", clip(s, 80))
	}
	l.add(RuleMissingBrief, en, "",
		fmt.Sprintf("the first sentence starts with %q, not a verb: %q", w, clip(first, 80)),
		fix)
}

// isBrief reports whether a sentence starts with a verb, or with an adverb
// in -ly and then a verb ("Permanently delete a file").
func isBrief(sentence string) bool {
	ws := leadWords(sentence, 2)
	if len(ws) == 0 {
		return false
	}
	if _, ok := verbBase(ws[0]); ok {
		return true
	}
	if len(ws) == 2 && strings.HasSuffix(strings.ToLower(ws[0]), "ly") {
		_, ok := verbBase(ws[1])
		return ok
	}
	return false
}

// leadIns are words that may come before the real brief in descriptions
// such as "This tool will create …", "A tool to list …" or "Notion |
// Retrieve a user".
var leadIns = makeSet(`this tool will can is used to helps help lets allows you a an the function endpoint
command method api that simply just | - – —`)

// plainWord matches a word with at most a punctuation mark after it.
var plainWord = regexp.MustCompile(`^[A-Za-z][A-Za-z-]*[.,;:]?$`)

// suggestBrief returns the sentence from its first verb on, capitalised,
// when only lead-ins precede that verb within the first six words: words
// of leadIns, labels ending in a colon, and a word before a "|". It
// returns "" otherwise.
func suggestBrief(sentence string) string {
	fields := strings.Fields(sentence)
	for i := 1; i < len(fields) && i < 6; i++ {
		prev := fields[i-1]
		if !leadIns[strings.ToLower(prev)] && !strings.HasSuffix(prev, ":") && fields[i] != "|" &&
			(i+1 >= len(fields) || fields[i+1] != "|") {
			return ""
		}
		if !plainWord.MatchString(fields[i]) {
			continue
		}
		base, ok := verbBase(firstWord(fields[i]))
		if !ok {
			continue
		}
		rest := strings.Join(fields[i+1:], " ")
		brief := strings.ToUpper(base[:1]) + base[1:]
		if rest != "" {
			brief += " " + rest
		}
		return brief
	}
	return ""
}
