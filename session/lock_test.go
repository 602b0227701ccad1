//go:build unix

package session_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// TestOneWriterPerSession: while a Session is open for appending, a second
// writer of the same file is refused with the holder named, readers are
// not, and the file is free again once the writer closes.
func TestOneWriterPerSession(t *testing.T) {
	s := newSession(t)
	if _, err := s.Append(llm.UserText("first", 1)); err != nil {
		t.Fatal(err)
	}
	_, err := session.Open(s.Path(), nil)
	var le *session.LockedError
	if !errors.As(err, &le) || !errors.Is(err, session.ErrLocked) {
		t.Fatalf("second writer: err = %v, want a *LockedError", err)
	}
	if le.Path != s.Path() {
		t.Errorf("LockedError.Path = %q, want %q", le.Path, s.Path())
	}
	if runtime.GOOS == "linux" && le.PID != os.Getpid() {
		t.Errorf("LockedError.PID = %d, want this process, %d (%v)", le.PID, os.Getpid(), err)
	}
	// A reader is not held up and sees what was written.
	r, err := session.Open(s.Path(), &session.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reader while a writer holds the session: %v", err)
	}
	if got := len(r.Entries()); got != 1 {
		t.Errorf("the reader sees %d entries, want 1", got)
	}
	r.Close()
	// A fork reads its source without the lock.
	f, err := session.Fork(s.Path(), "", t.TempDir(), nil)
	if err != nil {
		t.Fatalf("fork of a held session: %v", err)
	}
	f.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := session.Open(s.Path(), nil)
	if err != nil {
		t.Fatalf("open after the writer closed: %v", err)
	}
	s2.Close()
}

// TestCreatedSessionIsLocked: a new session (and a fork) is held by its
// creator from the start.
func TestCreatedSessionIsLocked(t *testing.T) {
	s := newSession(t)
	if _, err := session.Open(s.Path(), nil); !errors.Is(err, session.ErrLocked) {
		t.Errorf("open of a session just created: err = %v, want ErrLocked", err)
	}
	f, err := session.Fork(s.Path(), "", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := session.Open(f.Path(), nil); !errors.Is(err, session.ErrLocked) {
		t.Errorf("open of a fork just made: err = %v, want ErrLocked", err)
	}
}

// TestLockAcrossProcesses: a child process appending to a session holds it
// against this one, which is told the child's pid; the child's death, even
// by SIGKILL, frees it.
func TestLockAcrossProcesses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(t)
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"=open:"+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	// The child prints an id after each append: once one is out, it holds
	// the lock.
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("the child wrote nothing: %v", err)
	}
	_, err = session.Open(path, nil)
	var le *session.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("open while the child writes: err = %v, want a *LockedError", err)
	}
	if runtime.GOOS == "linux" && le.PID != cmd.Process.Pid {
		t.Errorf("the error names pid %d, want the child's %d: %v", le.PID, cmd.Process.Pid, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	s2, err := session.Open(path, nil)
	if err != nil {
		t.Fatalf("open after the child was killed: %v", err)
	}
	s2.Close()
}
