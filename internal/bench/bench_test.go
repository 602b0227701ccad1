package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/tool"
)

func TestParseTasksErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"id":"a","prompt":"p","steps":[]}`:                                          "no steps",
		`{"id":"a","prompt":"p","steps":[{"server":"s","tool":"t","queries":[]}]}`:    "has no queries",
		`{"id":"a","prompt":" ","steps":[{"server":"s","tool":"t","queries":["q"]}]}`: "no prompt",
		`{"id":"a","prompt":"p","step":[]}`:                                           "unknown field",
		`{"id":"a","prompt":"p","steps":[{"server":"s","tool":"t","queries":["q"]}]}` + "\n" +
			`{"id":"a","prompt":"p","steps":[{"server":"s","tool":"t","queries":["q"]}]}`: `task id "a" repeats line 1`,
		``: "no tasks",
	} {
		_, err := ParseTasks("f.jsonl", strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTasks(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestEmbeddedSuiteNamesRealTools(t *testing.T) {
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	team, _ := ProfileNamed("team")
	known := map[[2]string]bool{}
	for _, s := range servers {
		for _, e := range s.AsTools(tool.NewNamer(), tool.Deferred) {
			known[[2]string{e.Origin.Server, e.Origin.Tool}] = true
		}
	}
	tasks := DefaultTasks()
	if len(tasks) < 30 {
		t.Errorf("%d tasks", len(tasks))
	}
	for _, task := range tasks {
		for _, s := range task.Steps {
			if !known[[2]string{s.Server, s.Tool}] {
				t.Errorf("%s: %s/%s is not in the catalog", task.ID, s.Server, s.Tool)
			}
			if !team.includes(s.Server) {
				t.Errorf("%s: %s is outside the team profile", task.ID, s.Server)
			}
		}
	}
}

func TestOracleProgress(t *testing.T) {
	task := Task{ID: "t", Prompt: "p", Steps: []Step{
		{Server: "a", Tool: "x", Queries: []string{"find x", "x again"}},
		{Server: "b", Tool: "y", Queries: []string{"find y", "y again"}},
		{Server: "c", Tool: "z", Queries: []string{"find z", "z again"}},
	}}
	p := &plan{task: task, names: []string{"mcp__a__x", "mcp__b__y", "mcp__c__z"}}
	search := func(q string) emulator.Call {
		b, _ := json.Marshal(map[string]string{"query": q})
		return emulator.Call{Name: "tool_search", Arguments: b}
	}
	call := func(name string) emulator.Call { return emulator.Call{Name: name, Arguments: json.RawMessage(`{}`)} }
	bridged := func(name string) emulator.Call {
		return emulator.Call{Name: "call_tool", Arguments: json.RawMessage(`{"name":"` + name + `","arguments":{}}`)}
	}
	turns := func(calls ...emulator.Call) []emulator.Turn {
		var out []emulator.Turn
		for _, c := range calls {
			out = append(out, emulator.Turn{Role: "assistant", Calls: []emulator.Call{c}}, emulator.Turn{Role: "tool"})
		}
		return out
	}
	cases := []struct {
		name           string
		turns          []emulator.Turn
		step, searches int
	}{
		{"start", nil, 0, 0},
		{"one search", turns(search("find x")), 0, 1},
		{"found after two", turns(search("find x"), search("x again"), call("mcp__a__x")), 1, 0},
		{"step given up", turns(search("find x"), search("x again"), search("find y")), 1, 1},
		{"bridge call", turns(search("find x"), bridged("mcp__a__x"), search("find y")), 1, 1},
		{"later step's tool", turns(call("mcp__c__z")), 3, 0},
	}
	for _, c := range cases {
		step, searches := p.progress(c.turns)
		if step != c.step || searches != c.searches {
			t.Errorf("%s: step %d searches %d, want %d %d", c.name, step, searches, c.step, c.searches)
		}
	}
}
