package transcript_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/transcript"
)

// asks is an assistant message calling the tools with the ids.
func asks(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse}
	for _, id := range ids {
		m.Content = append(m.Content, llm.Part{Type: llm.PartToolCall,
			ToolCall: &llm.ToolCall{ID: id, Name: "t_" + id, Arguments: json.RawMessage(`{}`)}})
	}
	return m
}

func answer(id string) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: "t_" + id, Content: []llm.Part{llm.Text("ok")}}
}

func says(text string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text(text)}, StopReason: llm.StopEnd}
}

// shape sums up a transcript: u (user), s (system), a (assistant text),
// a(ids) (calls), r:id (result), i:id (an interrupted result).
func shape(msgs []llm.Message) string {
	var out []string
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			out = append(out, "u")
		case llm.RoleSystem:
			out = append(out, "s")
		case llm.RoleAssistant:
			var ids []string
			for _, c := range m.ToolCalls() {
				ids = append(ids, c.ID)
			}
			if len(ids) == 0 {
				out = append(out, "a")
			} else {
				out = append(out, "a("+strings.Join(ids, ",")+")")
			}
		case llm.RoleToolResult:
			if llm.ContentText(m.Content, "") == transcript.InterruptedText {
				out = append(out, "i:"+m.ToolCallID)
			} else {
				out = append(out, "r:"+m.ToolCallID)
			}
		}
	}
	return strings.Join(out, " ")
}

func interrupted(c llm.ToolCall) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
		Content: []llm.Part{llm.Text(transcript.InterruptedText)}}
}

func TestOpenCalls(t *testing.T) {
	u := llm.UserText("q", 1)
	for _, tc := range []struct {
		name string
		msgs []llm.Message
		want []string
	}{
		{"empty", nil, nil},
		{"answered", []llm.Message{u, asks("1", "2"), answer("1"), answer("2"), says("done")}, nil},
		{"killed before any result", []llm.Message{u, asks("1", "2")}, []string{"1", "2"}},
		{"killed between results", []llm.Message{u, asks("1", "2", "3"), answer("2")}, []string{"1", "3"}},
		{"an update after the call", []llm.Message{u, asks("1"), sys(nil)}, []string{"1"}},
		{"all answered, then an update", []llm.Message{u, asks("1"), answer("1"), sys(nil)}, nil},
		{"a prompt after the hole", []llm.Message{u, asks("1"), u}, nil},
		{"a text answer", []llm.Message{u, says("hi")}, nil},
	} {
		var got []string
		for _, c := range transcript.OpenCalls(tc.msgs) {
			got = append(got, c.ID)
		}
		if !cmp.Equal(got, tc.want) {
			t.Errorf("%s: OpenCalls = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCloseCalls(t *testing.T) {
	u := llm.UserText("q", 1)
	for _, tc := range []struct {
		name string
		msgs []llm.Message
		want string
	}{
		{"nothing open", []llm.Message{u, asks("1"), answer("1"), says("x")}, "u a(1) r:1 a"},
		{"open at the end", []llm.Message{u, asks("1", "2"), answer("1")}, "u a(1,2) r:1 i:2"},
		// What resuming a killed session left before runs closed calls:
		// a prompt and a failed answer after the hole.
		{"a hole in the middle", []llm.Message{u, asks("1"), u, says("x"), u, asks("2"), answer("2"), says("y")},
			"u a(1) i:1 u a u a(2) r:2 a"},
		{"results before an update", []llm.Message{u, asks("1", "2"), answer("2"), sys(nil), u},
			"u a(1,2) r:2 i:1 s u"},
		{"two holes", []llm.Message{u, asks("1"), u, asks("2"), sys(nil), u}, "u a(1) i:1 u a(2) i:2 s u"},
	} {
		got := transcript.CloseCalls(tc.msgs, interrupted)
		if s := shape(got); s != tc.want {
			t.Errorf("%s: CloseCalls = %s, want %s", tc.name, s, tc.want)
		}
		if len(transcript.OpenCalls(got)) != 0 {
			t.Errorf("%s: calls still open after CloseCalls", tc.name)
		}
	}
	// Nothing open: the same slice, not a copy.
	msgs := []llm.Message{u, asks("1"), answer("1")}
	if got := transcript.CloseCalls(msgs, interrupted); &got[0] != &msgs[0] {
		t.Error("CloseCalls copied a transcript with nothing open")
	}
	// The input is left as it was.
	in := []llm.Message{u, asks("1"), u}
	transcript.CloseCalls(in, interrupted)
	if s := shape(in); s != "u a(1) u" {
		t.Errorf("CloseCalls changed its input: %s", s)
	}
}
