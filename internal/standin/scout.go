package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/selection"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// Scout plays a model that helps itself, so an agent can be tried end to
// end offline. It answers the last user request, a follow-up of a resumed
// conversation included. It calls a tool it already has when the request
// names it (a word of the tool's own name, such as "echo" for
// mcp__t__echo; among tools named alike, one not called for an earlier
// request, then the one whose description shares most words with the
// request, then the one with fewest other words in its name); otherwise it
// searches with the request's words when tool_search is declared and
// calls the first tool the search loaded, or, without tool_search, the
// declared tool whose name and description share most words with the
// request. Arguments are made from the tool's schema; a path argument of a
// follow-up ("list its files") is the last absolute path an earlier tool
// result gave. The answer reports what the tool returned. It calls loaded
// tools through call_tool when the request declares them that way.
type Scout struct{}

// Respond answers one request.
func (Scout) Respond(_ context.Context, ex *emulator.Exchange) (*emulator.Reply, error) {
	u := lastUserRequest(ex.Turns)
	if u < 0 {
		return &emulator.Reply{Text: "There is no request to answer."}, nil
	}
	request := ex.Turns[u].Text
	if reply := scoutSelection(ex.Turns, request); reply != nil {
		return reply, nil
	}
	direct, bridged := Offered(ex)
	var calls []emulator.Call
	results := map[string]emulator.Turn{}
	for _, t := range ex.Turns[u+1:] {
		switch t.Role {
		case "assistant":
			calls = append(calls, t.Calls...)
		case "tool":
			results[t.CallID] = t
		}
	}
	if len(calls) == 0 {
		if name := namedTool(ex, bridged, request, ex.Turns[:u]); name != "" {
			if schema, ok := direct[name]; ok {
				return &emulator.Reply{Calls: []emulator.Call{{Name: name, Arguments: contextArguments(schema, ex.Turns[:u])}}}, nil
			}
			args, _ := json.Marshal(map[string]any{"name": name, "arguments": contextArguments(bridged[name], ex.Turns[:u])})
			return &emulator.Reply{Calls: []emulator.Call{{Name: CallTool, Arguments: args}}}, nil
		}
		if _, ok := direct[searchTool]; ok {
			query := strings.Join(strings.Fields(request), " ")
			if len(query) > 200 {
				query = query[:200]
			}
			args, _ := json.Marshal(map[string]string{"query": query})
			return &emulator.Reply{Calls: []emulator.Call{{Name: searchTool, Arguments: args}}}, nil
		}
		if name := bestMatch(ex.Tools, request); name != "" {
			return &emulator.Reply{Calls: []emulator.Call{{Name: name, Arguments: ExampleArguments(direct[name])}}}, nil
		}
		return &emulator.Reply{Text: "I have no tool for that: " + request}, nil
	}
	last := calls[len(calls)-1]
	res := results[last.ID]
	if last.Name == searchTool {
		for _, name := range loadedNames(res.Text) {
			if schema, ok := direct[name]; ok {
				return &emulator.Reply{Calls: []emulator.Call{{Name: name, Arguments: contextArguments(schema, ex.Turns[:u])}}}, nil
			}
			if schema, ok := bridged[name]; ok {
				args, _ := json.Marshal(map[string]any{"name": name, "arguments": contextArguments(schema, ex.Turns[:u])})
				return &emulator.Reply{Calls: []emulator.Call{{Name: CallTool, Arguments: args}}}, nil
			}
		}
		return &emulator.Reply{Text: "The search loaded nothing I can call: " + firstLine(res.Text)}, nil
	}
	name, _ := UnwrapCall(last)
	text := res.Text
	if len(text) > 1000 {
		text = text[:1000] + "…"
	}
	verb := "returned"
	if res.IsError {
		verb = "failed"
	}
	return &emulator.Reply{Text: fmt.Sprintf("%s %s:\n%s", name, verb, text)}, nil
}

// catalogLine is a line of a selection catalog: "name: brief" or
// "group (N tools): description" ("(1 tool)"); the group's count, when
// there is one, is the third submatch.
var catalogLine = regexp.MustCompile(`^([A-Za-z0-9_.-]+)(?: \((\d+ tools?)\))?: (.+)$`)

// scoutSelection answers a two-phase selection request (package
// selection): from the catalog lines the conversation shows (groups for a
// group request, tools for a tool request), the entries whose name and
// brief share most words with the task (the best-scoring ones, at most
// three).
func scoutSelection(turns []emulator.Turn, request string) *emulator.Reply {
	group := strings.HasPrefix(request, selection.GroupRequest)
	if !group && !strings.HasPrefix(request, selection.ToolRequest) {
		return nil
	}
	task := request
	if i := strings.LastIndex(request, "Task: "); i >= 0 {
		task = request[i+len("Task: "):]
	}
	words := map[string]bool{}
	for _, w := range splitWords(task) {
		if len(w) >= 3 && !search.IsStopWord(w) && w != "tool" && w != "tools" {
			words[w] = true
		}
	}
	type scored struct {
		name  string
		score int
	}
	var entries []scored
	seen := map[string]bool{}
	for _, t := range turns {
		for _, line := range strings.Split(t.Text, "\n") {
			m := catalogLine.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil || m[1] == "Task" || seen[m[1]] || group != (m[2] != "") {
				continue
			}
			seen[m[1]] = true
			n := 0
			for _, w := range splitWords(m[1] + " " + m[3]) {
				if words[w] {
					n++
				}
			}
			if n > 0 {
				entries = append(entries, scored{m[1], n})
			}
		}
	}
	if len(entries) == 0 {
		return &emulator.Reply{Text: "NONE"}
	}
	slices.SortStableFunc(entries, func(a, b scored) int { return b.score - a.score })
	var names []string
	for _, e := range entries[:min(3, len(entries))] {
		if e.score == entries[0].score {
			names = append(names, e.name)
		}
	}
	return &emulator.Reply{Text: strings.Join(names, ", ")}
}

// searchTool is the discovery tool's name.
const searchTool = toolsearch.Name

// lastUserRequest returns the index of the last user turn that is not a
// runtime update sent as user text.
func lastUserRequest(turns []emulator.Turn) int {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role == "user" && !strings.HasPrefix(strings.TrimSpace(turns[i].Text), "<system-update>") {
			return i
		}
	}
	return -1
}

// loadedNames reads the names a tool_search result lists as loaded: the
// "- name: description" lines after its first line, up to any "Also
// matched" line.
func loadedNames(result string) []string {
	var names []string
	for i, line := range strings.Split(result, "\n") {
		if i == 0 {
			if !strings.HasPrefix(line, "Loaded ") {
				return nil
			}
			continue
		}
		if !strings.HasPrefix(line, "- ") {
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "- "), ":")
		names = append(names, strings.TrimSpace(name))
	}
	return names
}

// namedTool returns the tool the model has (declared, or loaded behind
// call_tool) whose own name shares most words of three letters or more
// with the text: for mcp__fs__list_allowed_directories, "list", "allowed"
// and "directories". Among tools whose names share as many, it prefers one
// not called in the earlier turns (a follow-up asks for something new),
// then the one whose description shares most such words with the text,
// then the one with fewest other words in its own name. It returns "" when
// no tool's name is mentioned.
func namedTool(ex *emulator.Exchange, bridged map[string]json.RawMessage, text string, earlier []emulator.Turn) string {
	words := map[string]bool{}
	for _, w := range splitWords(text) {
		if len(w) >= 3 && !search.IsStopWord(w) {
			words[w] = true
		}
	}
	called := map[string]bool{}
	for _, t := range earlier {
		for _, c := range t.Calls {
			name, _ := UnwrapCall(c)
			called[name] = true
		}
	}
	descriptions := map[string]string{}
	names := make([]string, 0, len(ex.Tools)+len(bridged))
	for _, t := range ex.Tools {
		names = append(names, t.Name)
		descriptions[t.Name] = t.Description
	}
	names = append(names, slices.Sorted(maps.Keys(bridged))...)
	type rank struct{ named, fresh, described, other int }
	better := func(a, b rank) bool {
		if a.named != b.named {
			return a.named > b.named
		}
		if a.fresh != b.fresh {
			return a.fresh > b.fresh
		}
		if a.described != b.described {
			return a.described > b.described
		}
		return a.other < b.other
	}
	best, bestRank := "", rank{}
	for _, name := range names {
		if name == searchTool || name == CallTool {
			continue
		}
		own := name
		if i := strings.LastIndex(own, "__"); i >= 0 {
			own = own[i+2:]
		}
		var r rank
		for _, w := range splitWords(own) {
			if words[w] {
				r.named++
			} else {
				r.other++
			}
		}
		if r.named == 0 {
			continue
		}
		if !called[name] {
			r.fresh = 1
		}
		seen := map[string]bool{}
		for _, w := range splitWords(descriptions[name]) {
			if words[w] && !seen[w] {
				seen[w] = true
				r.described++
			}
		}
		if best == "" || better(r, bestRank) {
			best, bestRank = name, r
		}
	}
	return best
}

// absolutePath is an absolute path in a tool's result: a slash-led run of
// path characters at the start of a line or after a space.
var absolutePath = regexp.MustCompile(`(?m)(?:^|\s)(/[\w.@+-]+(?:/[\w.@+-]+)*)`)

// contextArguments returns ExampleArguments of the schema, with each
// string property of the arguments whose name speaks of a path ("path",
// "directory", "dir", "folder") and whose schema fixes no value set to the
// last absolute path that a tool result of the earlier turns gave: what
// "its" of a follow-up refers to. Without such a path they are
// ExampleArguments' own.
func contextArguments(schema json.RawMessage, earlier []emulator.Turn) json.RawMessage {
	args := ExampleArguments(schema)
	last := ""
	for _, t := range earlier {
		if t.Role != "tool" || strings.HasPrefix(t.Text, "Loaded ") {
			continue
		}
		if m := absolutePath.FindAllStringSubmatch(t.Text, -1); len(m) > 0 {
			last = m[len(m)-1][1]
		}
	}
	if last == "" {
		return args
	}
	var props struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	var values map[string]any
	if json.Unmarshal(schema, &props) != nil || json.Unmarshal(args, &values) != nil {
		return args
	}
	changed := false
	for key, v := range values {
		if _, ok := v.(string); !ok || !pathLike(key) {
			continue
		}
		p := props.Properties[key]
		if _, fixed := p["enum"]; fixed {
			continue
		}
		if _, fixed := p["const"]; fixed {
			continue
		}
		values[key] = last
		changed = true
	}
	if !changed {
		return args
	}
	b, err := json.Marshal(values)
	if err != nil {
		return args
	}
	return b
}

// pathLike reports whether an argument's name speaks of a path: path,
// filePath, dir, directory, folder.
func pathLike(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "path") || strings.Contains(k, "directory") || strings.Contains(k, "folder") || k == "dir" || strings.HasSuffix(k, "_dir")
}

// bestMatch returns the tool sharing most words with the text.
func bestMatch(tools []emulator.ToolDef, text string) string {
	words := map[string]bool{}
	for _, w := range splitWords(text) {
		words[w] = true
	}
	best, score := "", 0
	for _, t := range tools {
		n := 0
		for _, w := range splitWords(t.Name + " " + t.Description) {
			if words[w] {
				n++
			}
		}
		if n > score {
			best, score = t.Name, n
		}
	}
	return best
}

func splitWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
