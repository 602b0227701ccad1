package codemode

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// callable reports whether a script may call t: codemode and deferred
// tools, loaded or not, and direct tools while they are active — never
// model-only or hidden ones.
func callable(reg *tool.Registry, t tool.Tool) bool {
	switch t.Exposure {
	case tool.Codemode, tool.Deferred:
		return true
	case tool.Direct, "":
		return reg.IsActive(t.Name)
	}
	return false
}

// lookup finds the tool a script names: by its exact name, else by its
// identifier (Identifier).
func (s *script) lookup(name string) (tool.Tool, bool) {
	reg := s.r.cfg.Registry
	if t, ok := reg.Get(name); ok && callable(reg, t) {
		return t, true
	}
	if s.ids == nil {
		s.ids = map[string]string{}
		for _, t := range reg.Tools() {
			id := Identifier(t.Name)
			if _, taken := s.ids[id]; !taken && callable(reg, t) {
				s.ids[id] = t.Name
			}
		}
	}
	if full, ok := s.ids[name]; ok {
		if t, ok := reg.Get(full); ok && callable(reg, t) {
			return t, true
		}
	}
	return tool.Tool{}, false
}

// lookupJSON answers the prelude's lookup: {ok, name, ident}, or {ok:
// false, error}.
func (s *script) lookupJSON(name string) string {
	var out struct {
		OK    bool   `json:"ok"`
		Name  string `json:"name,omitempty"`
		Ident string `json:"ident,omitempty"`
		Error string `json:"error,omitempty"`
	}
	if t, ok := s.lookup(name); ok {
		out.OK, out.Name, out.Ident = true, t.Name, Identifier(t.Name)
	} else {
		out.Error = s.unknownTool("tools."+clipName(name), name)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// unknownTool is the error for a name no callable tool has: the closest
// names, and how to find tools.
func (s *script) unknownTool(what, name string) string {
	msg := fmt.Sprintf("%s is not a tool a script can call", what)
	if hints := s.closest(name); len(hints) > 0 {
		msg += "; did you mean " + strings.Join(hints, ", ") + "?"
	} else {
		msg += "."
	}
	return msg + ` Find tools with await searchTools("what it does"), or check a name with "name" in tools.`
}

// closest returns up to three callable tools whose identifiers are
// nearest to name (edit distance, or containing it), as tools.<id>.
func (s *script) closest(name string) []string {
	if len(name) > 128 {
		name = name[:128]
	}
	s.lookup("") // builds s.ids
	type near struct {
		id   string
		dist int
	}
	var found []near
	low := strings.ToLower(name)
	limit := max(2, len(name)/3)
	// The last part of mcp__server__tool: a script that wrote
	// tools.read_file meant mcp__filesystem__read_file.
	last := func(x string) string {
		if i := strings.LastIndex(x, "__"); i >= 0 {
			return x[i+2:]
		}
		return x
	}
	for id := range s.ids {
		lid := strings.ToLower(id)
		d := levenshtein.ComputeDistance(low, lid)
		if low != "" && (strings.Contains(lid, low) || last(lid) == last(low)) {
			d = min(d, 1)
		}
		if d <= limit {
			found = append(found, near{id, d})
		}
	}
	slices.SortFunc(found, func(a, b near) int {
		return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(a.id, b.id))
	})
	var out []string
	for i := 0; i < len(found) && i < 3; i++ {
		out = append(out, "tools."+found[i].id)
	}
	return out
}

// SearchCall is one searchTools call a script made.
type SearchCall struct {
	// Query is what the script searched for.
	Query string `json:"query"`
	// Namespace is the namespace it searched in, "" for all.
	Namespace string `json:"namespace,omitempty"`
	// Hits are the names found, best first.
	Hits []string `json:"hits"`
}

// searchTools(query, {limit, namespace}) ranks the tools a script can call
// with tool_search's index and ranker.
func (s *script) searchTools(query, optsJSON string) (string, bool, error) {
	searcher := s.r.cfg.Searcher
	if searcher == nil {
		return "", false, errors.New("searchTools is not available here: this runtime has no search index; call the tools listed in the codemode tool's description")
	}
	if len(query) > toolsearch.MaxQueryBytes {
		return "", false, fmt.Errorf("searchTools: the query is %d bytes long; at most %d are accepted: search with a few words that say what the tool does", len(query), toolsearch.MaxQueryBytes)
	}
	var opts struct {
		Limit     *float64 `json:"limit"`
		Namespace *string  `json:"namespace"`
	}
	_ = json.Unmarshal([]byte(optsJSON), &opts)
	limit, scope := toolsearch.DefaultLimit, toolsearch.Scope{Active: true}
	if opts.Limit != nil {
		f := *opts.Limit
		if f <= 0 || f != math.Trunc(f) {
			return "", false, errors.New("searchTools: limit must be a positive integer, such as {limit: 5}")
		}
		limit = int(min(f, toolsearch.MaxLimit))
	}
	if opts.Namespace != nil {
		ns, ok := s.namespace(*opts.Namespace)
		if !ok {
			return "", false, errors.New(s.unknownNamespace(*opts.Namespace))
		}
		scope.Namespace = ns.Name
	}
	out, err := searcher.FindIn(query, limit, scope)
	if err != nil {
		return "", false, errors.New("searchTools: " + err.Error())
	}
	type hit struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Namespace   string `json:"namespace,omitempty"`
	}
	hits := []hit{}
	rec := SearchCall{Query: record(query), Namespace: scope.Namespace, Hits: []string{}}
	reg := s.r.cfg.Registry
	for _, h := range out.Hits {
		t, ok := reg.Get(h.Name)
		if !ok || !callable(reg, t) || t.Handler == nil {
			continue
		}
		x := hit{Name: t.Name, Description: toolsearch.FirstLine(t.Description)}
		if t.Namespace != nil {
			x.Namespace = t.Namespace.Name
		}
		hits = append(hits, x)
		rec.Hits = append(rec.Hits, t.Name)
	}
	s.res.Searches = append(s.res.Searches, rec)
	b, _ := json.Marshal(hits)
	return string(b), true, nil
}

// describeTool(name) gives a tool's name, description, parameter schema
// and namespace.
func (s *script) describeTool(name string) (string, bool, error) {
	t, ok := s.lookup(name)
	if !ok {
		return "", false, errors.New(s.unknownTool(fmt.Sprintf("describeTool(%q)", clipName(name)), name))
	}
	params := t.Parameters
	if !json.Valid(params) {
		params, _ = json.Marshal(string(t.Parameters))
	}
	d := struct {
		Name        string          `json:"name"`
		Identifier  string          `json:"identifier"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Namespace   string          `json:"namespace,omitempty"`
	}{Name: t.Name, Identifier: Identifier(t.Name), Description: t.Description, Parameters: params}
	if len(d.Parameters) == 0 {
		d.Parameters = json.RawMessage(`{}`)
	}
	if t.Namespace != nil {
		d.Namespace = t.Namespace.Name
	}
	b, err := json.Marshal(d)
	return string(b), err == nil, err
}

// describeNamespace(name) gives a namespace's description, instructions
// and the names of the tools a script can call in it.
func (s *script) describeNamespace(name string) (string, bool, error) {
	ns, ok := s.namespace(name)
	if !ok {
		return "", false, errors.New(s.unknownNamespace(name))
	}
	d := struct {
		Name         string   `json:"name"`
		Description  string   `json:"description,omitempty"`
		Instructions string   `json:"instructions,omitempty"`
		Tools        []string `json:"tools"`
	}{Name: ns.Name, Description: ns.Description, Instructions: ns.Instructions, Tools: s.namespaceTools(ns.Name)}
	b, err := json.Marshal(d)
	return string(b), err == nil, err
}

// allTools is ALL_TOOLS: every tool a script can call now, {name,
// description}, in registration order.
func (s *script) allTools() string {
	type entry struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	out := []entry{}
	reg := s.r.cfg.Registry
	for _, t := range reg.Tools() {
		if callable(reg, t) && t.Handler != nil {
			out = append(out, entry{t.Name, t.Description})
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// namespaceTools names the callable tools of a namespace, in registration
// order.
func (s *script) namespaceTools(ns string) []string {
	reg := s.r.cfg.Registry
	names := []string{}
	for _, t := range reg.Tools() {
		if t.Namespace != nil && t.Namespace.Name == ns && callable(reg, t) {
			names = append(names, t.Name)
		}
	}
	return names
}

// namespaces returns every namespace a script may name: those of the
// callable tools, in registration order, then the configured ones.
func (s *script) namespaces() []tool.Namespace {
	reg := s.r.cfg.Registry
	var out []tool.Namespace
	seen := map[string]bool{}
	for _, t := range reg.Tools() {
		if t.Namespace != nil && !seen[t.Namespace.Name] && callable(reg, t) {
			seen[t.Namespace.Name] = true
			out = append(out, *t.Namespace)
		}
	}
	for _, ns := range s.r.cfg.Namespaces {
		if !seen[ns.Name] {
			seen[ns.Name] = true
			out = append(out, ns)
		}
	}
	return out
}

// namespace finds a namespace by any of the spellings the reference
// accepts: mcp__dev-radius, mcp__dev_radius, dev-radius, dev_radius.
func (s *script) namespace(name string) (tool.Namespace, bool) {
	want := foldNamespace(name)
	for _, ns := range s.namespaces() {
		if foldNamespace(ns.Name) == want {
			return ns, true
		}
	}
	return tool.Namespace{}, false
}

func foldNamespace(name string) string {
	return strings.ReplaceAll(strings.TrimPrefix(name, "mcp__"), "-", "_")
}

// unknownNamespace is the error for a namespace no tool has.
func (s *script) unknownNamespace(name string) string {
	var names []string
	for _, ns := range s.namespaces() {
		names = append(names, ns.Name)
	}
	if len(names) == 0 {
		return fmt.Sprintf("namespace %q is unknown: no namespace has tools a script can call", clipName(name))
	}
	if len(names) > 20 {
		names = append(names[:20], fmt.Sprintf("and %d more", len(names)-20))
	}
	return fmt.Sprintf("namespace %q is unknown; the namespaces are: %s", clipName(name), strings.Join(names, ", "))
}

// clipName cuts a name a script gave for an error message.
func clipName(s string) string {
	if len(s) > 128 {
		return s[:128] + "…"
	}
	return s
}

// CallSample is how a script calls the named tool, as the samples of a
// declaration show it: tools.<identifier>({...}).
func CallSample(name string) string { return "tools." + Identifier(name) + "({...})" }

// Identifier returns the name under which a script calls a tool:
// tools.<identifier>. Characters outside A-Z, a-z, 0-9, _ and $ become
// _, and a leading digit gets a _ before it. MCP tools' names
// (mcp__server__tool) are identifiers already. When two tools share an
// identifier the first registered has it; tools["exact-name"] reaches
// either.
func Identifier(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
