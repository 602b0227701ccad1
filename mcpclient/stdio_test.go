//go:build unix

package mcpclient

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// stdioServer is the configuration of the test binary as a stdio server.
func stdioServer(name string, env map[string]string) ServerConfig {
	command, args, e := mcptest.Command(env)
	return ServerConfig{Name: name, Type: "stdio", Command: command, Args: args, Env: e}
}

func TestStdioCrashThenReconnect(t *testing.T) {
	t.Parallel()
	f := newFixture(t, stdioServer("proc", nil))
	f.m.Start(f.ctx())
	f.waitAll()
	if st := f.status("proc"); st.State != Connected {
		t.Fatalf("state %s: %v", st.State, st.Err)
	}
	pid1 := text(f.call("mcp__proc__pid", `{}`))
	r := f.call("mcp__proc__crash", `{}`)
	t.Logf("crash result: %+v", r)
	if !r.IsError || !strings.Contains(text(r), "next call reconnects") {
		t.Errorf("crash result = %+v, want an error result that says the next call reconnects", r)
	}
	if st := f.status("proc"); st.State != Disconnected {
		t.Errorf("state after crash = %s, want disconnected", st.State)
	}
	r = f.call("mcp__proc__echo", `{"text":"again"}`)
	if r.IsError || text(r) != "echo: again" {
		t.Fatalf("call after crash = %+v", r)
	}
	pid2 := text(f.call("mcp__proc__pid", `{}`))
	if pid1 == pid2 {
		t.Errorf("the server was not restarted: pid %s both times", pid1)
	}
	if st := f.status("proc"); st.State != Connected {
		t.Errorf("state after reconnect = %s", st.State)
	}
}

func TestStdioHangTimesOut(t *testing.T) {
	t.Parallel()
	cfg := stdioServer("slow", nil)
	// The timeout also bounds the start of the re-executed test binary,
	// which takes a few hundred milliseconds under the race detector.
	cfg.Timeout = 2 * time.Second
	f := newFixture(t, cfg)
	f.m.Start(f.ctx())
	f.waitAll()
	start := time.Now()
	r := f.call("mcp__slow__hang", `{}`)
	elapsed := time.Since(start)
	t.Logf("hang result after %v: %+v", elapsed, r)
	if !r.IsError || !strings.Contains(text(r), "within 2s") || !strings.Contains(text(r), "next call reconnects") {
		t.Errorf("hang result = %q", text(r))
	}
	if elapsed > 10*time.Second {
		t.Errorf("the call took %v", elapsed)
	}
	if st := f.status("slow"); st.State != Disconnected {
		t.Errorf("state = %s, want disconnected", st.State)
	}
	if r := f.call("mcp__slow__echo", `{"text":"x"}`); r.IsError {
		t.Errorf("call after timeout = %q", text(r))
	}
}

func TestStdioCloseKillsChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t, stdioServer("a", nil), stdioServer("b", nil))
	f.m.Start(f.ctx())
	f.waitAll()
	var pids []int
	for _, name := range []string{"mcp__a__pid", "mcp__b__pid"} {
		pid, err := strconv.Atoi(text(f.call(name, `{}`)))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if err := f.m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("process %d still exists after Close (kill 0: %v)", pid, err)
		}
	}
	if r := f.call("mcp__a__echo", `{"text":"x"}`); !r.IsError {
		t.Errorf("call after Close = %+v, want an error result", r)
	}
}

func TestStdioSlowDeferredServerDoesNotDelayWaitDirect(t *testing.T) {
	t.Parallel()
	path, release := mcptest.Gate(t)
	slow := stdioServer("slow", map[string]string{mcptest.FIFOEnv: path})
	direct := stdioServer("quick", nil)
	direct.Exposure = "direct"
	f := newFixture(t, slow, direct)
	f.m.Start(f.ctx())
	if notice := f.m.WaitDirect(f.ctx(), time.Minute); notice != "" {
		t.Errorf("WaitDirect = %q, want no notice", notice)
	}
	// The slow server cannot have finished starting: it waits for the gate.
	if st := f.status("slow"); st.State != Connecting {
		t.Errorf("slow server state = %s, want connecting", st.State)
	}
	if st := f.status("quick"); st.State != Connected {
		t.Errorf("direct server state = %s, want connected (%v)", st.State, st.Err)
	}
	if !f.reg.IsActive("mcp__quick__echo") {
		t.Errorf("the direct server's tools are not active: %v", f.reg.ActiveNames())
	}
	release()
	if err := f.m.WaitAll(f.ctx()); err != nil {
		t.Fatal(err)
	}
	if st := f.status("slow"); st.State != Connected {
		t.Errorf("slow server state after the wait = %s (%v)", st.State, st.Err)
	}
	if _, ok := f.reg.Get("mcp__slow__echo"); !ok {
		t.Errorf("tool_search's wait ended before the slow server's tools registered")
	}
}

func TestStdioSlowDirectServerGetsNotice(t *testing.T) {
	t.Parallel()
	path, release := mcptest.Gate(t)
	slow := stdioServer("slow", map[string]string{mcptest.FIFOEnv: path})
	slow.ToolExposure = []ToolExposure{{Pattern: "echo", Exposure: "direct"}}
	f := newFixture(t, slow)
	f.m.Start(f.ctx())
	if notice := f.m.WaitDirect(f.ctx(), 10*time.Millisecond); notice != StillConnectingNotice {
		t.Errorf("WaitDirect = %q, want the still-connecting notice", notice)
	}
	release()
	if notice := f.m.WaitDirect(f.ctx(), time.Minute); notice != "" {
		t.Errorf("second WaitDirect = %q", notice)
	}
	if !f.reg.IsActive("mcp__slow__echo") || f.reg.IsActive("mcp__slow__pid") {
		t.Errorf("active = %v, want only echo of the slow server", f.reg.ActiveNames())
	}
}

func TestStdioEnvCwdAndStderr(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := stdioServer("env", nil)
	cfg.Cwd = dir
	f := newFixture(t, cfg)
	f.m.Start(f.ctx())
	f.waitAll()
	if st := f.status("env"); st.State != Connected {
		t.Fatalf("state %s: %v", st.State, st.Err)
	}
	if got := text(f.call("mcp__env__cwd", `{}`)); got != dir {
		t.Errorf("server cwd = %q, want %q", got, dir)
	}
	if got := text(f.call("mcp__env__getenv", `{"name":"HOME"}`)); got != os.Getenv("HOME") {
		t.Errorf("the server did not inherit HOME: %q", got)
	}
	// The server got the configured variable (it serves because of it) and
	// its standard error reached the log.
	if !strings.Contains(f.log.String(), "test server starting") || !strings.Contains(f.log.String(), "server=env") {
		t.Errorf("the server's standard error is not in the log:\n%s", f.log.String())
	}
}

func TestStdioMissingCommandFails(t *testing.T) {
	t.Parallel()
	cfg := ServerConfig{Name: "ghost", Type: "stdio", Command: "toolshelf-no-such-command"}
	f := newFixture(t, cfg)
	f.m.Start(f.ctx())
	f.waitAll()
	st := f.status("ghost")
	if st.State != Failed || st.Err == nil {
		t.Fatalf("status = %+v, want failed", st)
	}
	for _, want := range []string{`"ghost"`, "mcp.json", "toolshelf-no-such-command", "install"} {
		if !strings.Contains(st.Err.Error(), want) {
			t.Errorf("error %q does not mention %q", st.Err, want)
		}
	}
}

// TestStdioRelativeCommandNamesWhatWasTried: a relative command that is
// not there fails with the path that was tried and where relative
// commands are taken from.
func TestStdioRelativeCommandNamesWhatWasTried(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"local": {"command": "./bin/server"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	m := mustManager(t, cfg)
	defer m.Close()
	m.Start(t.Context())
	if err := m.WaitAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := m.Servers()[0]
	tried := filepath.Join(dir, "bin", "server")
	for _, want := range []string{tried + " does not exist", `a relative "command" is taken from the servers file's folder`} {
		if st.State != Failed || st.Err == nil || !strings.Contains(st.Err.Error(), want) {
			t.Errorf("status %s, %v; want failed, saying %q", st.State, st.Err, want)
		}
	}
}

// TestStdioMissingCwdIsBlamedOnTheFolder: a server whose working folder
// does not exist fails naming the folder, not its command (in a process
// group of its own, the failure arrives as fork/exec, not chdir).
func TestStdioMissingCwdIsBlamedOnTheFolder(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no", "such")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := mustManager(t, &Config{Servers: []ServerConfig{{Name: "cwd", Type: "stdio", Command: exe, Cwd: missing}}})
	defer m.Close()
	m.Start(t.Context())
	if err := m.WaitAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := m.Servers()[0]
	if want := "its working folder " + missing + " cannot be entered"; st.State != Failed || st.Err == nil || !strings.Contains(st.Err.Error(), want) {
		t.Errorf("status %s, %v; want failed, saying %q", st.State, st.Err, want)
	}
}

// TestStdioServerHasItsOwnProcessGroup: a stdio server leads a process
// group of its own, so the SIGINT a terminal sends its foreground group on
// Ctrl-C reaches toolshelf, not the server.
func TestStdioServerHasItsOwnProcessGroup(t *testing.T) {
	t.Parallel()
	f := newFixture(t, stdioServer("proc", nil))
	f.m.Start(f.ctx())
	f.waitAll()
	pid, err := strconv.Atoi(text(f.call("mcp__proc__pid", `{}`)))
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	if pgid != pid || pgid == syscall.Getpgrp() {
		t.Errorf("the server (pid %d) is in process group %d; toolshelf's is %d", pid, pgid, syscall.Getpgrp())
	}
}
