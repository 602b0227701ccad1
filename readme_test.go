package toolshelf_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/emulator"
)

// TestREADMELibraryProgram checks that the README's library program is
// examples/library/main.go, word for word, and that the program runs: built
// with the go command and pointed at the provider emulator, it answers a
// prompt and saves the session.
func TestREADMELibraryProgram(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join("examples", "library", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Use toolshelf as a Go library\n")
	_, block, ok2 := strings.Cut(section, "\n```go\n")
	block, _, ok3 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal(`README.md has no "## Use toolshelf as a Go library" section with a go block`)
	}
	if block+"\n" != string(program) {
		t.Errorf("the README's program differs from examples/library/main.go:\n%s", block)
	}
	if n := strings.Count(string(program), "\n"); n > 40 {
		t.Errorf("the program is %d lines long; a newcomer should need at most 40", n)
	}

	if testing.Short() {
		t.Skip("builds and runs the program; go test without -short does")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the program with")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "library")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./examples/library").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	em, err := emulator.New(emulator.Config{Responder: emulator.Echo{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(em)
	defer srv.Close()
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "hello there")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.URL,
		"XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the program: %v\n%s", err, stderr.String())
	}
	if got := stdout.String(); !strings.Contains(got, "echo: hello there") {
		t.Errorf("the program printed %q", got)
	}
	sessions, _ := filepath.Glob(filepath.Join(dir, "data", "toolshelf", "sessions", "*.jsonl"))
	if len(sessions) != 1 {
		t.Errorf("sessions saved: %v, want one", sessions)
	}
}
