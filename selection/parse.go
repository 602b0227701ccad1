package selection

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Parsed is a model's selection answer, read forgivingly.
type Parsed struct {
	// Names are the known names the answer selected, in answer order,
	// without repeats, spelled as the catalog spells them.
	Names []string
	// Unknown are the names the answer gave that the catalog does not
	// have.
	Unknown []string
	// None reports that the answer said no tool (or group) fits.
	None bool
}

// Resolver maps what a model wrote to catalog names: the exact name, the
// name in another case, or the tool's own part after the last "__" (or a
// group's part after "mcp__") when only one catalog name ends that way.
type Resolver struct {
	exact  map[string]string
	folded map[string]string
	suffix map[string][]string
}

// NewResolver returns a resolver for names.
func NewResolver(names []string) *Resolver {
	r := &Resolver{exact: map[string]string{}, folded: map[string]string{}, suffix: map[string][]string{}}
	for _, n := range names {
		r.exact[n] = n
		r.folded[strings.ToLower(n)] = n
		if i := strings.LastIndex(n, "__"); i >= 0 && i+2 < len(n) {
			s := strings.ToLower(n[i+2:])
			r.suffix[s] = append(r.suffix[s], n)
		}
	}
	return r
}

// Resolve returns the catalog name a written name means.
func (r *Resolver) Resolve(s string) (string, bool) {
	if n, ok := r.exact[s]; ok {
		return n, true
	}
	l := strings.ToLower(s)
	if n, ok := r.folded[l]; ok {
		return n, true
	}
	if ns := r.suffix[l]; len(ns) == 1 {
		return ns[0], true
	}
	return "", false
}

// known reports whether a written name resolves to a catalog name.
func (r *Resolver) known(s string) bool {
	_, ok := r.Resolve(s)
	return ok
}

var (
	fence     = regexp.MustCompile("(?s)```[a-zA-Z0-9_-]*\\s*(.*?)```")
	nameToken = regexp.MustCompile(`[A-Za-z0-9_.-]+`)
	listMark  = regexp.MustCompile(`^\s*(?:[-*•+]|\d+[.)]|\[[ xX]\])\s*`)
	noneWords = map[string]bool{"none": true, "nothing": true, "no tools": true, "no tool": true, "n/a": true,
		"no groups": true, "no group": true, "无": true, "没有": true, "无合适工具": true}
)

// Parse reads a selection answer. It accepts comma-, semicolon- or
// line-separated names, bullet and numbered lists, names in backticks or
// quotes, explanations after a name ("name: because", "name - because"),
// fenced blocks, and JSON (an array of names, of {"name": ...} objects, or
// an object holding such an array under "tools", "names", "groups" or
// "selected"). When nothing so structured yields a known name, every
// word-like token of the answer is tried. Names resolve through r; "NONE"
// (or "no tools", "无") on its own means nothing fits.
func Parse(answer string, r *Resolver) Parsed {
	var p Parsed
	seen := map[string]bool{}
	add := func(raw string) {
		raw = strings.Trim(strings.TrimSpace(raw), "`'\"*_[]()<>")
		raw = strings.TrimRight(raw, ".,;:!?")
		if raw == "" {
			return
		}
		if n, ok := r.Resolve(raw); ok {
			if !seen[n] {
				seen[n] = true
				p.Names = append(p.Names, n)
			}
			return
		}
		if !seen["?"+raw] && nameToken.MatchString(raw) && len(raw) <= 200 {
			seen["?"+raw] = true
			p.Unknown = append(p.Unknown, raw)
		}
	}
	text := strings.TrimSpace(answer)
	if m := fence.FindAllStringSubmatch(text, -1); len(m) > 0 {
		var inner []string
		for _, f := range m {
			inner = append(inner, f[1])
		}
		text = strings.Join(inner, "\n")
	}
	if noneWords[strings.ToLower(strings.Trim(text, " .!`'\"\n"))] {
		p.None = true
		return p
	}
	if items, ok := jsonNames(text); ok {
		for _, it := range items {
			add(it)
		}
		p.None = len(items) == 0
		return p
	}
	for _, line := range strings.Split(text, "\n") {
		line = listMark.ReplaceAllString(line, "")
		for _, item := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' || r == '，' || r == '、' }) {
			item = strings.TrimSpace(item)
			// A name comes first; what follows a separator explains it.
			tok := nameToken.FindString(strings.Trim(item, "`'\"*"))
			if tok == "" || !r.known(strings.TrimRight(tok, ".")) && strings.ContainsAny(item, " \t") {
				// Prose: try its tokens below.
				continue
			}
			add(tok)
		}
	}
	if len(p.Names) == 0 {
		// Prose around the names: any token that is a known name.
		for _, tok := range nameToken.FindAllString(text, -1) {
			if n, ok := r.Resolve(strings.TrimRight(tok, ".")); ok && !seen[n] {
				seen[n] = true
				p.Names = append(p.Names, n)
			}
		}
		if len(p.Names) > 0 {
			p.Unknown = nil // the unknown "names" were words of the prose
		}
	}
	return p
}

// jsonNames reads names from a JSON answer.
func jsonNames(text string) ([]string, bool) {
	if text == "" || (text[0] != '[' && text[0] != '{') {
		return nil, false
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, false
	}
	if obj, ok := v.(map[string]any); ok {
		found := false
		for _, k := range []string{"tools", "names", "groups", "selected", "tool_names"} {
			if inner, ok := obj[k]; ok {
				v, found = inner, true
				break
			}
		}
		if !found {
			if n, ok := obj["name"].(string); ok {
				return []string{n}, true
			}
			return nil, false
		}
	}
	arr, ok := v.([]any)
	if !ok {
		if s, ok := v.(string); ok {
			return []string{s}, true
		}
		return nil, false
	}
	var out []string
	for _, it := range arr {
		switch it := it.(type) {
		case string:
			out = append(out, it)
		case map[string]any:
			if n, ok := it["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out, true
}
