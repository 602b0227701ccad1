package lexicon

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
)

func searchMsgs(id, query string, loaded ...string) []llm.Message {
	args, _ := json.Marshal(map[string]string{"query": query})
	details, _ := json.Marshal(map[string][]string{"loaded": append([]string{}, loaded...)})
	return []llm.Message{
		{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: id, Name: "tool_search", Arguments: args}}}},
		{Role: llm.RoleToolResult, ToolCallID: id, ToolName: "tool_search", Content: []llm.Part{llm.Text("…")}, Details: details},
	}
}

func callMsgs(id, name string) []llm.Message {
	return []llm.Message{
		{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{}`)}}}},
		{Role: llm.RoleToolResult, ToolCallID: id, ToolName: name, Content: []llm.Part{llm.Text("ok")}},
	}
}

func TestPairs(t *testing.T) {
	var msgs []llm.Message
	add := func(ms ...[]llm.Message) {
		for _, m := range ms {
			msgs = append(msgs, m...)
		}
	}
	add([]llm.Message{llm.UserText("post the release notes to the team", 1)},
		searchMsgs("s1", "announce release", "mcp__x__publish"), // loaded, never called: a miss
		searchMsgs("s2", "nothing at all"),                      // loaded nothing: a miss
		searchMsgs("s3", "announce release"),                    // the same miss again
		searchMsgs("s4", "slack message", "mcp__slack__send", "mcp__slack__list"),
		callMsgs("c1", "mcp__slack__list"), callMsgs("c2", "mcp__slack__send"),
		[]llm.Message{llm.UserText("and the weather?", 2)},
		searchMsgs("s5", "weather"), // a miss no hit of its prompt follows
		[]llm.Message{llm.UserText("the forecast then", 3)},
		searchMsgs("s6", "select:w", "w"), callMsgs("c3", "w"),
		searchMsgs("s7", "forecast", "f"), callMsgs("c4", "f"),
	)
	learned, used := Pairs(msgs)
	wantLearned := []Pair{{"announce release", "mcp__slack__list"}, {"nothing at all", "mcp__slack__list"}}
	if diff := cmp.Diff(wantLearned, learned); diff != "" {
		t.Errorf("learned (-want +got):\n%s", diff)
	}
	wantUsed := []Pair{{"slack message", "mcp__slack__list"}, {"slack message", "mcp__slack__send"}, {"forecast", "f"}}
	if diff := cmp.Diff(wantUsed, used); diff != "" {
		t.Errorf("used (-want +got):\n%s", diff)
	}
}

func TestPairsOfACallBeforeItsSearch(t *testing.T) {
	// A tool called before the search that loads it is no hit of it.
	var msgs []llm.Message
	msgs = append(msgs, llm.UserText("go", 1))
	msgs = append(msgs, searchMsgs("s1", "first try")...)
	msgs = append(msgs, callMsgs("c1", "t")...)
	msgs = append(msgs, searchMsgs("s2", "second try", "t")...)
	if learned, used := Pairs(msgs); learned != nil || used != nil {
		t.Errorf("Pairs = %v, %v; want none", learned, used)
	}
}
