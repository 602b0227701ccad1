package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
)

func roundTrip(t *testing.T, m llm.Message) (llm.Message, string) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got llm.Message
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return got, string(b)
}

func TestMessageJSONRoundTrip(t *testing.T) {
	params := json.RawMessage(`{"type":"object","properties":{"z":{},"a":{}}}`)
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("base")}, Sections: llm.Sections{llm.Set("b", "2"),
			llm.Delete("a"), llm.Set("c", "")}, ToolsAdded: []llm.Tool{{Name: "t", Description: "d", Parameters: params}},
			ToolsRemoved: []llm.ToolRef{{Name: "old"}}, Timestamp: 5},
		llm.UserText("hi", 6),
		{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, MIMEType: "image/png", Data: []byte{0, 1, 2, 255}}}},
		{Role: llm.RoleAssistant, Content: []llm.Part{
			{Type: llm.PartThinking, Text: "hmm", Signature: "sig"},
			llm.Text("ok"),
			{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "c1", Name: "t", Arguments: json.RawMessage(`{"b":1,"a":2}`)}},
		}, StopReason: llm.StopToolUse, Usage: &llm.Usage{Input: 10, Output: 2, CacheRead: 100, CacheWrite: 5}, Model: "m", Timestamp: 7},
		{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "t", IsError: true, Content: []llm.Part{llm.Text("boom")},
			Details: json.RawMessage(`{"loaded":["x"]}`), Timestamp: 8},
	}
	for _, m := range msgs {
		got, b := roundTrip(t, m)
		if diff := cmp.Diff(m, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s\n%s", m.Role, diff, b)
		}
	}
	// Key order of parameters and of arguments survives byte for byte.
	got, b := roundTrip(t, msgs[0])
	if string(got.ToolsAdded[0].Parameters) != string(params) {
		t.Errorf("parameters %s", got.ToolsAdded[0].Parameters)
	}
	if !strings.Contains(b, `"sections":{"b":"2","a":null,"c":""}`) || !strings.Contains(b, `"content":"base"`) {
		t.Errorf("system message JSON %s", b)
	}
}

func TestMalformedToolArgumentsAreKept(t *testing.T) {
	m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall,
		ToolCall: &llm.ToolCall{ID: "c", Name: "t", Arguments: json.RawMessage(`{"x": tru`)}}}}
	got, _ := roundTrip(t, m)
	if args := string(got.ToolCalls()[0].Arguments); args != `{"x": tru` {
		t.Errorf("arguments %q", args)
	}
}

func TestReadsStringContent(t *testing.T) {
	var m llm.Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":"plain","timestamp":1}`), &m); err != nil {
		t.Fatal(err)
	}
	if llm.ContentText(m.Content, "") != "plain" {
		t.Errorf("content %+v", m.Content)
	}
	for _, bad := range []string{`{"role":"user","content":5}`, `{"role":"system","sections":[1]}`,
		`{"role":"user","content":[{"type":"video"}]}`, `{"role":"system","toolsAdded":[{"name":"t","parameters":[]}]}`} {
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		m    llm.Message
		want string
	}{
		{llm.Message{Role: "robot"}, `message role "robot"`},
		{llm.Message{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "c", Name: "t"}}}},
			`"toolCall" parts are not allowed`},
		{llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{Name: "t"}}}},
			"a tool call needs an id and a name"},
		{llm.Message{Role: llm.RoleToolResult}, "without toolCallId"},
		{llm.Message{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{{}}}, "without a name"},
	} {
		if err := tc.m.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.m, err, tc.want)
		}
	}
	ok := llm.UserText("x", 0)
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
}

func TestToolEquality(t *testing.T) {
	a := llm.Tool{Name: "t", Description: "d", Parameters: json.RawMessage(`{"a":1, "b":2}`)}
	if !a.Equal(llm.Tool{Name: "t", Description: "d", Parameters: json.RawMessage(`{"a":1,"b":2}`)}) {
		t.Error("white space made declarations differ")
	}
	if a.Equal(llm.Tool{Name: "t", Description: "d", Parameters: json.RawMessage(`{"b":2,"a":1}`)}) {
		t.Error("key order did not make declarations differ")
	}
	if a.Equal(llm.Tool{Name: "t", Description: "other", Parameters: a.Parameters}) {
		t.Error("descriptions are ignored")
	}
	if string(llm.Tool{Name: "t"}.Canonical()) != `{"name":"t","description":"","parameters":{}}` {
		t.Errorf("canonical %s", llm.Tool{Name: "t"}.Canonical())
	}
}

func TestScriptedModel(t *testing.T) {
	m := llmtest.New(llmtest.Say("hello"), llmtest.Reply{Err: errors.New("boom")})
	req := &llm.Request{Messages: []llm.Message{llm.UserText("q", 1)}}
	var events []llm.EventType
	var final *llm.Message
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev.Type)
		final = ev.Message
	}
	if !cmp.Equal(events, []llm.EventType{llm.EventStart, llm.EventTextDelta, llm.EventDone}) || final.StopReason != llm.StopEnd {
		t.Errorf("events %v, final %+v", events, final)
	}
	req.Messages[0].Content[0].Text = "changed after the call"
	if got := llm.ContentText(m.Requests()[0].Messages[0].Content, ""); got != "q" {
		t.Errorf("recorded request aliased the caller's: %q", got)
	}
	var err error
	for _, e := range m.Stream(context.Background(), req) {
		err = e
	}
	if err == nil || err.Error() != "boom" {
		t.Errorf("scripted error: %v", err)
	}
	for _, e := range m.Stream(context.Background(), req) {
		err = e
	}
	if !errors.Is(err, llmtest.ErrScriptExhausted) {
		t.Errorf("exhausted: %v", err)
	}
}
