package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// expandVars replaces ${NAME}, ${env:NAME} and ${NAME:-default} by the
// values lookup gives. A variable that is not set (and has no default) is an
// error naming it, and so is a reference it cannot read.
func expandVars(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var errs []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			errs = append(errs, fmt.Sprintf("unclosed ${ in %q", s[i:]))
			b.WriteString(s[i:])
			break
		}
		ref := s[i+2 : i+end]
		s = s[i+end+1:]
		name, def, hasDef := strings.Cut(ref, ":-")
		name = strings.TrimPrefix(name, "env:")
		if !envNamePattern.MatchString(name) {
			errs = append(errs, fmt.Sprintf("${%s} is not an environment variable reference (write ${NAME})", ref))
			continue
		}
		v, ok := lookup(name)
		switch {
		case ok:
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		default:
			errs = append(errs, fmt.Sprintf("environment variable %s is not set", name))
		}
	}
	if len(errs) > 0 {
		return b.String(), errors.New(strings.Join(errs, "; "))
	}
	return b.String(), nil
}

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// objectEntries decodes a JSON object into its keys and values in order.
func objectEntries(data []byte) (keys []string, values []json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if tok == nil {
		return nil, nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not an object")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, kt.(string))
		values = append(values, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("unexpected data after the object")
	}
	return keys, values, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// jsonKind names the JSON type of v for messages.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
