//go:build unix

package mcptest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Gate makes a FIFO for FIFOEnv: a stdio test server given its path does
// not finish starting until release is called. Release waits for the
// server to be waiting at the gate; calling it again does nothing. Tests
// skip where FIFOs cannot be made.
func Gate(t testing.TB) (path string, release func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the server to open it
		if err != nil {
			t.Errorf("open gate: %v", err)
			return
		}
		f.Close()
	}
	t.Cleanup(func() {
		// A server still waiting must not outlive the test; one that is gone
		// leaves no reader (ENXIO), and the open must not wait for one.
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return path, release
}
