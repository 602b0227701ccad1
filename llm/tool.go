package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Tool is a tool declaration: what the model is told about a tool.
// Parameters and ConstrainedSampling are kept byte for byte (key order
// included), so declarations compare as canonical bytes.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// ConstrainedSampling is a provider grammar for the tool's input, if
	// any.
	ConstrainedSampling json.RawMessage `json:"constrainedSampling,omitempty"`
}

// ToolRef names a tool, as removals do.
type ToolRef struct {
	Name string `json:"name"`
}

// Clone returns a deep copy of t.
func (t Tool) Clone() Tool {
	t.Parameters = bytes.Clone(t.Parameters)
	t.ConstrainedSampling = bytes.Clone(t.ConstrainedSampling)
	return t
}

// Canonical returns the declaration's canonical bytes: compact JSON with
// the keys name, description, parameters (its own key order kept) and,
// when set, constrainedSampling. Two declarations are equal when their
// canonical bytes are.
func (t Tool) Canonical() []byte {
	params := t.Parameters
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage("{}")
	}
	b, err := marshal(Tool{Name: t.Name, Description: t.Description, Parameters: params,
		ConstrainedSampling: t.ConstrainedSampling})
	if err != nil {
		// Invalid JSON in the schema: compare it as an opaque string so
		// that equal bytes are still equal and nothing panics.
		b, _ = marshal(struct {
			Name, Description, Parameters, ConstrainedSampling string
		}{t.Name, t.Description, string(t.Parameters), string(t.ConstrainedSampling)})
	}
	return b
}

// Equal reports whether two declarations have the same canonical bytes.
func (t Tool) Equal(u Tool) bool {
	if t.Name != u.Name || t.Description != u.Description {
		return false
	}
	// Byte-identical schemas are the common case; others may still differ
	// only in white space.
	if bytes.Equal(t.Parameters, u.Parameters) && bytes.Equal(t.ConstrainedSampling, u.ConstrainedSampling) {
		return true
	}
	return bytes.Equal(t.Canonical(), u.Canonical())
}

// UnmarshalJSON reads a declaration and checks that parameters, when
// present, is a JSON object.
func (t *Tool) UnmarshalJSON(b []byte) error {
	type plain Tool
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if len(p.Parameters) > 0 && string(p.Parameters) != "null" && bytes.TrimSpace(p.Parameters)[0] != '{' {
		return fmt.Errorf("tool %q: parameters must be a JSON object", p.Name)
	}
	*t = Tool(p)
	return nil
}
