package adapt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
)

// TestCompactSchema checks the schema sent for a tool: its own, compacted
// in key order, or the empty object schema when it has none to send.
func TestCompactSchema(t *testing.T) {
	for _, params := range []string{"", "  ", "null", "{not json"} {
		if got := string(CompactSchema(llm.Tool{Name: "x", Parameters: json.RawMessage(params)})); got != EmptySchema {
			t.Errorf("CompactSchema(%q) = %s, want %s", params, got, EmptySchema)
		}
	}
	in := `{ "type": "object",  "properties": {"z": {"type":"string"}, "a": {"type": "number"}} }`
	want := `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}}`
	if got := string(CompactSchema(llm.Tool{Parameters: json.RawMessage(in)})); got != want {
		t.Errorf("CompactSchema = %s, want %s", got, want)
	}
}

type rawBody string

func (r rawBody) MarshalJSON() ([]byte, error) { return []byte(r), nil }

func TestStreamBody(t *testing.T) {
	for in, want := range map[string]string{
		`{"model":"m"}`:      `{"model":"m","stream":true}`,
		` {} `:               `{"stream":true}`,
		`{"a":"<&>"}` + "\n": `{"a":"<&>","stream":true}`,
	} {
		got, err := StreamBody(rawBody(in))
		if err != nil || string(got) != want {
			t.Errorf("StreamBody(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := StreamBody(rawBody(`[1]`)); err == nil {
		t.Error("StreamBody accepted a body that is not an object")
	}
}

func TestJSONKeepsHTMLCharacters(t *testing.T) {
	if got := string(JSON("a<b>&c")); got != `"a<b>&c"` {
		t.Errorf("JSON = %s", got)
	}
}

func TestArgumentsObject(t *testing.T) {
	for in, want := range map[string]string{
		`{ "a" : 1 }`: `{"a":1}`,
		`[1]`:         `{}`,
		`{"a":`:       `{}`,
		``:            `{}`,
		`"s"`:         `{}`,
	} {
		if got := string(ArgumentsObject(json.RawMessage(in))); got != want {
			t.Errorf("ArgumentsObject(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestNewCallID checks that ids carry the prefix and differ from call to
// call.
func TestNewCallID(t *testing.T) {
	a, b := NewCallID("call_"), NewCallID("call_")
	if !strings.HasPrefix(a, "call_") || len(a) != len("call_")+16 || a == b {
		t.Errorf("NewCallID = %q, %q; want call_ and 16 hex digits, different each time", a, b)
	}
}

func TestUserUpdateText(t *testing.T) {
	if got, want := UserUpdateText("Tools loaded."), "<system-update>\nTools loaded.\n</system-update>"; got != want {
		t.Errorf("UserUpdateText = %q, want %q", got, want)
	}
}
