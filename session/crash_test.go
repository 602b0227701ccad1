package session_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// crashEnv makes the test binary a crash test child: "open:PATH" appends
// to the session at PATH, "create:DIR" creates one in DIR and prints
// "path PATH" first.
const crashEnv = "TOOLSHELF_SESSION_CRASH_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(crashEnv); mode != "" {
		crashChild(mode)
		os.Exit(2) // crashChild only returns on failure
	}
	os.Exit(m.Run())
}

// crashChild appends entries as fast as it can, printing the id of each
// one after Append returns, until it is killed. Every eighth message is
// large, so that some kills land in the middle of a write.
func crashChild(mode string) {
	var s *session.Session
	var err error
	if dir, ok := strings.CutPrefix(mode, "create:"); ok {
		if s, err = session.Create(dir, nil); err == nil {
			_, err = fmt.Fprintf(os.Stdout, "path %s\n", s.Path())
		}
	} else {
		s, err = session.Open(strings.TrimPrefix(mode, "open:"), nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	big := strings.Repeat("0123456789abcdef", 1<<10)
	for i := 0; ; i++ {
		text := fmt.Sprint("entry ", i)
		if i%8 == 7 {
			text += big
		}
		e, err := s.Append(llm.UserText(text, int64(i)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		if _, err := fmt.Fprintln(os.Stdout, e.ID); err != nil {
			return
		}
	}
}

// TestCrash kills a child process that appends to a session at varied
// points and checks that every entry it reported as written survives and
// that the session stays appendable.
func TestCrash(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	shared := newSession(t)
	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}
	// k is how many ids to read before the kill; the runs of every
	// fourth one create their own session.
	ks := []int{0, 0, 1, 2, 3, 5, 8, 13, 21, 34, 0, 1, 4, 7, 9, 15, 16, 23, 30, 2, 0, 6, 11, 40}
	var recovered int64
	for run, k := range ks {
		create := run%4 == 0
		mode, path := "open:"+shared.Path(), shared.Path()
		dir := t.TempDir()
		if create {
			mode, path = "create:"+dir, ""
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"="+mode)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(out)
		var reported []string
		// next reads the next complete line (a path or an id); it
		// reports false at the end of the output.
		next := func() bool {
			line, err := r.ReadString('\n')
			if err != nil {
				return false
			}
			line = strings.TrimSuffix(line, "\n")
			if p, ok := strings.CutPrefix(line, "path "); ok {
				path = p
			} else {
				reported = append(reported, line)
			}
			return true
		}
		for len(reported) < k {
			if !next() {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("run %d: the child stopped after %d ids: %s", run, len(reported), stderr.String())
			}
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for next() { // what the child reported before it died
		}
		err = cmd.Wait()
		if cmd.ProcessState.Exited() {
			t.Fatalf("run %d: the child exited by itself (%v): %s", run, err, stderr.String())
		}
		if path == "" { // killed before it said where
			files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			if len(files) > 1 {
				t.Fatalf("run %d: %d session files from one child: %v", run, len(files), files)
			}
			if len(files) == 0 {
				continue
			}
			path = files[0]
		}
		recovered += checkAfterCrash(t, run, path, reported)
	}
	t.Logf("%d kills; %d bytes of torn lines recovered in all", len(ks), recovered)
}

// checkAfterCrash opens the session a killed child wrote and checks it.
func checkAfterCrash(t *testing.T, run int, path string, reported []string) int64 {
	t.Helper()
	s, err := session.Open(path, nil)
	if err != nil {
		t.Fatalf("run %d: %v", run, err)
	}
	have := make(map[string]bool)
	for _, e := range s.Entries() {
		have[e.ID] = true
	}
	for i, id := range reported {
		if !have[id] {
			t.Fatalf("run %d: entry %d (%s) was reported written but is missing", run, i, id)
		}
	}
	e, err := s.Append(llm.UserText(fmt.Sprint("after run ", run), 0))
	if err != nil {
		t.Fatalf("run %d: append after the crash: %v", run, err)
	}
	recovered := s.Recovered()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := session.Open(path, nil)
	if err != nil {
		t.Fatalf("run %d: reopening after the append: %v", run, err)
	}
	defer r.Close()
	if r.Leaf() != e.ID || r.Recovered() != 0 {
		t.Fatalf("run %d: reopened leaf %q (want %q), recovered %d", run, r.Leaf(), e.ID, r.Recovered())
	}
	return recovered
}
