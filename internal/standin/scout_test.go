package standin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/selection"
)

func TestScout(t *testing.T) {
	search := emulator.ToolDef{Name: "tool_search", Parameters: json.RawMessage(`{"type":"object"}`)}
	list := emulator.ToolDef{Name: "mcp__fs__list_allowed_directories", Description: "List allowed directories.",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
	read := emulator.ToolDef{Name: "mcp__fs__read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}
	user := emulator.Turn{Role: "user", Text: "list the allowed directories"}
	searchCall := emulator.Turn{Role: "assistant", Calls: []emulator.Call{{ID: "1", Name: "tool_search", Arguments: json.RawMessage(`{"query":"list the allowed directories"}`)}}}
	loaded := emulator.Turn{Role: "tool", CallID: "1", Text: "Loaded 2 tools. They are available from your next call:\n- mcp__fs__list_allowed_directories: List.\n- mcp__fs__read_file: Read.\nAlso matched, not loaded (load one with tool_search \"select:<name>\"):\n- other: x"}
	listCall := emulator.Turn{Role: "assistant", Calls: []emulator.Call{{ID: "2", Name: list.Name, Arguments: json.RawMessage(`{}`)}}}
	listed := emulator.Turn{Role: "tool", CallID: "2", Text: "Allowed directories:\n/home/ada/examples"}
	cases := []struct {
		name string
		ex   emulator.Exchange
		call string
		text string
		args string
	}{
		{"searches first", emulator.Exchange{Tools: []emulator.ToolDef{search}, Turns: []emulator.Turn{user}}, "tool_search", "", `{"query":"list the allowed directories"}`},
		{"calls what the search loaded", emulator.Exchange{Tools: []emulator.ToolDef{search, list, read}, Turns: []emulator.Turn{user, searchCall, loaded}},
			list.Name, "", `{}`},
		{"reports the result", emulator.Exchange{Tools: []emulator.ToolDef{search, list, read}, Turns: []emulator.Turn{user, searchCall, loaded, listCall, listed}},
			"", "mcp__fs__list_allowed_directories returned:\nAllowed directories:\n/home/ada/examples", ""},
		{"a loaded tool the request names, without searching", emulator.Exchange{Tools: []emulator.ToolDef{search, read, list}, Turns: []emulator.Turn{user}}, list.Name, "", `{}`},
		{"a loaded tool the request does not name: search", emulator.Exchange{Tools: []emulator.ToolDef{search, read}, Turns: []emulator.Turn{{Role: "user", Text: "list the allowed directories"}}},
			"tool_search", "", `{"query":"list the allowed directories"}`},
		{"without tool_search, the best-matching tool", emulator.Exchange{Tools: []emulator.ToolDef{read, list}, Turns: []emulator.Turn{user}}, list.Name, "", `{}`},
		{"nothing loaded", emulator.Exchange{Tools: []emulator.ToolDef{search}, Turns: []emulator.Turn{user, searchCall, {Role: "tool", CallID: "1", Text: "No matching tools found."}}},
			"", "The search loaded nothing I can call: No matching tools found.", ""},
		{"through call_tool", emulator.Exchange{Tools: []emulator.ToolDef{search, {Name: CallTool, Parameters: json.RawMessage(`{}`)}},
			Turns: []emulator.Turn{user, searchCall, loaded, {Role: "user", Text: "<system-update>\nTools loaded.\n" +
				`{"name":"mcp__fs__list_allowed_directories","parameters":{"type":"object","properties":{}}}` + "\n</system-update>"}}},
			CallTool, "", `{"arguments":{},"name":"mcp__fs__list_allowed_directories"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Scout{}.Respond(context.Background(), &c.ex)
			if err != nil {
				t.Fatal(err)
			}
			if c.call != "" {
				if len(r.Calls) != 1 || r.Calls[0].Name != c.call || string(r.Calls[0].Arguments) != c.args {
					t.Errorf("reply %+v, want a call of %s with %s", r, c.call, c.args)
				}
				return
			}
			if len(r.Calls) != 0 || !strings.HasPrefix(r.Text, c.text) {
				t.Errorf("reply %+v, want text %q", r, c.text)
			}
		})
	}
}

func TestScoutSelects(t *testing.T) {
	catalog := emulator.Turn{Role: "system", Text: "mcp__fs__list_allowed_directories: List the allowed directories\n" +
		"mcp__fs__read_file: Read a file\nmcp__mem__read_graph: Read the knowledge graph"}
	groups := emulator.Turn{Role: "system", Text: "mcp__fs (2 tools): Read and list files\nmcp__mem (1 tool): A knowledge graph"}
	for _, c := range []struct {
		turns []emulator.Turn
		want  string
	}{
		{[]emulator.Turn{catalog, {Role: "user", Text: selection.ToolRequest + "\n\nTask: list the allowed directories"}}, "mcp__fs__list_allowed_directories"},
		{[]emulator.Turn{catalog, {Role: "user", Text: selection.ToolRequest + "\n\nTask: read the knowledge graph"}}, "mcp__mem__read_graph"},
		{[]emulator.Turn{groups, {Role: "user", Text: selection.GroupRequest + "\n\nTask: read the knowledge graph"}}, "mcp__mem"},
		{[]emulator.Turn{catalog, {Role: "user", Text: selection.ToolRequest + "\n\nTask: book a flight"}}, "NONE"},
	} {
		r, err := Scout{}.Respond(context.Background(), &emulator.Exchange{Turns: c.turns})
		if err != nil || r.Text != c.want {
			t.Errorf("%q: reply %+v, %v; want %q", c.turns[len(c.turns)-1].Text, r, err, c.want)
		}
	}
}

// TestScoutAnswersTheFollowUp: in a resumed conversation Scout answers the
// latest request. Of the loaded tools named alike ("list"), it calls the
// one not called before whose description speaks of the follow-up's
// words, with the path the earlier answer gave, and reports its result.
func TestScoutAnswersTheFollowUp(t *testing.T) {
	pathSchema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	allowed := emulator.ToolDef{Name: "mcp__fs__list_allowed_directories", Description: "Returns the list of directories this server may access, before you access files.",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
	list := emulator.ToolDef{Name: "mcp__fs__list_directory", Description: "Get a listing of all files and directories in a path.", Parameters: pathSchema}
	sizes := emulator.ToolDef{Name: "mcp__fs__list_directory_with_sizes", Description: "Get a listing of all files and directories in a path, with sizes.", Parameters: pathSchema}
	tools := []emulator.ToolDef{{Name: "tool_search", Parameters: json.RawMessage(`{"type":"object"}`)}, allowed, sizes, list}
	turns := []emulator.Turn{
		{Role: "user", Text: "list the allowed directories"},
		{Role: "assistant", Calls: []emulator.Call{{ID: "1", Name: allowed.Name, Arguments: json.RawMessage(`{}`)}}},
		{Role: "tool", CallID: "1", Text: "Allowed directories:\n/home/ada/examples"},
		{Role: "assistant", Text: "mcp__fs__list_allowed_directories returned:\nAllowed directories:\n/home/ada/examples"},
		{Role: "user", Text: "and list its files"},
	}
	r, err := Scout{}.Respond(context.Background(), &emulator.Exchange{Tools: tools, Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Calls) != 1 || r.Calls[0].Name != list.Name || string(r.Calls[0].Arguments) != `{"path":"/home/ada/examples"}` {
		t.Fatalf("reply %+v, want a call of %s with the earlier answer's path", r, list.Name)
	}
	turns = append(turns, emulator.Turn{Role: "assistant", Calls: []emulator.Call{{ID: "2", Name: list.Name, Arguments: r.Calls[0].Arguments}}},
		emulator.Turn{Role: "tool", CallID: "2", Text: "[FILE] mcp.json"})
	r, err = Scout{}.Respond(context.Background(), &emulator.Exchange{Tools: tools, Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	if want := "mcp__fs__list_directory returned:\n[FILE] mcp.json"; len(r.Calls) != 0 || r.Text != want {
		t.Errorf("reply %+v, want %q", r, want)
	}
	// The same request asked first, with no earlier answer: no path to
	// refer to, so the schema's example.
	r, err = Scout{}.Respond(context.Background(), &emulator.Exchange{Tools: []emulator.ToolDef{list}, Turns: turns[4:5]})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Calls) != 1 || r.Calls[0].Name != list.Name || string(r.Calls[0].Arguments) != `{"path":"example"}` {
		t.Errorf("reply %+v, want a call with the schema's example path", r)
	}
}
