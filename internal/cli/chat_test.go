//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
)

// TestChatCtrlCCancelsOnlyTheTurn: Ctrl-C in chat — the terminal's SIGINT
// to its whole foreground process group, here the group of a toolshelf
// process started as a terminal would — cancels the turn; the MCP servers
// run on (they used to get the SIGINT too and die: "disconnected … ended:
// signal: interrupt"), and the next turn uses them.
func TestChatCtrlCCancelsOnlyTheTurn(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args, err := json.Marshal([]string{"chat", "--provider", "emulator", "--mcp", testMCP(t, nil), "--no-session", "--metrics", "off", "--json"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"="+string(args))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the foreground group of its terminal
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 1<<20)
	// until reads events until one of the type and tool, and returns it.
	until := func(typ, name string) jsonLine {
		t.Helper()
		for out.Scan() {
			var ev jsonLine
			if json.Unmarshal(out.Bytes(), &ev) == nil && ev.Type == typ && (name == "" || ev.Call != nil && ev.Call.Name == name) {
				return ev
			}
		}
		t.Fatalf("the output ended before a %s event of %q; stderr: %s", typ, name, stderr.String())
		return jsonLine{}
	}
	say := func(line string) {
		t.Helper()
		if _, err := stdin.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	pid := func() string {
		t.Helper()
		say("Return the process id with mcp__t__pid")
		ev := until("tool_end", "mcp__t__pid")
		if ev.Message.IsError {
			t.Errorf("pid failed: %s", llm.ContentText(ev.Message.Content, ""))
		}
		until("agent_end", "")
		return llm.ContentText(ev.Message.Content, "")
	}
	before := pid()
	say("Never answer")
	until("tool_start", "mcp__t__hang")
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	until("agent_end", "")
	if after := pid(); after != before {
		t.Errorf("the server's process id was %s before Ctrl-C, %s after: it did not survive", before, after)
	}
	say("/servers")
	for out.Scan() {
		if line := out.Text(); strings.HasPrefix(line, "t ") {
			if !strings.HasPrefix(line, "t       connected") {
				t.Errorf("/servers after Ctrl-C: %q", line)
			}
			break
		}
	}
	stdin.Close()
	for out.Scan() {
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(stderr.String(), "(cancelled)") {
		t.Errorf("chat: %v; stderr: %s", err, stderr.String())
	}
}

// TestWarningsAtThePromptDoNotStaircase: on a terminal, a warning printed
// while chat's prompt waits for a line (the terminal is raw: a bare \n
// moves down without going back to column 0) starts at column 0, ends its
// lines with \r\n, and the prompt with what was typed is drawn again.
func TestWarningsAtThePromptDoNotStaircase(t *testing.T) {
	t.Parallel()
	keys, typing := io.Pipe()
	screen := &watcher{marker: "> ab"}
	drawn := make(chan struct{})
	screen.fn = func() { close(drawn) }
	raw := 0
	in := newTermInput(struct {
		io.Reader
		io.Writer
	}{keys, screen}, func() (func(), error) { raw++; return func() { raw-- }, nil })
	var stderr bytes.Buffer
	warnings := in.around(&stderr)
	got := make(chan string, 1)
	go func() {
		line, err := in.read("> ")
		if err != nil {
			t.Error(err)
		}
		got <- line
	}()
	if _, err := typing.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	<-drawn // the prompt and the typed text are on the line
	fmt.Fprintf(warnings, "level=WARN msg=\"connection failed\"\nsecond line\n")
	if _, err := typing.Write([]byte("c\r")); err != nil {
		t.Fatal(err)
	}
	if line := <-got; line != "abc" {
		t.Errorf("read %q, want abc", line)
	}
	out := screen.String()
	i := strings.Index(out, "level=WARN")
	if stderr.Len() != 0 || i < 0 {
		t.Fatalf("the warning went to stderr %q; the screen shows %q", stderr.String(), out)
	}
	// Back to column 0 (4 columns left) and the line cleared before it,
	// \r\n after each line, then the prompt and "ab" again, and the last
	// key.
	if before := out[:i]; before != "> ab\x1b[4D\x1b[K" {
		t.Errorf("the warning does not start at a cleared column 0: %q", out)
	}
	if after := out[i:]; !strings.HasPrefix(after, "level=WARN msg=\"connection failed\"\r\nsecond line\r\n> abc") {
		t.Errorf("after the warning: %q", after)
	}
	if raw != 0 {
		t.Errorf("the terminal was left raw")
	}
	// Between prompts, warnings go to stderr as they are.
	fmt.Fprintf(warnings, "later\n")
	if stderr.String() != "later\n" {
		t.Errorf("between prompts, stderr has %q", stderr.String())
	}
}
