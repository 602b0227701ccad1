package lint_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/lint"
)

// TestRefusedToolsAreErrors checks that the tools catalog.Parse refuses
// are error findings of invalid-schema or too-large, that the rest of the
// server is linted as usual, and that the pathological inputs finish.
func TestRefusedToolsAreErrors(t *testing.T) {
	props := make([]string, 40000)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string"}`, i)
	}
	doc := `{"server":"shaky","tools":[` + strings.Join([]string{
		toolJSON("search_items", "Search the items.", ""),
		toolJSON("regex", "Match things.", `{"type":"object","properties":{"q":{"type":"string","pattern":"(((("}}}`),
		toolJSON("dangling", "Point at nothing.", `{"type":"object","properties":{"a":{"$ref":"#/$defs/none"}}}`),
		toolJSON("remote", "Point elsewhere.", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`),
		toolJSON("cyclic", "Point at itself.", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"a":{"$ref":"#/$defs/a"}}}`),
		toolJSON("wordy", strings.Repeat("Talk. ", 200000), ""),
		toolJSON("wide", "Take everything.", `{"type":"object","properties":{`+strings.Join(props, ",")+`}}`),
	}, ",") + `]}`
	s, _ := catalog.Parse("shaky.json", []byte(doc))
	if s == nil || len(s.Tools) != 1 || len(s.Refused) != 6 {
		t.Fatalf("parse: %+v", s)
	}
	rep, err := lint.Run([]*catalog.Server{s}, &lint.Options{Disable: []string{lint.RuleUnreachable}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tools != 7 {
		t.Errorf("report counts %d tools, want 7", rep.Tools)
	}
	got := map[string]lint.Finding{}
	for _, f := range rep.Findings {
		if f.Rule == lint.RuleInvalidSchema || f.Rule == lint.RuleTooLarge {
			got[f.Tool] = f
		}
	}
	for tool, want := range map[string]struct{ rule, text string }{
		"regex":    {lint.RuleInvalidSchema, "'((((' is not valid regex"},
		"dangling": {lint.RuleInvalidSchema, "points to nothing"},
		"remote":   {lint.RuleInvalidSchema, "points to another document"},
		"cyclic":   {lint.RuleInvalidSchema, "references loop"},
		"wordy":    {lint.RuleTooLarge, "the description is 1200000 bytes"},
		"wide":     {lint.RuleTooLarge, "the parameter schema is"},
	} {
		f, ok := got[tool]
		switch {
		case !ok:
			t.Errorf("no finding for %s", tool)
		case f.Rule != want.rule || f.Severity != lint.Error || f.Server != "shaky" || !strings.Contains(f.Message, want.text) || f.Fix == "":
			t.Errorf("finding for %s: %+v, want an error of %s saying %q", tool, f, want.rule, want.text)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d refusal findings, want 6: %+v", len(got), got)
	}
	if rep.Worst() != lint.Error {
		t.Errorf("worst severity %v, want error", rep.Worst())
	}
	// Disabled, the rules report nothing.
	rep, err = lint.Run([]*catalog.Server{s}, &lint.Options{Disable: []string{lint.RuleUnreachable, lint.RuleInvalidSchema, lint.RuleTooLarge}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Rule == lint.RuleInvalidSchema || f.Rule == lint.RuleTooLarge {
			t.Errorf("disabled rule reported %+v", f)
		}
	}
}
