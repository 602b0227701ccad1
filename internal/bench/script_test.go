package bench

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestScriptArgumentsPassProse: a later step's arguments take the previous
// result in the free-text arguments whose name says they hold prose, and
// keep the schema's example everywhere else; the first step's keep it
// everywhere.
func TestScriptArgumentsPassProse(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"channel_id":{"type":"string"},
		"text":{"type":"string"},
		"issueBody":{"type":"string"},
		"title":{"type":"string","maxLength":40},
		"summary":{"type":"string","enum":["short","long"]},
		"comment_count":{"type":"integer"}
	},"required":["channel_id","text","issueBody","title","summary","comment_count"]}`)
	if got, want := scriptArguments(schema, true),
		`{"channel_id": "example", "comment_count": 1, "issueBody": previous, "summary": "short", "text": previous, "title": "example"}`; got != want {
		t.Errorf("a later step's arguments:\n%s\nwant\n%s", got, want)
	}
	if got := scriptArguments(schema, false); strings.Contains(got, "previous") {
		t.Errorf("the first step's arguments pass a result: %s", got)
	}
	if got := scriptArguments(json.RawMessage(`{"type":"object"}`), true); got != "{}" {
		t.Errorf("no arguments: %s", got)
	}
	for name, want := range map[string][]string{
		"issueBody": {"issue", "body"}, "channel_id": {"channel", "id"}, "commit-message": {"commit", "message"}, "HTMLText": {"htmltext"}, "v2Title": {"v2", "title"},
	} {
		if got := nameWords(name); !slices.Equal(got, want) {
			t.Errorf("nameWords(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestScriptFunctionNames: a tool whose name is not an identifier is
// called by its exact name.
func TestScriptFunctionNames(t *testing.T) {
	if got := scriptFunction("mcp__github__create_issue"); got != "tools.mcp__github__create_issue" {
		t.Errorf("an identifier: %s", got)
	}
	if got := scriptFunction("mcp__a-b__run.now"); got != `tools["mcp__a-b__run.now"]` {
		t.Errorf("a name with - and .: %s", got)
	}
}
