//go:build unix

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// rawControl returns the first thing in s that a terminal would act on, or
// "" when there is none.
func rawControl(s string) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for i, r := range s {
		switch {
		case r == '\r':
			if !strings.HasPrefix(s[i:], "\r\n") {
				return "CR"
			}
		case r == '\x1b', r == '\a', r == 0x7f:
			return string(r)
		case r < 0x20 && r != '\n' && r != '\t':
			return string(r)
		case r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return string(r)
		}
	}
	return ""
}

// hostileCatalog writes a catalog whose server description, tool names,
// descriptions and parameters carry mcptest.Payload.
func hostileCatalog(t *testing.T) string {
	t.Helper()
	p := mcptest.Payload
	doc := map[string]any{"server": "h", "description": "Server " + p, "tools": []any{
		map[string]any{"name": "inject", "description": "Inject a payload " + p + " into the answer.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"text" + p: map[string]any{"type": "string", "description": "The text " + p}}}},
		map[string]any{"name": "bad" + p, "description": "Carry a payload " + p + " in the name.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}},
	}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "h.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNoRawControlsReachTheTerminal: text from catalogs, MCP servers (tool
// names, descriptions, results, errors, standard error), models, session
// and metrics files carrying escape sequences, bells, carriage returns and
// bidi overrides reaches no command's text output raw; it is shown
// escaped.
func TestNoRawControlsReachTheTerminal(t *testing.T) {
	t.Parallel()
	p := mcptest.Payload
	catalog := hostileCatalog(t)
	hostile := func(mode string) map[string]any {
		command, args, env := mcptest.Command(map[string]string{mcptest.ServerEnv: mode})
		return map[string]any{"command": command, "args": args, "env": env}
	}
	mcp := writeMCPConfig(t, map[string]any{"h": hostile(mcptest.ServeHostile)})
	rejecting := writeMCPConfig(t, map[string]any{"h": hostile(mcptest.ServeHostile), "r": hostile(mcptest.ServeRejectInitialize)})
	sessions := t.TempDir()
	metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
	record, err := json.Marshal(map[string]any{"time": "2026-01-02T10:00:00Z", "api": "anthropic-messages", "model": "m" + p,
		"class": "native", "input": 10, "output": 2, "tools": 1, "declared": []string{"evil" + p}, "called": []string{"evil" + p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(metrics, append(record, "\nnot a record "+p+"\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	prompt := "Inject a payload " + p

	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		// want is a text the output must show (escaped), proving the
		// payload got there.
		want string
	}{
		{name: "search", args: []string{"search", "--catalog", catalog, "inject payload"}, want: `Inject a payload \x1b[2J`},
		{name: "search explain", args: []string{"search", "--catalog", catalog, "--explain", "mcp__h__inject", "inject payload " + p}},
		{name: "search hint", args: []string{"search", "--catalog", catalog, "zzz" + p}},
		{name: "lint", args: []string{"lint", "--catalog", catalog, "--fail-on", "never"}, want: `bad\x1b[2J`},
		{name: "lint fix", args: []string{"lint", "--catalog", catalog, "--fix"}},
		{name: "run", args: []string{"run", "--provider", "emulator", "--mcp", mcp, "--session-dir", sessions, "--metrics", "off", prompt}, want: `injected \x1b[2J`},
		{name: "run verbose", args: []string{"run", "-v", "--provider", "emulator", "--mcp", mcp, "--no-session", "--metrics", "off", prompt}, want: `hostile server starting \x1b[2J`},
		{name: "run verbose human", args: []string{"run", "-v", "--log-format", "human", "--provider", "emulator", "--mcp", mcp, "--no-session", "--metrics", "off", prompt}, want: `stderr: hostile server starting \x1b[2J`},
		{name: "chat", args: []string{"chat", "--provider", "emulator", "--mcp", rejecting, "--no-session", "--metrics", "off"}, stdin: prompt + "\n/servers\n/tools\n", want: `refused: \x1b[2J`},
		{name: "mcp list", args: []string{"mcp", "list", "--mcp", rejecting}, want: `refused: \x1b[2J`},
		{name: "mcp tools", args: []string{"mcp", "tools", "--mcp", mcp, "h"}, want: `Inject a payload \x1b[2J`},
		{name: "mcp tools failed", args: []string{"mcp", "tools", "--mcp", rejecting, "r"}, want: `refused: \x1b[2J`},
		{name: "sessions list", args: []string{"sessions", "list", "--dir", sessions}, want: `Inject a payload \x1b[2J`},
		{name: "sessions show", args: []string{"sessions", "show", "--dir", sessions, "last"}, want: `injected \x1b[2J`},
		{name: "stats", args: []string{"stats", metrics}, want: `evil\x1b[2J`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut := &watcher{}, &watcher{} // the servers' logs are written concurrently
			Main(t.Context(), tc.args, strings.NewReader(tc.stdin), out, errOut)
			for stream, text := range map[string]string{"stdout": out.String(), "stderr": errOut.String()} {
				if c := rawControl(text); c != "" {
					t.Errorf("%s holds a raw %q:\n%q", stream, c, text)
				}
			}
			if tc.want != "" && !strings.Contains(out.String()+errOut.String(), tc.want) {
				t.Errorf("the output lacks %q:\nstdout %q\nstderr %q", tc.want, out.String(), errOut.String())
			}
		})
	}
}

// TestJSONOutputKeepsTextAsItIs: --json output is JSON, whose strings
// carry the payload exactly (escaped by the JSON encoder where JSON
// escapes), not the escapes shown to people.
func TestJSONOutputKeepsTextAsItIs(t *testing.T) {
	t.Parallel()
	p := mcptest.Payload
	code, out, errOut := run(t, "search", "--json", "--catalog", hostileCatalog(t), "inject payload")
	var got struct {
		Hits []struct{ Description string }
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got.Hits) == 0 {
		t.Fatalf("exit %d, %v: %s%s", code, err, out, errOut)
	}
	if got.Hits[0].Description != "Inject a payload "+p+" into the answer." {
		t.Errorf("description %q", got.Hits[0].Description)
	}
	command, args, env := mcptest.Command(map[string]string{mcptest.ServerEnv: mcptest.ServeHostile})
	mcp := writeMCPConfig(t, map[string]any{"h": map[string]any{"command": command, "args": args, "env": env}})
	code, out, errOut = runAgent(t, agentRunOpts{}, "--mcp", mcp, "--no-session", "--metrics", "off", "--json", "Inject a payload")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	found := false
	for _, ev := range parseEvents(t, out) {
		if ev.Type == "tool_end" && ev.Call.Name == "mcp__h__inject" {
			found = strings.Contains(jsonText(ev), "injected "+p+"\nsecond line "+p)
		}
	}
	if !found {
		t.Errorf("the tool_end event of inject does not carry the result as it is:\n%s", out)
	}
}

// jsonText is the text of a JSON event's message.
func jsonText(ev jsonLine) string {
	if ev.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range ev.Message.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestEmulateLogIsSafe: the emulator's request log quotes the request's
// model and the error it answered; a client cannot write raw controls to
// its terminal.
func TestEmulateLogIsSafe(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	stderr := &watcher{}
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"emulate", "--listen", "127.0.0.1:0"}, strings.NewReader(""), outW, stderr)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	addr := strings.Fields(line)[3]
	model, _ := json.Marshal("m" + mcptest.Payload)
	for _, body := range []string{
		`{"model":` + string(model) + `,"messages":[{"role":"user","content":"hello"}]}`,
		`{"model":"m","messages":[{"role":` + string(model) + `,"content":"hello"}]}`,
	} {
		req, _ := http.NewRequest("POST", addr+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer k")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	cancel()
	<-done
	log := stderr.String()
	if c := rawControl(log); c != "" || strings.Count(log, `m\x1b[2J`) != 2 {
		t.Errorf("the request log (raw %q) does not show both models escaped:\n%q", c, log)
	}
}
