package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Section is one named part of a system prompt. A nil Text deletes the
// section when the message is replayed.
type Section struct {
	Name string
	Text *string
}

// Sections is an ordered map of sections, as system messages carry them:
// later messages patch by name. It marshals as a JSON object whose keys
// keep their order.
type Sections []Section

// Set returns a section with text.
func Set(name, text string) Section { return Section{Name: name, Text: &text} }

// Delete returns a section deletion.
func Delete(name string) Section { return Section{Name: name} }

// Get returns the text of the named section and whether it is set.
func (s Sections) Get(name string) (string, bool) {
	for _, sec := range s {
		if sec.Name == name && sec.Text != nil {
			return *sec.Text, true
		}
	}
	return "", false
}

// Clone returns a deep copy.
func (s Sections) Clone() Sections {
	if s == nil {
		return nil
	}
	out := make(Sections, len(s))
	for i, sec := range s {
		out[i].Name = sec.Name
		if sec.Text != nil {
			t := *sec.Text
			out[i].Text = &t
		}
	}
	return out
}

// MarshalJSON writes {"name": text-or-null, ...} in order.
func (s Sections) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, sec := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(sec.Name)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		if sec.Text == nil {
			b.WriteString("null")
			continue
		}
		v, err := marshal(*sec.Text)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object of strings and nulls, keeping the key
// order. A repeated key keeps its first position and takes the last value.
func (s *Sections) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*s = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("sections must be a JSON object, not %v", tok)
	}
	var out Sections
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := kt.(string)
		var text *string
		if err := dec.Decode(&text); err != nil {
			return fmt.Errorf("section %q: want a string or null: %w", name, err)
		}
		replaced := false
		for i := range out {
			if out[i].Name == name {
				out[i].Text, replaced = text, true
			}
		}
		if !replaced {
			out = append(out, Section{Name: name, Text: text})
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*s = out
	return nil
}
