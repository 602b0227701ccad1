package codemode

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/internal/cut"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// DefaultBudget is the o200k tokens the codemode tool's description
// spends on listing tools, as the reference's inline budget (3,000
// estimated tokens).
const DefaultBudget = 3000

// The bounds on one listed tool: a brief of at most briefBytes of its
// description's first line, and at most maxParams parameters.
const (
	briefBytes = 160
	maxParams  = 6
)

// Description returns the codemode tool's description: what a script can
// do, its limits, and the codemode tools with how a script calls each.
//
// The listing is computed once, when the Runner is made, from the
// registered tools of codemode exposure (and direct, with
// Config.ListDirect; never from the active set) and
// the configured namespaces, so it is byte-identical however tools load
// and servers connect or fail afterwards: the description of a discovery
// tool stays static, as the prompt cache needs. Tools that register later
// are found with searchTools. Within the budget, tools are placed round
// robin across groups (tools without a namespace first, then namespaces by
// name): each round every group places its cheapest remaining tool if it
// fits, and a group whose next tool does not fit drops out, so every
// namespace is shown before any is complete.
func (r *Runner) Description() string { return r.desc }

// entry is one listed tool.
type entry struct {
	seq  int // registration order
	line string
	cost int
}

// group is the tools of one namespace (or of none).
type group struct {
	ns      tool.Namespace
	entries []entry // by cost
	placed  []entry
}

func describe(tools []tool.Tool, extra []tool.Namespace, direct bool, budget int, l Limits, count func(string) int) string {
	groups := map[string]*group{}
	for i, t := range tools {
		if t.Exposure != tool.Codemode && (!direct || t.Exposure != tool.Direct) {
			continue
		}
		key, ns := "", tool.Namespace{}
		if t.Namespace != nil {
			key, ns = t.Namespace.Name, *t.Namespace
		}
		g := groups[key]
		if g == nil {
			g = &group{ns: ns}
			groups[key] = g
		}
		line := "- " + callLine(t)
		g.entries = append(g.entries, entry{seq: i, line: line, cost: count(line) + 1})
	}
	for _, ns := range extra {
		if groups[ns.Name] == nil {
			groups[ns.Name] = &group{ns: ns}
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys) // "" (no namespace) first
	order := make([]*group, len(keys))
	for i, k := range keys {
		g := groups[k]
		slices.SortStableFunc(g.entries, func(a, b entry) int { return cmp.Or(cmp.Compare(a.cost, b.cost), cmp.Compare(a.seq, b.seq)) })
		order[i] = g
	}
	left := budget
	active := slices.Clone(order)
	for len(active) > 0 {
		next := active[:0]
		for _, g := range active {
			if len(g.placed) == len(g.entries) {
				continue
			}
			e := g.entries[len(g.placed)]
			if e.cost > left {
				continue
			}
			left -= e.cost
			g.placed = append(g.placed, e)
			next = append(next, g)
		}
		active = next
	}

	var b strings.Builder
	b.WriteString(descriptionHead(l))
	if len(order) == 0 {
		b.WriteString("\n\nNo tools are listed here: find the tools you need with searchTools.")
		return b.String()
	}
	b.WriteString("\n\nTools a script can call (some may not be listed: find the others with searchTools):")
	for _, g := range order {
		placed := slices.Clone(g.placed)
		slices.SortFunc(placed, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
		if g.ns.Name != "" {
			head := "\n## " + g.ns.Name
			if d := toolsearch.FirstLine(g.ns.Description); d != "" {
				head += ": " + brief(d, 120)
			}
			switch {
			case len(g.entries) == 0 || len(placed) == 0:
				head += " (tools not listed)"
			case len(placed) < len(g.entries):
				head += " (some tools not listed)"
			}
			b.WriteString(head)
		} else if len(placed) < len(g.entries) {
			b.WriteString("\n(some tools without a namespace are not listed)")
		}
		for _, e := range placed {
			b.WriteString("\n" + e.line)
		}
	}
	return b.String()
}

// descriptionHead is the fixed part of the description.
func descriptionHead(l Limits) string {
	return "Run JavaScript that calls other tools: chains, loops, Promise.all, filtering large results. " +
		"Only what the script logs and returns reaches you, not the results of the calls it makes.\n\n" +
		"The code is the body of an async function: use await, and return the answer (a string as it is, any other value as JSON).\n" +
		"- tools.<name>(args) calls a tool with one object of arguments; it resolves to the tool's structured output when it has one, else its text, and rejects with the tool's error. " +
		"Characters of a name outside A-Z, a-z, 0-9 and _ become _; tools[\"exact-name\"] works too.\n" +
		"- await searchTools(query, {limit, namespace}) finds tools by what they do (the index of tool_search): [{name, description, namespace}], 8 by default.\n" +
		"- await describeTool(name) gives a tool's description and parameter schema; await describeNamespace(name) a server's description, instructions and tool names.\n" +
		"- console.log, info, warn and error are captured into the result; text(s) and image(base64, mimeType) add parts to it; exit(value) ends the script at once.\n" +
		"- store(key, value) keeps a JSON value for the session's later scripts (kept only if this script succeeds); load(key) reads it. ALL_TOOLS lists [{name, description}].\n" +
		"- A first line // @options: {\"max_output_tokens\": N, \"timeout_ms\": M} sets the output tokens you get back and lowers the time limit.\n" +
		fmt.Sprintf("No filesystem, network, timers or modules; the built-ins are frozen. Limits: %v, %s of memory, %d output tokens, %d tool calls (%d at a time).",
			l.Timeout, byteSize(l.Memory), l.OutputTokens, l.Calls, l.Concurrent)
}

// callLine is how a script calls t: tools.<id>({a: string, b?: number}):
// brief.
func callLine(t tool.Tool) string {
	line := "tools." + Identifier(t.Name) + "(" + signature(t.Parameters) + ")"
	if d := toolsearch.FirstLine(t.Description); d != "" {
		line += ": " + brief(d, briefBytes)
	}
	return line
}

// signature renders a schema's top-level parameters: the required ones in
// the schema's order, then the optional ones by name, with their types.
func signature(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return ""
	}
	var names []string
	required := map[string]bool{}
	for _, n := range s.Required {
		if _, ok := s.Properties[n]; ok && !required[n] {
			required[n] = true
			names = append(names, n)
		}
	}
	var optional []string
	for n := range s.Properties {
		if !required[n] {
			optional = append(optional, n)
		}
	}
	slices.Sort(optional)
	names = append(names, optional...)
	var parts []string
	for i, n := range names {
		if i == maxParams {
			parts = append(parts, "…")
			break
		}
		mark := ""
		if !required[n] {
			mark = "?"
		}
		parts = append(parts, n+mark+": "+typeName(s.Properties[n].Type))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func typeName(t any) string {
	switch t := t.(type) {
	case string:
		return t
	case []any:
		var names []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				names = append(names, s)
			}
		}
		if len(names) > 0 {
			return strings.Join(names, "|")
		}
	}
	return "any"
}

// brief cuts s to n bytes, whole runes, with "…".
func brief(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:cut.Before(s, n-len("…"))] + "…"
}
