package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// compactJSON writes v as compact JSON without HTML escaping ("<", ">"
// and "&" stay as they are), as the APIs write their answers and the SDKs
// their request bodies. It is for values that always encode (strings,
// numbers, maps and structs of them, raw JSON); it panics otherwise, since
// a value that does not encode is a bug of the emulator, not of a request.
func compactJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("emulator: compactJSON: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// parseBody decodes a request body that must be exactly one JSON value,
// numbers kept as [json.Number]. Each API's codec checks the value's type
// and words the error as that API does.
func parseBody(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the top-level value")
	}
	return v, nil
}
