package adapt

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/toolshelf/toolshelf/llm"
)

// EmptySchema is the JSON Schema sent for a tool that declares no usable
// parameters: an object without properties.
const EmptySchema = `{"type":"object","properties":{}}`

// CompactSchema returns a declaration's JSON Schema as compact JSON with
// its key order kept, or [EmptySchema] when it has none, declares null or
// is not valid JSON.
func CompactSchema(t llm.Tool) json.RawMessage {
	raw := bytes.TrimSpace(t.Parameters)
	var b bytes.Buffer
	if len(raw) == 0 || string(raw) == "null" || json.Compact(&b, raw) != nil {
		return json.RawMessage(EmptySchema)
	}
	return b.Bytes()
}

// JSON writes v as compact JSON without HTML escaping, as the SDKs write
// request bodies. It is for values that always encode (strings, structs of
// them, raw JSON); it panics otherwise.
func JSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("adapt: JSON: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// StreamBody returns the body an SDK's streaming call sends for params:
// their JSON object with "stream": true appended.
func StreamBody(params json.Marshaler) ([]byte, error) {
	b, err := params.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("request body is not a JSON object: %.40s", b)
	}
	out := bytes.Clone(b[:len(b)-1])
	if len(bytes.TrimSpace(out)) > 1 {
		out = append(out, ',')
	}
	return append(out, `"stream":true}`...), nil
}

// NewCallID returns a tool call id for a call a server sent without one:
// prefix and 16 random hex digits, so ids stay unique across the
// conversation (the transcript and every API need one per call).
func NewCallID(prefix string) string {
	b := make([]byte, 8)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return prefix + hex.EncodeToString(b)
}

// ArgumentsObject returns a call's arguments as a compact JSON object
// fit to send back to a provider: the arguments themselves when they are
// one, {} when the model wrote something else (its invalid output stays in
// the transcript; the tool result already told it what was wrong).
func ArgumentsObject(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		var b bytes.Buffer
		if json.Compact(&b, trimmed) == nil {
			return b.Bytes()
		}
	}
	return json.RawMessage(`{}`)
}

// UserUpdateText wraps an update's text for a model that takes no system
// text mid-conversation, so it can travel as a user message and still read
// as an instruction from the runtime rather than from the user.
func UserUpdateText(text string) string {
	return "<system-update>\n" + text + "\n</system-update>"
}
