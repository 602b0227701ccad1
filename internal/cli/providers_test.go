package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
)

func TestCapabilitiesResolvesModels(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "capabilities", "--json", "claude-opus-5-5", "gpt-5.6-sol", "llama3.3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []struct {
		API          string
		Model        string
		Capabilities struct{ Tools string }
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	want := [][3]string{
		{"anthropic-messages", "claude-opus-5-5", "changes"},
		{"openai-responses", "gpt-5.6-sol", "additions"},
		{"openai-chat", "llama3.3", "none"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows: %s", len(rows), out)
	}
	for i, w := range want {
		if got := [3]string{rows[i].API, rows[i].Model, rows[i].Capabilities.Tools}; got != w {
			t.Errorf("row %d = %v, want %v", i, got, w)
		}
	}
}

func TestCapabilitiesRulesFileAndClass(t *testing.T) {
	t.Parallel()
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(`[{"api":"openai-chat","model":"qwen*","tools":"bridge"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "capabilities", "--capabilities", rules, "qwen3-coder", "llama3.3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "qwen3-coder  bridge") || !strings.Contains(out, "llama3.3     none") {
		t.Errorf("rules file not applied:\n%s", out)
	}
	code, out, _ = run(t, "capabilities", "--class", "bridge", "claude-sonnet-5")
	if code != 0 || !strings.Contains(out, "bridge") {
		t.Errorf("--class bridge: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"capabilities", "--class", "additions", "--provider", "anthropic", "claude-opus-5-5"}, `tool class "additions" is not available on anthropic-messages`},
		{[]string{"capabilities", "--class", "magic", "x"}, `unknown --class "magic"`},
		{[]string{"capabilities", "--provider", "mistral", "x"}, `unknown --provider "mistral"`},
		{[]string{"capabilities", "--capabilities", filepath.Join(t.TempDir(), "missing.json")}, "reading capability rules"},
	} {
		code, _, errOut := run(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

func TestCapabilitiesTable(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "capabilities", "--provider", "openai-chat")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "anthropic-messages") || !strings.Contains(out, "kimi-*") {
		t.Errorf("table for openai-chat:\n%s", out)
	}
}

func TestRenderSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := writeSession(t, dir, "what is in a.txt?")
	late := llm.Tool{Name: "write", Description: "Write a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	for _, m := range []llm.Message{
		{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{late}, Timestamp: 5},
		llm.UserText("now write b.txt", 6),
	} {
		if _, err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	cases := []struct {
		args []string
		want []string
	}{
		// Anthropic native: the head keeps only read and the placeholder;
		// write arrives as an inline tool_addition.
		{[]string{"--model", "claude-opus-5-5"}, []string{`"name": "__toolshelf_deferred_placeholder__"`, `"type": "tool_addition"`, `"role": "system"`}},
		// Collapse: both tools at the top level, no system message later.
		{[]string{"--model", "claude-sonnet-5"}, []string{`"name": "write"`}},
		{[]string{"--model", "gpt-5.6-sol"}, []string{`"type": "tool_search_output"`, `"role": "developer"`}},
		{[]string{"--model", "llama3.3", "--class", "bridge"}, []string{`"name": "call_tool"`, "<system-update>", `{\"name\":\"write\"`}},
		// --provider names the adapter whatever the model's name suggests.
		{[]string{"--model", "gpt-5.6-sol", "--provider", "openai-chat"}, []string{`"messages": [`, `"model": "gpt-5.6-sol"`}},
	}
	for _, c := range cases {
		args := append([]string{"render", "--dir", dir}, c.args...)
		code, out, errOut := run(t, append(args, "last")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(out), &body); err != nil {
			t.Fatalf("%v: not JSON: %v\n%s", c.args, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: body lacks %s:\n%s", c.args, w, out)
			}
		}
	}
	code, _, errOut := run(t, "render", "--dir", dir, "last")
	if code != 2 || !strings.Contains(errOut, "render needs --model") {
		t.Errorf("without --model: exit %d, %s", code, errOut)
	}
	code, _, errOut = run(t, "render", "--dir", dir, "--model", "gpt-5.6", "--cache-retention", "1h", "last")
	if code != 2 || !strings.Contains(errOut, "Anthropic Messages API only") {
		t.Errorf("retention on OpenAI: exit %d, %s", code, errOut)
	}
	code, _, errOut = run(t, "render", "--dir", dir, "--model", "claude-opus-5-5", "--cache-retention", "2h", "last")
	if code == 0 || !strings.Contains(errOut, "2h") {
		t.Errorf("bad retention: exit %d, %s", code, errOut)
	}
}
