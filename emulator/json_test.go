package emulator

import (
	"encoding/json"
	"testing"
)

// compactJSON keeps "<", ">" and "&" as they are (encoding/json would
// write \u003c…), writes no spaces and no final newline, and keeps raw JSON
// byte for byte.
func TestCompactJSON(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{map[string]any{"a": "<b> & c", "n": 1}, `{"a":"<b> & c","n":1}`},
		{[]string{"x", "y"}, `["x","y"]`},
		{struct {
			Raw json.RawMessage `json:"raw"`
		}{json.RawMessage(`{"z":1,"a":[2]}`)}, `{"raw":{"z":1,"a":[2]}}`},
		{"line\nbreak", `"line\nbreak"`},
	} {
		if got := string(compactJSON(c.v)); got != c.want {
			t.Errorf("compactJSON(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
}

// A value that cannot be encoded is a bug of the emulator: compactJSON
// panics and says so.
func TestCompactJSONPanicsOnAValueThatDoesNotEncode(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("compactJSON(a channel) did not panic")
		}
	}()
	compactJSON(make(chan int))
}
