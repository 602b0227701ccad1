// Command gateway-pays measures where toolshelf's gateway pays: it runs
// real Claude Code, offline against toolshelf emulate --script, through
// the gateway's meta and direct surfaces and with the upstream servers
// added to it directly, each with Claude Code's tool search on and off,
// over upstreams of three sizes; it prints the table of what each
// session's prompts cost and, with -readme, rewrites the README's table
// between its markers. scripts/gateway-pays builds and runs it.
//
// gateway-pays replay NAME is one of its stand-in MCP servers: over
// stdio, it lists the tools of the built-in catalog's server NAME and
// answers every call with a fixed text.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "replay" {
		s, err := builtinServer(os.Args[2])
		if err == nil {
			err = serveReplay(s, os.Stdin, os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gateway-pays replay:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gateway-pays:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("gateway-pays", flag.ContinueOnError)
	toolshelf := fl.String("toolshelf", "", "the toolshelf binary (required)")
	claude := fl.String("claude", ".ci/claude/node_modules/.bin/claude", "Claude Code's binary")
	serverBin := fl.String("servers", ".ci/mcp/node_modules/.bin", "folder of the real MCP servers (filesystem, memory, everything)")
	readme := fl.String("readme", "", "README to rewrite between its gateway-pays markers (default: print the table)")
	sizes := fl.String("sizes", "0,500,1500", "upstream sizes in tools: 0 for the real servers alone, more adds stand-ins")
	command := fl.String("command", "scripts/gateway-pays", "the command the README names")
	keep := fl.Bool("keep", false, "keep each session's folder (its servers file, script, emulator.log) and say where")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *toolshelf == "" {
		return fmt.Errorf("-toolshelf is required: go build -o DIR/toolshelf ./cmd/toolshelf and pass DIR/toolshelf")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var targets []int
	for f := range strings.SplitSeq(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return fmt.Errorf("-sizes %q: want tool counts such as 0,500,1500", *sizes)
		}
		targets = append(targets, n)
	}
	work, err := os.MkdirTemp("", "gateway-pays-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintf(os.Stderr, "gateway-pays: the sessions' folders are under %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	r := &Runner{Toolshelf: abs(*toolshelf), Claude: abs(*claude), ServerBin: abs(*serverBin),
		StandIn: []string{self, "replay"}, Work: work, Log: os.Stderr}
	p, err := provenance(ctx, r.Claude, *command)
	if err != nil {
		return err
	}
	results, err := r.All(ctx, targets)
	if err != nil {
		return err
	}
	p.Model = r.Model
	body := Table(p, results)
	if *readme == "" {
		fmt.Print(body)
		return nil
	}
	old, err := os.ReadFile(*readme)
	if err != nil {
		return err
	}
	updated, err := Rewrite(old, body)
	if err != nil {
		return fmt.Errorf("%s: %w", *readme, err)
	}
	if err := os.WriteFile(*readme, updated, 0o644); err != nil {
		return err
	}
	fmt.Print(body)
	fmt.Fprintf(os.Stderr, "gateway-pays: wrote the table into %s\n", *readme)
	return nil
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// provenance describes the run: today, this machine, Claude Code's
// version.
func provenance(ctx context.Context, claude, command string) (Provenance, error) {
	out, err := exec.CommandContext(ctx, claude, "--version").Output()
	if err != nil {
		return Provenance{}, fmt.Errorf("%s --version: %w (install Claude Code with bash .ci/claude-code)", claude, err)
	}
	machine := fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if cpu := cpuModel(); cpu != "" {
		machine = cpu + ", " + machine
	}
	return Provenance{
		Command: command,
		Date:    time.Now().UTC().Format(time.DateOnly),
		Machine: machine,
		Claude:  strings.TrimSuffix(strings.TrimSpace(string(out)), " (Claude Code)"),
	}, nil
}

// cpuModel is the CPU's model name from /proc/cpuinfo, or "".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
