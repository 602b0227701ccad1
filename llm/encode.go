package llm

import (
	"bytes"
	"encoding/json"
)

// marshal is json.Marshal without HTML escaping: <, > and & inside
// schemas, arguments and text are written as they are, so that bytes
// survive a round trip through a session file.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
