package lint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/toolshelf/toolshelf/tool"
)

// plainName returns the model-facing name of a server tool before the
// shelf resolves collisions: mcp__<server>__<tool> with every character
// outside [A-Za-z0-9_] replaced by an underscore. ([tool.NamespaceName]
// sanitises its argument and adds the mcp__ prefix, which is already
// sanitised, so it yields exactly that.)
func plainName(server, toolName string) string {
	return tool.NamespaceName(server + "__" + toolName)
}

// names reports model-facing names that collide after sanitising and names
// too long to keep.
func (l *linter) names(pool []*entry) {
	groups := map[string][]*entry{}
	for _, en := range pool {
		p := plainName(en.server.Name, en.e.Name)
		groups[p] = append(groups[p], en)
		if len(p) > tool.MaxNameLength && l.on(RuleNameLength) {
			budget := tool.MaxNameLength - len(plainName(en.server.Name, ""))
			l.add(RuleNameLength, en, "",
				fmt.Sprintf("the model-facing name %s has %d characters, more than %d: the shelf cuts it to %s, which the model cannot guess",
					p, len(p), tool.MaxNameLength, en.tool.Name),
				fmt.Sprintf("shorten the tool's name to at most %d characters", max(budget, 1)))
		}
	}
	if !l.on(RuleNameCollision) {
		return
	}
	for p, g := range groups {
		if len(g) < 2 {
			continue
		}
		for _, en := range g {
			var others []string
			for _, o := range g {
				if o != en {
					others = append(others, o.server.Name+"/"+o.e.Name)
				}
			}
			l.add(RuleNameCollision, en, "",
				fmt.Sprintf("%s/%s and %s all become %s: the shelf names this one %s, and select:%s cannot reach it",
					en.server.Name, en.e.Name, listNames(others, 3), p, en.tool.Name, p),
				"rename the tools so that they differ in letters, digits or underscores, not only in other characters")
		}
	}
}

// verbGroups are the verbs that name one action; a server should use one
// of each group. The first verb of a group is the one suggested on a tie.
var verbGroups = [][]string{
	{"get", "fetch", "retrieve", "obtain"},
	{"list", "enumerate"},
	{"create", "new", "make"},
	{"delete", "destroy", "del", "rm", "erase"},
	{"update", "modify", "edit", "change", "patch"},
	{"search", "find", "lookup"},
	{"run", "execute", "exec", "invoke"},
}

// verbGroup maps a verb to its group's index.
var verbGroup = func() map[string]int {
	m := map[string]int{}
	for i, g := range verbGroups {
		for _, v := range g {
			m[v] = i
		}
	}
	return m
}()

// actionVerb returns the verb of a tool's name: the first of its first
// three words (after words of the server's name) that belongs to a verb
// group.
func actionVerb(server, name string) (verb string, ok bool) {
	serverWords := map[string]bool{}
	for _, w := range splitWords(server) {
		serverWords[w] = true
	}
	ws := splitWords(name)
	for len(ws) > 1 && serverWords[ws[0]] {
		ws = ws[1:]
	}
	for i, w := range ws {
		if i == 3 {
			break
		}
		if _, ok := verbGroup[w]; ok {
			return w, true
		}
	}
	return "", false
}

// verbPrefixes reports servers that name one action with several verbs
// (get_issue beside fetch_comments): each tool whose verb is not the one
// most of the server's tools use for that action.
func (l *linter) verbPrefixes(pool []*entry) {
	if !l.on(RuleVerbPrefix) {
		return
	}
	type key struct {
		server string
		group  int
	}
	uses := map[key]map[string][]*entry{}
	var keys []key
	for _, en := range pool {
		v, ok := actionVerb(en.server.Name, en.e.Name)
		if !ok {
			continue
		}
		k := key{en.server.Name, verbGroup[v]}
		if uses[k] == nil {
			uses[k] = map[string][]*entry{}
			keys = append(keys, k)
		}
		uses[k][v] = append(uses[k][v], en)
	}
	for _, k := range keys {
		byVerb := uses[k]
		if len(byVerb) < 2 {
			continue
		}
		vs := make([]string, 0, len(byVerb))
		for v := range byVerb {
			vs = append(vs, v)
		}
		group := verbGroups[k.group]
		slices.SortFunc(vs, func(a, b string) int {
			return cmp.Or(-cmp.Compare(len(byVerb[a]), len(byVerb[b])),
				cmp.Compare(slices.Index(group, a), slices.Index(group, b)))
		})
		main := vs[0]
		var summary []string
		for _, v := range vs {
			summary = append(summary, fmt.Sprintf("%s (%d)", v, len(byVerb[v])))
		}
		for _, v := range vs[1:] {
			for _, en := range byVerb[v] {
				l.add(RuleVerbPrefix, en, "",
					fmt.Sprintf("%s names one action with %s; %s uses %s", en.server.Name, strings.Join(summary, ", "), en.e.Name, v),
					fmt.Sprintf("use one verb for the action, e.g. rename %s to %s", en.e.Name, replaceWord(en.e.Name, v, main)))
			}
		}
	}
}

// replaceWord replaces the first identifier word w (any case) of name by
// repl, keeping the word's capitalisation.
func replaceWord(name, w, repl string) string {
	lower := strings.ToLower(name)
	for from := 0; from < len(lower); {
		i := strings.Index(lower[from:], w)
		if i < 0 {
			break
		}
		start, end := from+i, from+i+len(w)
		from = start + 1
		before := start == 0 || !unicode.IsLetter(rune(name[start-1])) || unicode.IsLower(rune(name[start-1])) && unicode.IsUpper(rune(name[start]))
		after := end == len(name) || !unicode.IsLower(rune(name[end]))
		if !before || !after {
			continue
		}
		r := repl
		if unicode.IsUpper(rune(name[start])) {
			r = strings.ToUpper(repl[:1]) + repl[1:]
		}
		return name[:start] + r + name[end:]
	}
	return name
}

// nearDuplicates reports pairs of tools of one server whose first sentences
// share so many terms that a search cannot tell them apart and splits its
// scores between them.
func (l *linter) nearDuplicates(pool []*entry) {
	if !l.on(RuleNearDuplicate) {
		return
	}
	byServer := map[string][]*entry{}
	var servers []string
	for _, en := range pool {
		if byServer[en.server.Name] == nil {
			servers = append(servers, en.server.Name)
		}
		byServer[en.server.Name] = append(byServer[en.server.Name], en)
	}
	for _, s := range servers {
		tools := byServer[s]
		sets := make([]map[string]bool, len(tools))
		for i, en := range tools {
			if ss := sentences(en.e.Description); len(ss) > 0 {
				sets[i] = termSet(ss[0])
			}
		}
		for j := range tools {
			for i := range j {
				if len(sets[i]) < minDuplicateTerms || len(sets[j]) < minDuplicateTerms {
					continue
				}
				sim := jaccard(sets[i], sets[j])
				if sim < l.opts.NearDuplicate {
					continue
				}
				l.add(RuleNearDuplicate, tools[j], "",
					fmt.Sprintf("the first sentences of %s and %s share %.0f%% of their terms: a search splits its score between them and the model cannot tell which to call",
						tools[i].e.Name, tools[j].e.Name, 100*sim),
					"say in each description what sets it apart (when to use this one rather than the other), or merge the two tools into one with a parameter")
			}
		}
	}
}

// minDuplicateTerms is the fewest description terms a tool needs for the
// near-duplicate rule: shorter descriptions are compared by chance.
const minDuplicateTerms = 3
