package cli

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestHumanLogLines: on a terminal a record is one short line — level,
// server padded so that messages line up, the message, the error after a
// colon, other values in parentheses — without key=value pairs or times,
// and text from outside is made safe and kept on one line.
func TestHumanLogLines(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log := slog.New(newLogHandler(&b, logAuto, true, slog.LevelInfo))
	log.With("server", "memory").Warn("connection failed", "error", "exit status 1\nnpm ERR! \x1b[2J")
	log.With("server", "filesystem").Info("connected", "tools", 14)
	log.With("server", "memory").Info("stderr", "line", "Knowledge Graph MCP Server running on stdio")
	log.WithGroup("req").Debug("not shown")
	log.Info("metrics not recorded", "err", "disk full", "path", "/x")
	want := "WARN  memory  connection failed: exit status 1 npm ERR! \\x1b[2J\n" +
		"INFO  filesystem  connected (tools 14)\n" +
		"INFO  memory      stderr: Knowledge Graph MCP Server running on stdio\n" +
		"INFO              metrics not recorded: disk full (path /x)\n"
	if got := b.String(); got != want {
		t.Errorf("human lines:\n%s\nwant:\n%s", got, want)
	}
}

// TestLogFormats: auto is human on a terminal and slog's key=value text
// elsewhere (what programs reading stderr parse); text and json are slog's
// whatever the output; human is human everywhere.
func TestLogFormats(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		format   string
		terminal bool
		want     string
	}{
		{logAuto, true, "WARN  s  connection failed: boom\n"},
		{logAuto, false, `level=WARN msg="connection failed" server=s error=boom`},
		{logHuman, false, "WARN  s  connection failed: boom\n"},
		{logText, true, `level=WARN msg="connection failed" server=s error=boom`},
		{logJSON, true, `"level":"WARN","msg":"connection failed","server":"s","error":"boom"}`},
	} {
		var b bytes.Buffer
		slog.New(newLogHandler(&b, c.format, c.terminal, slog.LevelWarn)).With("server", "s").Warn("connection failed", "error", "boom")
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s (terminal %v): %q, want %q", c.format, c.terminal, b.String(), c.want)
		}
	}
}

// TestLogFormatFlag: --log-format is the root's, so it applies before or
// after the command; json gives slog's JSON on stderr; an unknown format
// is a usage error naming the choices.
func TestLogFormatFlag(t *testing.T) {
	t.Parallel()
	command, args, env := mcptest.Command(map[string]string{mcptest.ServerEnv: mcptest.ServeExit})
	mcp := writeMCPConfig(t, map[string]any{"gone": map[string]any{"command": command, "args": args, "env": env}})
	for _, argv := range [][]string{
		{"--log-format", "json", "run", "--provider", "emulator", "--mcp", mcp, "--no-session", "--metrics", "off", "Echo the text"},
		{"run", "--log-format", "json", "--provider", "emulator", "--mcp", mcp, "--no-session", "--metrics", "off", "Echo the text"},
	} {
		errOut := &watcher{}
		Main(t.Context(), argv, strings.NewReader(""), &watcher{}, errOut)
		found := false
		for line := range strings.SplitSeq(errOut.String(), "\n") {
			var rec struct{ Level, Msg, Server, Error string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Level == "WARN" && rec.Msg == "connection failed" && rec.Server == "gone" && rec.Error != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: no JSON record of the failed connection on stderr:\n%s", argv, errOut.String())
		}
	}
	code, _, errOut := run(t, "search", "--log-format", "xml", "x")
	if code != 2 || !strings.Contains(errOut, `--log-format: unknown "xml"; use auto, human, text or json`) {
		t.Errorf("--log-format xml: exit %d, %q", code, errOut)
	}
}

// TestLogsStayHumanBehindChatsPrompt: chat wraps stderr on a terminal so
// that warnings do not land on the prompt line; the log is still the
// human one, since what decides is the process's stderr, not the writer.
func TestLogsStayHumanBehindChatsPrompt(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	e := &env{stderr: &b, stderrTerminal: true, logs: logFlags{format: logAuto}}
	e.logger(true).With("server", "memory").Warn("connection failed", "error", "exit status 1")
	if got, want := b.String(), "WARN  memory  connection failed: exit status 1\n"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
