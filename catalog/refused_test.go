package catalog_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/tool"
)

// TestParseRefusesWhatProvidersReject checks that a tool whose schema a
// provider would reject, or whose definition is past a cap, is reported
// as a problem of its own (position, name, reason), listed in Refused and
// not loaded, while the tools around it load.
func TestParseRefusesWhatProvidersReject(t *testing.T) {
	props := make([]string, 40000)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string"}`, i)
	}
	bad := []struct {
		name, tool string
		kind       error
		want       string
	}{
		{"regex", `{"name":"regex","inputSchema":{"type":"object","properties":{"q":{"type":"string","pattern":"(((("}}}}`, tool.ErrSchema, "/properties/q/pattern"},
		{"dangling", `{"name":"dangling","inputSchema":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}}}}`, tool.ErrSchema, `"#/$defs/a" points to nothing`},
		{"remote", `{"name":"remote","inputSchema":{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}}`, tool.ErrSchema, "points to another document"},
		{"cyclic", `{"name":"cyclic","inputSchema":{"$ref":"#"}}`, tool.ErrSchema, "references loop"},
		{"wordy", `{"name":"wordy","description":"` + strings.Repeat("w", 1<<20) + `"}`, tool.ErrTooLarge, "the description is 1048576 bytes"},
		{"wide", `{"name":"wide","inputSchema":{"type":"object","properties":{` + strings.Join(props, ",") + `}}}`, tool.ErrTooLarge, "the parameter schema is"},
	}
	list := []string{`{"name":"first","description":"Comes first."}`}
	for _, b := range bad {
		list = append(list, b.tool)
	}
	list = append(list, `{"name":"last","description":"Comes last."}`)
	s, err := catalog.Parse("mixed.json", []byte(`{"server":"mixed","tools":[`+strings.Join(list, ",")+`]}`))
	if s == nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(s.Tools) != 2 || s.Tools[0].Name != "first" || s.Tools[1].Name != "last" {
		t.Errorf("tools = %v, want first and last", s.Tools)
	}
	problems := catalog.Problems(err)
	if len(problems) != len(bad) || len(s.Refused) != len(bad) {
		t.Fatalf("%d problems and %d refused, want %d of each: %v", len(problems), len(s.Refused), len(bad), err)
	}
	for i, b := range bad {
		var p *catalog.Problem
		if !errors.As(problems[i], &p) {
			t.Fatalf("problem %v is a %T", problems[i], problems[i])
		}
		if p.Tool != b.name || p.Index != i+1 || p.Ignored || !errors.Is(p, b.kind) {
			t.Errorf("problem %+v: want tool %q at index %d wrapping %v", p, b.name, i+1, b.kind)
		}
		msg := p.Error()
		if !strings.Contains(msg, b.want) || !strings.Contains(msg, fmt.Sprintf(`tool #%d %q`, i+2, b.name)) ||
			!strings.HasSuffix(msg, "the tool was skipped") {
			t.Errorf("message %q: want the position, the name, %q and the consequence", msg, b.want)
		}
		if len(msg) > 1000 {
			t.Errorf("message is %d bytes long", len(msg))
		}
		r := s.Refused[i]
		if r.Name != b.name || r.Index != i+1 || r.Err != p.Err {
			t.Errorf("refused %q at %d (%v), want %q at %d with the problem's error", r.Name, r.Index, r.Err, b.name, i+1)
		}
	}
}
