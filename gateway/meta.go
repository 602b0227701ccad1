package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/internal/cut"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// The meta surface's tools. Their descriptions are static: they name no
// tool, server or count, so tools/list is the same bytes for the life of
// the process.
const (
	// SearchName is the meta surface's search tool.
	SearchName = "tool_search"
	// CallName is the meta surface's dispatch tool.
	CallName = "call_tool"

	searchDescription = "Search the tools this gateway can reach and return the best matches with their " +
		"definitions: name, description and the JSON Schema of their arguments. Search first, then run a " +
		"found tool with call_tool. Describe the action in a few words (\"read a file\", \"create github " +
		"issue\"); \"select:<name>,<name>\" returns those tools by name."
	searchSchema = `{"type":"object","properties":{` +
		`"query":{"type":"string","description":"What the tool should do, or select:<name>,... for tools by name."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":32,"description":"How many tools to return (default 5)."}` +
		`},"required":["query"]}`
	callDescription = "Run a tool found with tool_search: give its name and its arguments as a JSON object " +
		"that matches the tool's schema. The result is the tool's own result."
	callSchema = `{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The tool's name as tool_search returned it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments, matching its schema."}` +
		`},"required":["name"]}`

	// defaultSearchLimit is how many tools a search returns unless told.
	defaultSearchLimit = 5
	// maxSearchBytes bounds a search result's text; maxDescriptionBytes
	// and maxSchemaBytes bound one tool's part of it.
	maxSearchBytes      = 24 << 10
	maxDescriptionBytes = 1 << 10
	maxSchemaBytes      = 4 << 10
)

// metaTools are the meta surface's tools/list entries.
func metaTools() []*mcp.Tool {
	ro, open := true, true
	return []*mcp.Tool{
		{Name: SearchName, Description: searchDescription, InputSchema: json.RawMessage(searchSchema),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ro, OpenWorldHint: &open}},
		{Name: CallName, Description: callDescription, InputSchema: json.RawMessage(callSchema),
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: &open}},
	}
}

func (g *Gateway) newMeta() *mcp.Server {
	srv := mcp.NewServer(g.impl(), &mcp.ServerOptions{
		Instructions: "Find tools with tool_search, then run them with call_tool.",
		Logger:       g.cfg.Logger,
		// The list never changes: no list_changed to promise.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	tools := metaTools()
	srv.AddTool(tools[0], g.searchOn(Meta))
	srv.AddTool(tools[1], g.call)
	return srv
}

// searchOn returns the tool_search of a surface (meta or codemode).
func (g *Gateway) searchOn(s Surface) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return g.search(ctx, s, req)
	}
}

// search answers tool_search: it waits for the servers still connecting
// (as long as the request allows), ranks every tool on the shelf and
// returns the hits' definitions, with how the surface runs them.
func (g *Gateway) search(ctx context.Context, s Surface, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Query *string         `json:"query"`
		Limit json.RawMessage `json:"limit"`
	}
	if err := json.Unmarshal(orEmpty(req.Params.Arguments), &args); err != nil || args.Query == nil {
		return errorResult(`tool_search needs {"query": "<what the tool should do>"}.`), nil
	}
	limit := defaultSearchLimit
	if len(args.Limit) > 0 && string(args.Limit) != "null" {
		var n float64
		if err := json.Unmarshal(args.Limit, &n); err != nil || n < 1 || n != float64(int(n)) {
			return errorResult("limit must be a positive integer."), nil
		}
		limit = min(int(n), toolsearch.MaxLimit)
	}
	if len(*args.Query) > toolsearch.MaxQueryBytes {
		return errorResult(fmt.Sprintf("The query is %d bytes long; at most %d.", len(*args.Query), toolsearch.MaxQueryBytes)), nil
	}
	if err := g.mcp.WaitAll(ctx); err != nil {
		return nil, err
	}
	out, err := g.searcher.Find(*args.Query, limit)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	g.record(s, SearchName, nil, nil)
	return textResult(g.searchText(ctx, s, out)), nil
}

// searchText renders the hits for the model: each tool's name, its
// description and the schema of its arguments; on the codemode surface,
// also how a script calls it.
func (g *Gateway) searchText(ctx context.Context, s Surface, out toolsearch.Outcome) string {
	var b strings.Builder
	var shown int
	for _, h := range out.Hits {
		t, ok := g.reg.Get(h.Name)
		if !ok || !callable(t) {
			continue
		}
		var one strings.Builder
		fmt.Fprintf(&one, "\n## %s\n%s\n", t.Name, clip(strings.TrimSpace(t.Description), maxDescriptionBytes))
		if s == Codemode {
			fmt.Fprintf(&one, "In a script: await %s\n", codemode.CallSample(t.Name))
		}
		fmt.Fprintf(&one, "Arguments (JSON Schema): %s\n", clip(string(schema(t)), maxSchemaBytes))
		if b.Len()+one.Len() > maxSearchBytes {
			break
		}
		b.WriteString(one.String())
		shown++
	}
	var head string
	switch shown {
	case 0:
		head = toolsearch.NoMatches
		if hint := out.Hint.String(); hint != "" {
			head += "\n" + hint
		}
	case 1:
		head = "1 tool found. " + runHint(s, 1)
	default:
		head = fmt.Sprintf("%d tools found, best first. %s", shown, runHint(s, shown))
	}
	text := head + b.String()
	for _, n := range g.mcp.SearchNotes(ctx) {
		text += "\n" + n
	}
	return text
}

// runHint says how a surface's client runs the tools a search found: one
// (n is 1) or any of them.
func runHint(s Surface, n int) string {
	switch {
	case s == Codemode && n == 1:
		return "Call it in a script with " + CodeName + ":"
	case s == Codemode:
		return "Call them in a script with " + CodeName + ":"
	case n == 1:
		return `Run it with call_tool {"name": "<name>", "arguments": {...}}:`
	}
	return `Run one with call_tool {"name": "<name>", "arguments": {...}}:`
}

// clip cuts s to at most n bytes, whole runes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:cut.Before(s, n)] + "…"
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

// call answers call_tool: it resolves the name, repairs the arguments,
// validates them against the target's schema and dispatches.
func (g *Gateway) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(orEmpty(req.Params.Arguments), &args); err != nil || args.Name == "" {
		return errorResult(`call_tool needs {"name": "<a tool tool_search found>", "arguments": {...}}.`), nil
	}
	name, problem, err := g.resolve(ctx, args.Name)
	switch {
	case err != nil:
		return nil, err
	case problem != "":
		return errorResult(problem), nil
	}
	callArgs := repairArguments(args.Arguments)
	return g.dispatch(ctx, Meta, name, callArgs, func(t tool.Tool, err error) string {
		return fmt.Sprintf("Invalid arguments for %s: %v\nIts arguments must match this JSON Schema: %s\n"+
			`Fix the arguments and call again: call_tool {"name": %q, "arguments": {...}}`,
			t.Name, err, clip(string(schema(t)), maxSchemaBytes), t.Name)
	})
}

// repairArguments accepts the common malformations of call_tool's
// arguments: a JSON string that holds the object, or nothing at all.
func repairArguments(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if inner := bytes.TrimSpace([]byte(s)); len(inner) > 0 && inner[0] == '{' && json.Valid(inner) {
				return inner
			}
		}
	}
	return raw
}

// resolve finds the tool a model named: the exact name; the same name in
// another case or with - for _; or a name without the mcp__<server>__
// prefix, when one tool has it. A server still connecting is waited for
// when the name carries its prefix; a name that fits no tool yet may be
// any such server's, so then every server still connecting is waited for
// before the answer is no. problem is what to tell the model when no tool
// fits; err is ctx's when it ended.
func (g *Gateway) resolve(ctx context.Context, name string) (resolved, problem string, err error) {
	if t, ok := g.reg.Get(name); ok && callable(t) {
		return name, "", nil
	}
	if err := g.mcp.WaitFor(ctx, name); err != nil {
		return "", "", err
	}
	if resolved, problem, found := g.match(name); found {
		return resolved, problem, nil
	}
	if err := g.mcp.WaitAll(ctx); err != nil {
		return "", "", err
	}
	if resolved, problem, found := g.match(name); found {
		return resolved, problem, nil
	}
	return "", fmt.Sprintf("No tool named %q: search for it with tool_search and use a name it returns.", name), nil
}

// match looks name up among the tools registered now, as resolve
// describes; found is false when no tool fits it.
func (g *Gateway) match(name string) (resolved, problem string, found bool) {
	if t, ok := g.reg.Get(name); ok && callable(t) {
		return name, "", true
	} else if ok && t.Exposure == tool.Hidden {
		return "", fmt.Sprintf("Tool %s is not available through this gateway.", name), true
	}
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "_")) }
	want := norm(name)
	var exact, suffix []string
	for _, t := range g.reg.Tools() {
		if !callable(t) {
			continue
		}
		n := norm(t.Name)
		switch {
		case n == want:
			exact = append(exact, t.Name)
		case strings.HasSuffix(n, "__"+want) || (t.Origin.Tool != "" && norm(t.Origin.Tool) == want):
			suffix = append(suffix, t.Name)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], "", true
	case len(exact) == 0 && len(suffix) == 1:
		return suffix[0], "", true
	case len(exact)+len(suffix) > 1:
		return "", fmt.Sprintf("%q names more than one tool (%s): call_tool with the full name.", name, strings.Join(append(exact, suffix...), ", ")), true
	}
	return "", "", false
}
