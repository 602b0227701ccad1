//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// startToolshelf starts the test binary as toolshelf with args and returns
// it with its stdout, read line by line.
func startToolshelf(t *testing.T, args ...string) (*exec.Cmd, *bufio.Scanner, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"="+string(data))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
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
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	return cmd, sc, &stderr
}

// waitForLine reads lines until one contains marker.
func waitForLine(t *testing.T, sc *bufio.Scanner, stderr *bytes.Buffer, marker string) {
	t.Helper()
	for sc.Scan() {
		if strings.Contains(sc.Text(), marker) {
			return
		}
	}
	t.Fatalf("the output ended before %q; stderr: %s", marker, stderr.String())
}

// TestStopDuringAToolCallThenResume is defect 1 of issue 11: a toolshelf
// process stopped while a tool runs — killed (SIGKILL: OOM, power loss),
// terminated (SIGTERM: timeout, systemd, docker stop) or hung up (SIGHUP)
// — leaves a session that the next run resumes: the call is answered (as
// interrupted or cancelled), and every call has one result.
func TestStopDuringAToolCallThenResume(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir, mcp := t.TempDir(), testMCP(t, nil)
			cmd, out, stderr := startToolshelf(t, "run", "--provider", "emulator", "--mcp", mcp, "--session-dir", dir, "--json", "Never answer")
			waitForLine(t, out, stderr, `"type":"tool_start","turn":1`)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for out.Scan() { // drain, so the child is not blocked writing
			}
			err := cmd.Wait()
			if sig != syscall.SIGKILL {
				// A stop signal ends the run like Ctrl-C: the call is
				// answered as cancelled and the process says why.
				if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "stopped by "+sig.String()) {
					t.Errorf("after %v: %v, stderr: %s", sig, err, stderr.String())
				}
			}
			code, stdout, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--resume", "last", "Echo the text")
			if code != 0 || !strings.HasPrefix(stdout, "mcp__t__echo returned:") {
				t.Fatalf("resume after %v: exit %d, stdout %q: %s", sig, code, stdout, errOut)
			}
			msgs := checkConsistent(t, dir)
			text, isErr, found := resultOf(msgs, "mcp__t__hang")
			want := "cancelled"
			if sig == syscall.SIGKILL {
				want = "interrupted"
				if !strings.Contains(errOut, "stopped during 1 tool call (mcp__t__hang)") {
					t.Errorf("the resume did not say what it answered: %s", errOut)
				}
			}
			if !found || !isErr || !strings.Contains(text, want) {
				t.Errorf("hang's result after %v: %q (error %v, found %v), want %q", sig, text, isErr, found, want)
			}
		})
	}
}

// TestSecondWriterIsRefused is defect 2 of issue 11: while a run holds a
// session, another run resuming it fails at once, naming the holder, and
// changes nothing; --fork continues in a copy.
func TestSecondWriterIsRefused(t *testing.T) {
	t.Parallel()
	dir, mcp := t.TempDir(), testMCP(t, nil)
	if code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "Echo the text"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path, err := session.Latest(dir)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Another process holds the session while its tool hangs.
	cmd, out, stderr := startToolshelf(t, "run", "--provider", "emulator", "--mcp", mcp, "--session-dir", dir, "--resume", "last", "--json", "Never answer")
	waitForLine(t, out, stderr, `"name":"mcp__t__hang"`)
	code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--resume", "last", "Echo the text")
	if code == 0 || !strings.Contains(errOut, fmt.Sprintf("in use by process %d", cmd.Process.Pid)) || !strings.Contains(errOut, "--fork") {
		t.Errorf("second writer: exit %d: %s", code, errOut)
	}
	code, _, errOut = runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--resume", "last", "--fork", "Echo the text")
	if code != 0 {
		t.Errorf("--fork of a held session: exit %d: %s", code, errOut)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	for out.Scan() {
	}
	cmd.Wait()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(after, before) {
		t.Error("the session's earlier entries changed")
	}
}

// TestConcurrentResumesLoseNoTurn: rounds of two simultaneous resumes of
// one session never both succeed with one turn lost: every run that exits
// 0 finds its prompt on the session's branch, and every other run said the
// session was in use.
func TestConcurrentResumesLoseNoTurn(t *testing.T) {
	t.Parallel()
	dir, mcp := t.TempDir(), testMCP(t, nil)
	if code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "Echo the text"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var succeeded []string
	for round := range 5 {
		var wg sync.WaitGroup
		codes, errOuts := make([]int, 2), make([]string, 2)
		for i, who := range []string{"A", "B"} {
			wg.Go(func() {
				codes[i], _, errOuts[i] = runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--resume", "last",
					fmt.Sprintf("Echo the text %s%d", who, round+1))
			})
		}
		wg.Wait()
		for i, who := range []string{"A", "B"} {
			switch {
			case codes[i] == 0:
				succeeded = append(succeeded, fmt.Sprintf("%s%d", who, round+1))
			case !strings.Contains(errOuts[i], "is in use by"):
				t.Errorf("round %d, %s: exit %d: %s", round+1, who, codes[i], errOuts[i])
			}
		}
	}
	var prompts []string
	for _, m := range checkConsistent(t, dir) {
		if m.Role == llm.RoleUser {
			prompts = append(prompts, llm.ContentText(m.Content, ""))
		}
	}
	branch := strings.Join(prompts, "\n")
	for _, turn := range succeeded {
		if !strings.Contains(branch, "Echo the text "+turn) {
			t.Errorf("turn %s exited 0 but is not on the session's branch:\n%s", turn, branch)
		}
	}
	if len(succeeded) < 5 {
		t.Errorf("only %d of 10 runs succeeded: %v", len(succeeded), succeeded)
	}
}

// TestDamagedSessionIsReportedNotSkipped is defect 8 of issue 11: a
// damaged session is named as damaged (not as missing) by id and by last,
// with the line and the fork that recovers it, and last never continues an
// older session in its place; the fork it names works.
func TestDamagedSessionIsReportedNotSkipped(t *testing.T) {
	t.Parallel()
	dir, mcp := t.TempDir(), testMCP(t, nil)
	for _, prompt := range []string{"Echo the text", "Return the process id"} {
		if code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, prompt); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	}
	infos, err := session.List(dir)
	if err != nil || len(infos) != 2 {
		t.Fatalf("sessions: %v, %v", infos, err)
	}
	newest := infos[0]
	data, err := os.ReadFile(newest.Path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[5] = "{\"type\":\"message\",\"id\":\n" // damaged in the middle
	if err := os.WriteFile(newest.Path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{newest.ID, newest.ID[:6], "last", newest.Path} {
		code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--resume", name, "Echo the text")
		if code == 0 || !strings.Contains(errOut, "line 6") || !strings.Contains(errOut, "toolshelf sessions fork") || strings.Contains(errOut, "no session") {
			t.Errorf("--resume %s: exit %d: %s", name, code, errOut)
		}
	}
	// Nothing was appended anywhere.
	for _, in := range infos {
		s, err := session.Open(in.Path, &session.Options{ReadOnly: true})
		if in.Path == newest.Path {
			if err == nil {
				t.Error("the damaged session opens")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := len(s.Entries()); n != in.Entries {
			t.Errorf("the older session has %d entries, had %d", n, in.Entries)
		}
		s.Close()
	}
	// The recovery the message names works.
	_, _, errOut := run(t, "sessions", "show", "last", "--dir", dir)
	fork := regexp.MustCompile(`toolshelf sessions fork (\S+) --at (\S+)`).FindStringSubmatch(errOut)
	if fork == nil {
		t.Fatalf("sessions show of the damaged session names no fork: %s", errOut)
	}
	code, out, errOut := run(t, "sessions", "fork", fork[1], "--at", fork[2], "--dir", dir)
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(out), ".jsonl") {
		t.Fatalf("fork: exit %d, %q %s", code, out, errOut)
	}
	code, stdout, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--resume", strings.TrimSpace(out), "Echo the text")
	if code != 0 || !strings.HasPrefix(stdout, "mcp__t__echo returned:") {
		t.Errorf("resume of the recovered fork: exit %d, %q: %s", code, stdout, errOut)
	}
}

// TestServeStopIsClean: a gateway asked to stop — Ctrl-C (SIGINT) or
// SIGTERM to the process, or its context cancelled in this process —
// exits 0 without an ERROR line: a requested stop is not a failure.
func TestServeStopIsClean(t *testing.T) {
	mcp := testMCP(t, nil)
	for _, transport := range [][]string{nil, {"--http", "127.0.0.1:0"}} {
		args := append([]string{"--mcp", mcp, "--metrics", "off"}, transport...)
		t.Run(fmt.Sprint("cancelled", transport), func(t *testing.T) {
			_, stop := startServe(t, args...)
			rest, code := stop()
			if code != 0 || strings.Contains(rest, "ERROR") {
				t.Errorf("after the stop: exit %d, stderr %q; want 0 and no ERROR", code, rest)
			}
		})
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(fmt.Sprint(sig, transport), func(t *testing.T) {
				exe, err := os.Executable()
				if err != nil {
					t.Fatal(err)
				}
				data, err := json.Marshal(append([]string{"serve"}, args...))
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(exe, "-test.run=^$")
				cmd.Env = append(os.Environ(), mainEnv+"="+string(data))
				stdin, err := cmd.StdinPipe() // open: a client that has not spoken yet
				if err != nil {
					t.Fatal(err)
				}
				defer stdin.Close()
				stderr, err := cmd.StderrPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill() })
				sc := bufio.NewScanner(stderr)
				if !sc.Scan() || !strings.HasPrefix(sc.Text(), "toolshelf gateway on ") {
					t.Fatalf("serve did not say it is ready: %q", sc.Text())
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				var rest strings.Builder
				for sc.Scan() {
					rest.WriteString(sc.Text() + "\n")
				}
				err = cmd.Wait()
				if code := cmd.ProcessState.ExitCode(); code != 0 || strings.Contains(rest.String(), "ERROR") {
					t.Errorf("after %v: exit %d (%v), stderr %q; want 0 and no ERROR", sig, code, err, rest.String())
				}
			})
		}
	}
}
