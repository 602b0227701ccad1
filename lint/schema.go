package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// schemaNode is one schema object met while walking a tool's parameters.
type schemaNode struct {
	// path locates the schema (see [Finding.Path]).
	path string
	// name is the property's name when the schema is a property's, else
	// empty.
	name string
	// siblings are the names of the properties beside it, its own
	// included.
	siblings map[string]bool
	// ms are the schema's members.
	ms []member
}

// maxSchemaDepth is how many schema levels deep the rules and [Slim] go:
// deeper subschemas are neither linted nor slimmed, and are kept byte for
// byte. Each level reads its subtree again, so the bound keeps the cost
// linear in the schema's size. Real tools nest a dozen levels at most.
const maxSchemaDepth = 32

// walkSchema calls visit for every schema object in raw, parents first,
// down to maxSchemaDepth levels.
func walkSchema(raw json.RawMessage, path, name string, siblings map[string]bool, depth int, visit func(*schemaNode)) {
	if depth >= maxSchemaDepth {
		return
	}
	ms, ok := parseObject(raw)
	if !ok {
		return
	}
	visit(&schemaNode{path: path, name: name, siblings: siblings, ms: ms})
	for _, m := range ms {
		switch {
		case schemaMapKeywords[m.key]:
			sub, ok := parseObject(m.val)
			if !ok {
				continue
			}
			var names map[string]bool
			if m.key == "properties" {
				names = make(map[string]bool, len(sub))
				for _, s := range sub {
					names[s.key] = true
				}
			}
			for _, s := range sub {
				if m.key == "properties" {
					walkSchema(s.val, childPath(path, m.key, s.key), s.key, names, depth+1, visit)
				} else {
					walkSchema(s.val, childPath(path, m.key, s.key), "", nil, depth+1, visit)
				}
			}
		case schemaKeywords[m.key]:
			if elems, ok := parseArray(m.val); ok && m.key == "items" {
				for _, e := range elems {
					walkSchema(e, childPath(path, m.key, ""), "", nil, depth+1, visit)
				}
				continue
			}
			walkSchema(m.val, childPath(path, m.key, ""), "", nil, depth+1, visit)
		case schemaListKeywords[m.key]:
			elems, _ := parseArray(m.val)
			for _, e := range elems {
				walkSchema(e, childPath(path, m.key, ""), "", nil, depth+1, visit)
			}
		}
	}
}

// schema runs the parameter rules on one tool.
func (l *linter) schema(en *entry) {
	toolName := en.e.Name
	walkSchema(en.tool.Parameters, "", "", nil, 0, func(n *schemaNode) {
		for _, kw := range []string{"examples", "example"} {
			if _, ok := lookup(n.ms, kw); ok && l.on(RuleExamples) {
				where := "the schema"
				if n.path != "" {
					where = n.path
				}
				l.add(RuleExamples, en, n.path,
					fmt.Sprintf("%s has %q: models rarely need examples, and every request pays for them", where, kw),
					fmt.Sprintf("remove %q; if the format is unusual, say it in a few words in the description (--fix removes it)", kw))
			}
		}
		if n.name == "" {
			return
		}
		if l.on(RuleParamRestatesName) {
			for _, key := range []string{"title", "description"} {
				if text, ok := lookupString(n.ms, key); ok && restatesName(n.name, toolName, text) {
					l.add(RuleParamRestatesName, en, n.path,
						fmt.Sprintf("the %s of %s, %q, says no more than its name", key, n.path, clip(text, 60)),
						fmt.Sprintf("remove the %s, or say what the name does not: format, units, where the value comes from (--fix removes it)", key))
				}
			}
		}
		desc, hasDesc := lookupString(n.ms, "description")
		if hasDesc && l.on(RuleEnumExplained) {
			l.enumExplained(en, n, desc)
		}
		if hasDesc && l.on(RuleDefaultInProse) {
			l.defaultInProse(en, n, desc)
		}
		if l.on(RuleNesting) {
			l.nesting(en, n)
		}
	})
}

// termAliases map abbreviations to the word they stand for, so that repo
// and repository are one term when a description is compared with a name.
var termAliases = map[string]string{"repo": "repository", "org": "organization", "desc": "description",
	"num": "number", "max": "maximum", "min": "minimum", "msg": "message", "dir": "directory",
	"env": "environment", "config": "configuration", "info": "information", "db": "database",
	"param": "parameter", "params": "parameter", "len": "length", "pos": "position", "img": "image",
	"src": "source", "dest": "destination", "dst": "destination", "uri": "url", "addr": "address",
	"qty": "quantity", "ts": "timestamp", "tz": "timezone", "auth": "authentication", "ref": "reference",
	"ext": "extension", "cnt": "count", "idx": "index", "str": "string", "val": "value", "var": "variable",
	"attr": "attribute", "attrs": "attribute", "opts": "option", "doc": "document", "docs": "document",
	"pr": "pull request", "prs": "pull request", "k8s": "kubernetes", "ns": "namespace"}

// nameTerms returns the terms of an identifier, with abbreviations also
// spelled out.
func nameTerms(ident string) map[string]bool {
	set := map[string]bool{}
	for _, w := range splitWords(ident) {
		set[normTerm(w)] = true
		if full, ok := termAliases[w]; ok {
			for _, t := range terms(full) {
				set[t] = true
			}
		}
	}
	return set
}

// restatesName reports whether a parameter's description says nothing
// beyond the parameter's name and the tool's: once stop words and words
// that describe any parameter are dropped, every remaining term of the
// description is a term of the parameter's or the tool's name, and at
// least one is a term of the parameter's own name. A description that
// uses another word, a number, a format or another script says something
// more.
func restatesName(param, toolName, desc string) bool {
	if strings.TrimSpace(desc) == "" {
		return true
	}
	own := nameTerms(param)
	known := nameTerms(toolName)
	for t := range own {
		known[t] = true
	}
	ownHit := false
	for _, w := range splitWords(desc) {
		if stopWords[w] || fillerWords[w] {
			continue
		}
		ts := []string{normTerm(w)}
		if full, ok := termAliases[w]; ok {
			ts = terms(full)
		}
		for _, t := range ts {
			if !known[t] {
				return false
			}
			ownHit = ownHit || own[t]
		}
	}
	return ownHit
}

// selfExplanatory reports whether an enum value reads as English words:
// at most 24 characters of identifier words (open, closed_at, dryRun), each
// of two letters or more with a vowel. Codes such as x1, p50 or csv are
// not.
func selfExplanatory(v string) bool {
	if len(v) > 24 || !plainEnum.MatchString(v) {
		return false
	}
	for _, w := range splitWords(v) {
		if len(w) < 2 || !strings.ContainsAny(w, "aeiouy") || strings.ContainsAny(w, "0123456789") {
			return false
		}
	}
	return true
}

// plainEnum matches enum values made of ASCII letters, digits, _, - and
// spaces, starting with a letter.
var plainEnum = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_ -]*$`)

// enumStrings returns the string values of a schema's enum (nil unless
// every value is a string).
func enumStrings(ms []member) []string {
	raw, ok := lookup(ms, "enum")
	if !ok {
		return nil
	}
	var vals []string
	if json.Unmarshal(raw, &vals) != nil {
		return nil
	}
	return vals
}

// enumExplained reports a description that explains self-explanatory enum
// values one by one ("open: open issues; closed: closed issues") or lists
// them all again ("one of open, closed or all").
func (l *linter) enumExplained(en *entry, n *schemaNode, desc string) {
	vals := enumStrings(n.ms)
	if len(vals) < 2 || len(vals) > 20 {
		return
	}
	for _, v := range vals {
		if !selfExplanatory(v) {
			return
		}
	}
	var explained, listed []string
	for _, v := range vals {
		found, expl := mentions(desc, v)
		if found {
			listed = append(listed, v)
		}
		if expl {
			explained = append(explained, v)
		}
	}
	switch {
	case len(explained) >= 2 && 2*len(explained) >= len(vals):
		l.add(RuleEnumExplained, en, n.path,
			fmt.Sprintf("the description of %s explains the enum values %s, which say what they mean themselves",
				n.path, listNames(explained, 6)),
			"drop the explanations; keep a few words only for a value whose meaning is not obvious")
	case len(listed) == len(vals):
		l.add(RuleEnumExplained, en, n.path,
			fmt.Sprintf("the description of %s lists the enum values %s again", n.path, listNames(listed, 6)),
			"drop the list from the description: the schema's enum already gives the model the values")
	}
}

// mentions reports whether text contains v as a whole word (any case,
// possibly quoted), and whether some mention is followed by an
// explanation: a colon, an equals sign, a dash or an arrow, or an opening
// parenthesis.
func mentions(text, v string) (found, explained bool) {
	lower, lv := strings.ToLower(text), strings.ToLower(v)
	for from := 0; ; {
		i := strings.Index(lower[from:], lv)
		if i < 0 {
			return found, explained
		}
		start, end := from+i, from+i+len(lv)
		from = start + 1
		if start > 0 && isWordByte(lower[start-1]) || end < len(lower) && isWordByte(lower[end]) {
			continue
		}
		found = true
		rest := strings.TrimLeft(lower[end:], "\"'`*")
		rest = strings.TrimLeft(rest, " \t")
		for _, sep := range []string{":", "=", "->", "→", "–", "—", "- ", "("} {
			if strings.HasPrefix(rest, sep) {
				explained = true
			}
		}
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// defaultMention finds prose about a default value.
var defaultMention = regexp.MustCompile(`(?i)\b(?:defaults?\s+(?:to|is)\b|default(?:\s+value)?\s*(?:is\b|:|=)|\(default\b)`)

// defaultInProse reports defaults written in a parameter's description:
// a repetition when the schema declares the same default (which --fix
// removes), a default the schema does not declare at all (the value
// belongs in the schema's default keyword), and, at warning, a
// contradiction when the schema declares another value.
func (l *linter) defaultInProse(en *entry, n *schemaNode, desc string) {
	if !defaultMention.MatchString(desc) {
		return
	}
	def, hasDefault := lookup(n.ms, "default")
	if !hasDefault {
		l.addSev(RuleDefaultInProse, Info, en, n.path,
			fmt.Sprintf("the description of %s states a default in prose, and the schema declares none", n.path),
			"declare it with the schema's default keyword and drop the prose")
		return
	}
	_, phrase, value, ok := cutDefault(desc)
	switch {
	case ok && sameDefault(value, def):
		l.addSev(RuleDefaultInProse, Info, en, n.path,
			fmt.Sprintf("the description of %s repeats the schema's default %s in %q", n.path, compact(def), strings.TrimSpace(phrase)),
			"drop it: the schema's default already says it (--fix removes it)")
	case ok && simpleValue(value):
		l.addSev(RuleDefaultInProse, Warning, en, n.path,
			fmt.Sprintf("the description of %s says the default is %s, the schema says %s", n.path, value, compact(def)),
			"make them agree, then drop the prose: the schema's default is what clients use")
	default:
		l.addSev(RuleDefaultInProse, Info, en, n.path,
			fmt.Sprintf("the description of %s talks about the default, which the schema already declares (%s)", n.path, compact(def)),
			"drop what the default keyword says already; keep only what it cannot, such as why that value")
	}
}

// The default phrases Slim can remove without changing anything else:
// a parenthesis, a trailing clause, or a whole sentence.
var (
	defaultParen    = regexp.MustCompile(`(?i)\s*\((?:defaults?\s+(?:to|is)|default(?:\s+value)?(?:\s*[:=]|\s+is)?)\s*([^()]{1,40})\)`)
	defaultClause   = regexp.MustCompile(`(?i)[,;]\s*(?:defaults?\s+(?:to|is)|default(?:\s+value)?(?:\s*[:=]|\s+is))\s*([^.,;()\n]{1,40})\.?\s*$`)
	defaultSentence = regexp.MustCompile(`(?i)(?:^|[.!?]\s+)((?:defaults?\s+(?:to|is)|default(?:\s+value)?(?:\s*[:=]|\s+is))\s*([^()\n]{1,40}?)(?:\.|$))`)
)

// cutDefault finds a default phrase that can be removed whole: "(default:
// 10)", "…, defaults to 10." at the end, or a sentence "Default: 10."
// anywhere. It returns desc without the phrase, the phrase and the value it
// gives.
func cutDefault(desc string) (cut, phrase, value string, ok bool) {
	if m := defaultParen.FindStringSubmatchIndex(desc); m != nil {
		return desc[:m[0]] + desc[m[1]:], desc[m[0]:m[1]], desc[m[2]:m[3]], true
	}
	if m := defaultClause.FindStringSubmatchIndex(desc); m != nil {
		return strings.TrimRight(desc[:m[0]], " ") + ".", desc[m[0]:m[1]], desc[m[2]:m[3]], true
	}
	for _, m := range defaultSentence.FindAllStringSubmatchIndex(desc, -1) {
		end := m[3]
		if end < len(desc) && !strings.ContainsRune(" \t\r\n", rune(desc[end])) {
			continue // "Defaults to example.com …": not the end of the sentence
		}
		rest := strings.TrimLeft(desc[end:], " \t")
		return strings.TrimSpace(desc[:m[2]] + rest), desc[m[2]:m[3]], desc[m[4]:m[5]], true
	}
	return "", "", "", false
}

// simpleValue reports whether a default stated in prose is one value (a
// number, a word, a quoted string) rather than a phrase.
func simpleValue(v string) bool {
	v = strings.TrimSpace(strings.TrimRight(v, "."))
	if len(v) > 1 && strings.ContainsAny(v[:1], "\"'`") && v[len(v)-1] == v[0] {
		return true
	}
	return v != "" && len(v) <= 20 && !strings.ContainsAny(v, " \t")
}

// sameDefault reports whether the prose value is the schema's default:
// equal after quotes, a final period and case are dropped.
func sameDefault(prose string, def json.RawMessage) bool {
	norm := func(s string) string {
		s = strings.TrimSpace(s)
		s = strings.TrimRight(s, ".")
		s = strings.Trim(s, "\"'`")
		return strings.ToLower(s)
	}
	var s string
	if json.Unmarshal(def, &s) == nil {
		return norm(prose) == norm(s)
	}
	return norm(prose) == norm(string(compact(def)))
}

// compact returns raw without insignificant white space.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// nesting reports an object parameter whose properties could sit beside
// its siblings: a plain object (no additionalProperties or
// patternProperties schema, no combinators) whose property names collide
// with none of the other parameters at its level.
func (l *linter) nesting(en *entry, n *schemaNode) {
	props, ok := lookup(n.ms, "properties")
	if !ok {
		return
	}
	sub, ok := parseObject(props)
	if !ok || len(sub) == 0 {
		return
	}
	if t, ok := lookupString(n.ms, "type"); ok && t != "object" {
		return
	}
	for _, kw := range []string{"patternProperties", "anyOf", "oneOf", "allOf", "$ref", "not", "if"} {
		if _, ok := lookup(n.ms, kw); ok {
			return
		}
	}
	if ap, ok := lookup(n.ms, "additionalProperties"); ok && !bytes.Equal(bytes.TrimSpace(ap), []byte("false")) {
		return
	}
	var names []string
	for _, s := range sub {
		if s.key == n.name || n.siblings[s.key] {
			return
		}
		names = append(names, s.key)
	}
	l.add(RuleNesting, en, n.path,
		fmt.Sprintf("%s wraps %s in an object; they could be parameters of their own, since no name collides", n.path, listNames(names, 5)),
		fmt.Sprintf("declare %s beside the other parameters, and drop the wrapper object", listNames(names, 3)))
}

// clip shortens s to at most n runes, marking a cut with "…", on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
