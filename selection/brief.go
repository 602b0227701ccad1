package selection

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBriefRunes bounds a derived brief.
const MaxBriefRunes = 90

// boilerplate are openings that say nothing about what a tool does.
var boilerplate = []string{
	"this tool is used to ", "this tool allows you to ", "this tool lets you ", "this tool will ",
	"this tool can ", "this tool ", "use this tool to ", "use this to ", "tool to ", "a tool that ",
	"a tool to ", "allows you to ", "allows to ", "lets you ", "used to ", "you can use this to ",
	"this function ", "this endpoint ", "this method ",
}

// thirdPerson maps third-person verbs to the imperative, so briefs start
// the same way ("Create an issue", not "Creates an issue").
var thirdPerson = map[string]string{
	"adds": "add", "analyzes": "analyze", "analyses": "analyse", "applies": "apply", "archives": "archive",
	"assigns": "assign", "calls": "call", "cancels": "cancel", "changes": "change", "checks": "check",
	"clicks": "click", "closes": "close", "comments": "comment", "compares": "compare", "converts": "convert",
	"copies": "copy", "counts": "count", "creates": "create", "deletes": "delete", "describes": "describe",
	"downloads": "download", "drags": "drag", "edits": "edit", "enables": "enable", "disables": "disable", "does": "do",
	"executes": "execute", "exports": "export", "extracts": "extract", "fetches": "fetch", "fills": "fill",
	"finds": "find", "forks": "fork", "generates": "generate", "gets": "get", "imports": "import",
	"inserts": "insert", "installs": "install", "invites": "invite", "lists": "list", "loads": "load",
	"looks": "look", "marks": "mark", "merges": "merge", "modifies": "modify", "moves": "move",
	"navigates": "navigate", "opens": "open", "posts": "post", "presses": "press", "previews": "preview",
	"publishes": "publish", "pushes": "push", "queries": "query", "reads": "read", "removes": "remove",
	"renames": "rename", "replaces": "replace", "replies": "reply", "reruns": "rerun", "resolves": "resolve",
	"retrieves": "retrieve", "returns": "return", "reviews": "review", "runs": "run", "saves": "save",
	"schedules": "schedule", "searches": "search", "selects": "select", "sends": "send", "sets": "set",
	"shows": "show", "starts": "start", "stops": "stop", "submits": "submit", "summarizes": "summarize",
	"takes": "take", "translates": "translate", "triggers": "trigger", "types": "type", "updates": "update",
	"uploads": "upload", "validates": "validate", "waits": "wait", "writes": "write",
}

// Brief derives a tool's one-line brief from its description: the first
// sentence, without openings such as "This tool is used to", starting with
// an imperative verb where the sentence starts with a third-person one
// ("Creates" becomes "Create"), on one line, at most [MaxBriefRunes] runes
// (cut at a word, with "…"). An empty description gives the title, else
// the name's words.
func Brief(name, title, description string) string {
	s := firstSentence(description)
	if s == "" {
		s = strings.TrimSpace(title)
	}
	if s == "" {
		own := name
		if i := strings.LastIndex(own, "__"); i >= 0 {
			own = own[i+2:]
		}
		s = strings.Join(strings.FieldsFunc(own, func(r rune) bool { return r == '_' || r == '-' || r == '.' }), " ")
	}
	lower := strings.ToLower(s)
	for _, b := range boilerplate {
		if strings.HasPrefix(lower, b) {
			s = s[len(b):]
			break
		}
	}
	if first, rest, ok := strings.Cut(s, " "); ok || first != "" {
		if v, found := thirdPerson[strings.ToLower(first)]; found {
			s = v
			if ok {
				s += " " + rest
			}
		}
	}
	s = capitalize(strings.TrimSpace(s))
	return clip(s, MaxBriefRunes)
}

// firstSentence returns the first sentence of text on one line: up to the
// first ". ", "。", "! ", "? " or line break, control characters removed.
func firstSentence(text string) string {
	text = strings.TrimSpace(text)
	end := len(text)
	for _, sep := range []string{". ", ".\n", "。", "! ", "? ", "\n"} {
		if i := strings.Index(text, sep); i >= 0 && i < end {
			end = i
			if sep == "。" {
				end += len(sep)
			}
		}
	}
	s := strings.TrimSuffix(text[:end], ".")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// clip cuts s to at most max runes, at a word boundary when one is near,
// ending a cut text with "…".
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	runes := []rune(s)[:max-1]
	cut := string(runes)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:-") + "…"
}
