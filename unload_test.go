package toolshelf_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/transcript"
)

// TestUnloadIsATranscriptUpdate checks that an unload under a budget is a
// removal in the transcript like any other: the least recently used
// loaded tool goes, a resumed conversation declares what the session
// declared, appends no removal of its own, and keeps the budget.
func TestUnloadIsATranscriptUpdate(t *testing.T) {
	dir := t.TempDir()
	var tools []tool.Tool
	for _, name := range []string{"alpha", "bravo", "charlie"} {
		tools = append(tools, tool.Tool{Name: name, Description: "The " + name + " tool.", Exposure: tool.Deferred,
			Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.TextResult(name), nil })})
	}
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	counter, err := tokens.Default()
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := shelf.Registry().Get("tool_search")
	one, _ := shelf.Registry().Get("alpha")
	// Room for tool_search and one tool.
	unload := &toolshelf.UnloadConfig{Budget: counter.Tool(ts.Declaration()) + counter.Tool(one.Declaration()) + 2, Class: llm.ToolsChanges}
	call := func(id, name, args string) llmtest.Reply {
		return llmtest.Call(llm.ToolCall{ID: id, Name: name, Arguments: []byte(args)})
	}
	model := llmtest.New(
		call("c1", "tool_search", `{"query":"select:alpha"}`), call("c2", "alpha", `{}`),
		call("c3", "tool_search", `{"query":"select:bravo"}`), call("c4", "bravo", `{}`),
		llmtest.Say("done"))
	var notes []string
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, Unload: unload, Session: &toolshelf.SessionConfig{Dir: dir},
		Notify: func(n toolshelf.Note) {
			if n.Kind == toolshelf.NoteUnload {
				notes = append(notes, n.Text)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "use alpha then bravo")
	saved := a.Messages()
	var removed []string
	for _, m := range saved {
		for _, r := range m.ToolsRemoved {
			removed = append(removed, r.Name)
		}
	}
	if strings.Join(removed, " ") != "alpha" {
		t.Errorf("the transcript removed %v, want alpha", removed)
	}
	st := a.Unloads()
	if len(st.Points) != 1 || st.Points[0].Reason != toolshelf.UnloadFree || st.Points[0].Declared > unload.Budget || len(notes) != 1 {
		t.Errorf("unload points %+v, notes %q; want one free point within the budget", st, notes)
	}
	path := a.Session().Path()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	shelf.Close()

	shelf2, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf2.Close()
	model2 := llmtest.New(llmtest.Say("again"))
	b, err := shelf2.Agent(t.Context(), toolshelf.AgentConfig{Model: model2, Unload: unload, Session: &toolshelf.SessionConfig{Dir: dir, Resume: path}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	run(t, b, "and again")
	req := model2.Requests()[0].Messages
	if got, want := names(transcript.CurrentTools(req)), names(transcript.CurrentTools(saved)); !slices.Equal(got, want) || slices.Contains(got, "alpha") {
		t.Errorf("the resumed request declares %v, the session declared %v", got, want)
	}
	for _, m := range req[len(saved):] {
		if m.Role == llm.RoleSystem && len(m.ToolsAdded)+len(m.ToolsRemoved) > 0 {
			t.Errorf("the resumed conversation changed its tools: %+v", m)
		}
	}
	if len(b.Unloads().Points) != 0 {
		t.Errorf("the resumed conversation unloaded %+v", b.Unloads().Points)
	}
}
