package toolshelf_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestREADMELibraryProgram checks that the README's library program is
// examples/library/main.go, word for word, and that the program runs as a
// fresh clone runs it: built with the go command, without a key or a
// network, it answers a prompt offline (the stand-in model loads the
// program's tool with tool_search and reports what it returned) and saves
// the session.
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
	if n := strings.Count(string(program), "\n"); n > 50 {
		t.Errorf("the program is %d lines long; a newcomer should need at most 50", n)
	}
	if !strings.Contains(section, "go run ./examples/library "+strconv.Quote(libraryPrompt)) {
		t.Errorf("the README's library section does not say how to run the program offline: go run ./examples/library %q", libraryPrompt)
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
	servers := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(servers, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, env := range [][]string{nil, {"TOOLSHELF_MCP=" + servers}} {
		home := t.TempDir()
		cmd := exec.Command(bin, libraryPrompt)
		cmd.Dir = dir
		// No key and no provider: what a fresh clone has.
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "TOOLSHELF_")
		}), append(env, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"))...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: the program: %v\n%s", env, err, stderr.String())
		}
		if got, want := stdout.String(), "get_forecast returned:\nSunny, 21 °C.\n"; got != want {
			t.Errorf("%v: the program printed %q, want %q", env, got, want)
		}
		sessions, _ := filepath.Glob(filepath.Join(home, "data", "toolshelf", "sessions", "*.jsonl"))
		if len(sessions) != 1 {
			t.Errorf("%v: sessions saved: %v, want one", env, sessions)
		}
	}
}

// libraryPrompt is the prompt the README runs the library program with.
const libraryPrompt = "what is the weather forecast"

// TestREADMEClaudeMCPAddNamesDiffer checks that the README's claude mcp add
// lines, run in order on a fresh machine, all succeed: each adds a server
// of its own name, since Claude Code refuses a name it has already ("MCP
// server toolshelf already exists").
func TestREADMEClaudeMCPAddNamesDiffer(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, line := range strings.Split(string(readme), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "claude mcp add ")
		if !ok {
			continue
		}
		name, err := claudeMCPAddName(strings.Fields(rest))
		if err != nil {
			t.Errorf("README.md:%d: %v: %s", i+1, err, line)
			continue
		}
		if first, dup := seen[name]; dup {
			t.Errorf("README.md:%d adds the MCP server %q again (first at line %d): the second claude mcp add fails with \"already exists\"; give each its own name", i+1, name, first)
			continue
		}
		seen[name] = i + 1
	}
	if len(seen) == 0 {
		t.Fatal("README.md has no claude mcp add line; this test reads them")
	}
}

// claudeMCPAddName returns the server name of claude mcp add's arguments:
// the first one that is neither a flag nor a flag's value.
func claudeMCPAddName(args []string) (string, error) {
	withValue := map[string]bool{"--scope": true, "-s": true, "--transport": true, "-t": true, "--env": true, "-e": true, "--header": true, "-H": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return "", errors.New("no server name before --")
		case withValue[a]:
			i++
		case strings.HasPrefix(a, "-"):
			if _, _, ok := strings.Cut(a, "="); !ok {
				return "", fmt.Errorf("flag %s is unknown to this test: teach claudeMCPAddName whether it takes a value", a)
			}
		default:
			return a, nil
		}
	}
	return "", errors.New("no server name")
}
