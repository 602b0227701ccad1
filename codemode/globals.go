package codemode

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/dop251/goja"

	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// install sets the script's globals: tools, searchTools, describeTool,
// describeNamespace and console. goja itself brings no require, no
// timers, no I/O and no host objects.
func (s *script) install() error {
	vm := s.vm
	var ok bool
	jsonObj := vm.Get("JSON").ToObject(vm)
	if s.stringify, ok = goja.AssertFunction(jsonObj.Get("stringify")); !ok {
		return errors.New("JSON.stringify is missing")
	}
	if s.parse, ok = goja.AssertFunction(jsonObj.Get("parse")); !ok {
		return errors.New("JSON.parse is missing")
	}
	if s.arrayIsArray, ok = goja.AssertFunction(vm.Get("Array").ToObject(vm).Get("isArray")); !ok {
		return errors.New("Array.isArray is missing")
	}
	s.errorCtor = vm.Get("Error").ToObject(vm)

	target := vm.NewObject()
	tools := vm.NewProxy(target, &goja.ProxyTrapConfig{
		Get: func(target *goja.Object, name string, _ goja.Value) goja.Value {
			if passThrough[name] {
				return target.Get(name)
			}
			t, ok := s.lookup(name)
			if !ok {
				panic(vm.NewTypeError(s.unknownTool("tools."+name, name)))
			}
			return s.function(t)
		},
		Has: func(_ *goja.Object, name string) bool {
			_, ok := s.lookup(name)
			return ok
		},
		Set: func(*goja.Object, string, goja.Value, goja.Value) bool { return false },
	})
	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		if err := console.Set(level, func(call goja.FunctionCall) goja.Value {
			s.log(level, call.Arguments)
			return goja.Undefined()
		}); err != nil {
			return err
		}
	}
	for name, v := range map[string]any{
		"tools":             tools,
		"console":           console,
		"searchTools":       s.searchTools,
		"describeTool":      s.describeTool,
		"describeNamespace": s.describeNamespace,
	} {
		if err := vm.Set(name, v); err != nil {
			return err
		}
	}
	return nil
}

// passThrough are the members of tools that are the object's own, so that
// printing it, awaiting it or converting it does not look up a tool.
var passThrough = map[string]bool{
	"then": true, "toJSON": true, "toString": true, "valueOf": true, "constructor": true,
	"hasOwnProperty": true, "isPrototypeOf": true, "propertyIsEnumerable": true, "toLocaleString": true,
	"__proto__": true,
}

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

// function returns the script's function for t, the same one each time.
func (s *script) function(t tool.Tool) goja.Value {
	if f, ok := s.funcs[t.Name]; ok {
		return f
	}
	f := s.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		return s.callTool(t, call.Argument(0))
	})
	s.funcs[t.Name] = f
	return f
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

// log writes one console line.
func (s *script) log(level string, args []goja.Value) {
	parts := make([]string, len(args))
	n := 1
	for i, a := range args {
		text, fits := s.showWithin(a, s.limits.Output-s.outBytes-n+1)
		parts[i] = text
		n += len(parts[i]) + 1
		if !fits {
			n = s.limits.Output + 1 // the value alone is over the limit
		}
		if s.outBytes+n > s.limits.Output {
			break // the line is over the limit already
		}
	}
	if !s.output(n) {
		return
	}
	s.res.Logs = append(s.res.Logs, Log{Level: level, Text: strings.Join(parts, " ")})
}

// resolved returns a promise resolved with v.
func (s *script) resolved(v any) goja.Value {
	p, resolve, _ := s.vm.NewPromise()
	if err := resolve(v); err != nil {
		panic(err)
	}
	return s.vm.ToValue(p)
}

// rejected returns a promise rejected with an Error of msg.
func (s *script) rejected(msg string) goja.Value {
	p, _, reject := s.vm.NewPromise()
	if err := reject(s.newError(msg)); err != nil {
		panic(err)
	}
	return s.vm.ToValue(p)
}

// searchTools(query, {limit, namespace}) ranks the tools a script can call
// with tool_search's index and ranker.
func (s *script) searchTools(call goja.FunctionCall) goja.Value {
	searcher := s.r.cfg.Searcher
	if searcher == nil {
		return s.rejected("searchTools is not available here: this runtime has no search index; call the tools listed in the codemode tool's description")
	}
	q := call.Argument(0)
	if goja.IsUndefined(q) || goja.IsNull(q) {
		return s.rejected(`searchTools needs a query: await searchTools("read a file", {limit: 5})`)
	}
	query := q.String()
	if len(query) > toolsearch.MaxQueryBytes {
		return s.rejected(fmt.Sprintf("searchTools: the query is %d bytes long; at most %d are accepted: search with a few words that say what the tool does", len(query), toolsearch.MaxQueryBytes))
	}
	limit, scope := toolsearch.DefaultLimit, toolsearch.Scope{Active: true}
	if opts, ok := call.Argument(1).(*goja.Object); ok {
		if v := opts.Get("limit"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
			f := v.ToFloat()
			if f <= 0 || f != math.Trunc(f) {
				return s.rejected("searchTools: limit must be a positive integer, such as {limit: 5}")
			}
			limit = int(min(f, toolsearch.MaxLimit))
		}
		if v := opts.Get("namespace"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
			ns, ok := s.namespace(v.String())
			if !ok {
				return s.rejected(s.unknownNamespace(v.String()))
			}
			scope.Namespace = ns.Name
		}
	}
	out, err := searcher.FindIn(query, limit, scope)
	if err != nil {
		return s.rejected("searchTools: " + err.Error())
	}
	hits := []any{}
	reg := s.r.cfg.Registry
	for _, h := range out.Hits {
		t, ok := reg.Get(h.Name)
		if !ok || !callable(reg, t) || t.Handler == nil {
			continue
		}
		hit := map[string]any{"name": t.Name, "description": toolsearch.FirstLine(t.Description)}
		if t.Namespace != nil {
			hit["namespace"] = t.Namespace.Name
		}
		hits = append(hits, hit)
	}
	return s.resolved(hits)
}

// describeTool(name) gives a tool's name, description, parameter schema
// and namespace.
func (s *script) describeTool(call goja.FunctionCall) goja.Value {
	name := call.Argument(0).String()
	t, ok := s.lookup(name)
	if !ok {
		return s.rejected(s.unknownTool(fmt.Sprintf("describeTool(%q)", clipName(name)), name))
	}
	params, err := s.parse(goja.Undefined(), s.vm.ToValue(string(t.Parameters)))
	if err != nil {
		params = s.vm.ToValue(string(t.Parameters))
	}
	d := map[string]any{"name": t.Name, "identifier": Identifier(t.Name), "description": t.Description, "parameters": params}
	if t.Namespace != nil {
		d["namespace"] = t.Namespace.Name
	}
	return s.resolved(d)
}

// describeNamespace(name) gives a namespace's description, instructions
// and the names of the tools a script can call in it.
func (s *script) describeNamespace(call goja.FunctionCall) goja.Value {
	name := call.Argument(0).String()
	ns, ok := s.namespace(name)
	if !ok {
		return s.rejected(s.unknownNamespace(name))
	}
	d := map[string]any{"name": ns.Name, "tools": s.namespaceTools(ns.Name)}
	if ns.Description != "" {
		d["description"] = ns.Description
	}
	if ns.Instructions != "" {
		d["instructions"] = ns.Instructions
	}
	return s.resolved(d)
}

// namespaceTools names the callable tools of a namespace, in registration
// order.
func (s *script) namespaceTools(ns string) []any {
	reg := s.r.cfg.Registry
	names := []any{}
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
