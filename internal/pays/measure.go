package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/internal/claudecode"
)

// The setups: Claude Code reaches the upstream servers through the
// gateway's meta surface, through its direct surface, or with no gateway.
const (
	Meta   = "meta"
	Direct = "direct"
	None   = "none"
)

// Setups lists the setups in the table's order.
var Setups = []string{Meta, Direct, None}

// realServers are the README's example servers (examples/mcp.json),
// which run for real in every size.
var realServers = []string{"filesystem", "memory", "everything"}

// Size is one set of upstream servers: the real example servers and
// stand-ins for the built-in catalog's servers named in StandIns.
type Size struct {
	// Target is the tool count the size aims at; 0 for the real servers
	// alone.
	Target int
	// StandIns are the catalog servers replayed by stand-ins.
	StandIns []*catalog.Server
}

// Sizes returns one size per target: the real servers plus the built-in
// catalog's other servers, in file-name order, until their tools reach
// the target (all of them for a target past the catalog; the real
// servers count as many tools as the catalog lists for them). A target
// of 0 is the real servers alone.
func Sizes(targets ...int) ([]Size, error) {
	catalogs, realTools, err := standInCatalogs(realServers)
	if err != nil {
		return nil, err
	}
	var out []Size
	for _, target := range targets {
		sz := Size{Target: target}
		n := realTools
		for _, s := range catalogs {
			if n >= target {
				break
			}
			sz.StandIns = append(sz.StandIns, s)
			n += len(s.Tools)
		}
		out = append(out, sz)
	}
	return out, nil
}

// Config is one measured session: a size, a setup and whether Claude
// Code's own tool search is on.
type Config struct {
	Size       Size
	Setup      string
	ToolSearch bool
}

// Result is what one session cost, read from the emulator's log.
type Result struct {
	// Setup and ToolSearch are the configuration's.
	Setup      string
	ToolSearch bool
	// Tools counts the upstream tools (of the real servers as Claude
	// Code or the gateway listed them and of the stand-ins' catalogs).
	Tools int
	// Requests counts the Messages requests, Counts the count_tokens ones.
	Requests, Counts int
	// Input is every prompt token of the session's requests; Read, Write
	// and Uncached split it.
	Input, Read, Write, Uncached int
	// Failed says what went wrong, when the session did not run as
	// scripted; the figures are then those of the requests answered.
	Failed string

	model string
	// reported is the usage Claude Code's result event reports, window
	// the context window it reports for the model.
	reported claudecode.Usage
	window   int
}

// Cost is the session's prompt in uncached-input-token equivalents at
// Anthropic's prices: a cache read costs 0.1 of an input token, a 5-minute
// cache write 1.25.
func (r Result) Cost() float64 {
	return float64(r.Uncached) + 1.25*float64(r.Write) + 0.1*float64(r.Read)
}

// Runner runs sessions of Claude Code against the emulator.
type Runner struct {
	// Toolshelf is the toolshelf binary (emulate and serve).
	Toolshelf string
	// Claude is Claude Code's binary.
	Claude string
	// ServerBin is the folder of the real MCP servers' binaries.
	ServerBin string
	// StandIn is the command line that serves a catalog server as a
	// stand-in; the server's name is appended.
	StandIn []string
	// Work is a folder for the sessions' homes and files.
	Work string
	// Log, if set, gets a line per session.
	Log io.Writer
	// Model is the model Claude Code asked for, once a session ran.
	Model string

	runs int
}

// contextWindow is the prompt limit the emulator applies: the window
// Claude Code 2.1.332 reports for the model it asks for,
// claude-opus-5-5 (the emulator's default for Claude models is 200,000).
const contextWindow = 1_000_000

// answer is the scripted model's last reply.
const answer = "I read note.txt."

// noteText is the file the sessions read, through the real filesystem
// server.
const noteText = "The filesystem server read this line from disk."

// All runs every setup, with Claude Code's tool search on and off, over
// each size of targets (see Sizes).
func (r *Runner) All(ctx context.Context, targets []int) ([]Result, error) {
	sizes, err := Sizes(targets...)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, sz := range sizes {
		for _, setup := range Setups {
			for _, toolSearch := range []bool{true, false} {
				res, err := r.Run(ctx, Config{Size: sz, Setup: setup, ToolSearch: toolSearch})
				if err != nil {
					return nil, err
				}
				out = append(out, res)
			}
		}
	}
	return out, nil
}

// Run runs one session and reports its cost. An error means the session
// could not be set up; a session that ran otherwise than scripted is a
// Result with Failed set.
func (r *Runner) Run(ctx context.Context, c Config) (Result, error) {
	r.runs++
	dir := filepath.Join(r.Work, fmt.Sprintf("run%d-%d-%s-%t", r.runs, c.Size.Target, c.Setup, c.ToolSearch))
	// The file to read is in Claude Code's project folder: the filesystem
	// server takes its client's roots, Claude Code's project, over its
	// arguments.
	home := filepath.Join(dir, "home")
	project := filepath.Join(home, "project")
	files := project
	for _, d := range []string{project, filepath.Join(home, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Result{}, err
		}
	}
	note := filepath.Join(files, "note.txt")
	if err := os.WriteFile(note, []byte(noteText+"\n"), 0o600); err != nil {
		return Result{}, err
	}
	res := Result{Setup: c.Setup, ToolSearch: c.ToolSearch}
	servers := r.servers(c.Size, files, dir)
	serversFile := filepath.Join(dir, "mcp.json")
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers.byName()}, "", "  ")
	if err != nil {
		return Result{}, err
	}
	if err := os.WriteFile(serversFile, b, 0o600); err != nil {
		return Result{}, err
	}
	if res.Tools, err = r.countTools(ctx, serversFile); err != nil {
		return Result{}, err
	}

	env := claudecode.Env(home)
	claude := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, r.Claude, args...)
		cmd.Dir, cmd.Env = project, env
		return cmd
	}
	add := func(name string, s server) error {
		args := []string{"mcp", "add", "--scope", "user", name}
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			args = append(args, "-e", k+"="+s.Env[k])
		}
		args = append(append(args, "--", s.Command), s.Args...)
		if out, err := claude(ctx, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}

	// The scripted model: find the filesystem server's read_text_file,
	// call it on note.txt, answer.
	const readFile = "mcp__filesystem__read_text_file"
	var replies []any
	var allowed string
	var want []string
	call := func(name string, args any) map[string]any {
		return map[string]any{"tool_calls": []any{map[string]any{"name": name, "arguments": args}}}
	}
	switch c.Setup {
	case Meta, Direct:
		// The gateway runs over HTTP, and Claude Code starts once it has
		// connected every upstream server: the state a user meets who
		// types after startup. (Over stdio, claude -p sends its first
		// request before the direct surface lists the upstream tools.)
		url, stopGateway, err := r.gateway(ctx, serversFile, res.Tools)
		if err != nil {
			return Result{}, err
		}
		defer stopGateway()
		if c.Setup == Direct {
			url += "/direct"
		}
		args := []string{"mcp", "add", "--scope", "user", "--transport", "http", "toolshelf", url}
		if out, err := claude(ctx, args...).CombinedOutput(); err != nil {
			return Result{}, fmt.Errorf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		allowed = "mcp__toolshelf"
		if c.Setup == Meta {
			if c.ToolSearch {
				replies = append(replies, call("ToolSearch", map[string]any{"query": "select:mcp__toolshelf__tool_search,mcp__toolshelf__call_tool"}))
				want = append(want, "ToolSearch")
			}
			replies = append(replies,
				call("mcp__toolshelf__tool_search", map[string]any{"query": "read the contents of a text file"}),
				call("mcp__toolshelf__call_tool", map[string]any{"name": readFile, "arguments": map[string]any{"path": note}}))
			want = append(want, "mcp__toolshelf__tool_search", "mcp__toolshelf__call_tool")
		} else {
			name := "mcp__toolshelf__" + readFile
			if c.ToolSearch {
				replies = append(replies, call("ToolSearch", map[string]any{"query": "select:" + name}))
				want = append(want, "ToolSearch")
			}
			replies = append(replies, call(name, map[string]any{"path": note}))
			want = append(want, name)
		}
	case None:
		for _, s := range servers {
			if err := add(s.Name, s); err != nil {
				return Result{}, err
			}
		}
		allowed = "mcp__filesystem"
		if c.ToolSearch {
			replies = append(replies, call("ToolSearch", map[string]any{"query": "select:" + readFile}))
			want = append(want, "ToolSearch")
		}
		replies = append(replies, call(readFile, map[string]any{"path": note}))
		want = append(want, readFile)
	default:
		return Result{}, fmt.Errorf("setup %q: want meta, direct or none", c.Setup)
	}
	replies = append(replies, map[string]any{"text": answer})
	var script bytes.Buffer
	for _, reply := range replies {
		line, err := json.Marshal(reply)
		if err != nil {
			return Result{}, err
		}
		script.Write(append(line, '\n'))
	}
	scriptFile := filepath.Join(dir, "script.jsonl")
	if err := os.WriteFile(scriptFile, script.Bytes(), 0o600); err != nil {
		return Result{}, err
	}

	base, emuLog, stop, err := r.emulate(ctx, scriptFile)
	if err != nil {
		return Result{}, err
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := claude(sctx, "-p", "--output-format", "stream-json", "--verbose", "--allowedTools", allowed,
		"--", "Read note.txt")
	// MCP_CONNECTION_NONBLOCKING=0: the first request waits for every
	// server Claude Code starts itself, as a user would who types once
	// they connected; by default it goes out with the servers connected
	// by then, and the rest rewrite the prompt's prefix from a later one.
	cmd.Env = append(slices.Clip(env), "ANTHROPIC_BASE_URL="+base, "ANTHROPIC_API_KEY=sk-toolshelf-pays", "MCP_CONNECTION_NONBLOCKING=0")
	if !c.ToolSearch {
		cmd.Env = append(cmd.Env, "ENABLE_TOOL_SEARCH=false")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	stop()
	if err := os.WriteFile(filepath.Join(dir, "emulator.log"), emuLog.Bytes(), 0o600); err != nil {
		return Result{}, err
	}
	if err := res.readLog(emuLog.String()); err != nil {
		return Result{}, err
	}
	res.check(out, want, runErr, stderr.String())
	if r.Model == "" {
		r.Model = res.model
	}
	if r.Log != nil {
		fmt.Fprintf(r.Log, "%d tools, %s, tool search %t: %d requests, input %d (read %d, write %d, uncached %d)%s\n",
			res.Tools, res.Setup, res.ToolSearch, res.Requests, res.Input, res.Read, res.Write, res.Uncached, failed(res.Failed))
	}
	return res, nil
}

func failed(s string) string {
	if s == "" {
		return ""
	}
	return "; failed: " + s
}

// server is one entry of a servers file.
type server struct {
	Name    string            `json:"-"`
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

type serverList []server

func (l serverList) byName() map[string]server {
	m := map[string]server{}
	for _, s := range l {
		m[s.Name] = s
	}
	return m
}

// servers lists a size's upstream servers: the real ones, files served
// by the filesystem server, the memory server's graph under dir, then the
// stand-ins.
func (r *Runner) servers(sz Size, files, dir string) serverList {
	l := serverList{
		{Name: "filesystem", Command: filepath.Join(r.ServerBin, "mcp-server-filesystem"), Args: []string{files}},
		{Name: "memory", Command: filepath.Join(r.ServerBin, "mcp-server-memory"), Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		{Name: "everything", Command: filepath.Join(r.ServerBin, "mcp-server-everything")},
	}
	for _, s := range sz.StandIns {
		l = append(l, server{Name: s.Name, Command: r.StandIn[0], Args: append(slices.Clip(r.StandIn[1:]), s.Name)})
	}
	return l
}

// countTools counts the tools of the servers as the gateway lists them on
// its direct surface (toolshelf serve --list, once every server
// connected).
func (r *Runner) countTools(ctx context.Context, serversFile string) (int, error) {
	cmd := exec.CommandContext(ctx, r.Toolshelf, "serve", "--mcp", serversFile, "--surface", "direct", "--list", "--wait", "3m", "--metrics", "off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("toolshelf serve --list: %v: %s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		return 0, fmt.Errorf("toolshelf serve --list: not every server connected: %s", stderr.String())
	}
	m := regexp.MustCompile(`direct surface: (\d+) tools`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("toolshelf serve --list printed no tool count:\n%s", out)
	}
	return atoi(string(m[1])), nil
}

// gateway starts toolshelf serve --http on a free loopback port and waits
// until its direct surface lists want tools, every upstream server
// connected. It returns the meta surface's URL and a function that stops
// the gateway.
func (r *Runner) gateway(ctx context.Context, serversFile string, want int) (string, func(), error) {
	gctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(gctx, r.Toolshelf, "serve", "--http", "127.0.0.1:0", "--mcp", serversFile, "--metrics", "off")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		cancel()
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return "", nil, err
	}
	stop := func() {
		cancel()
		_ = cmd.Wait()
	}
	var url string
	var said bytes.Buffer
	sc := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`gateway on (http://\S+/mcp) `)
	for sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		stop()
		return "", nil, fmt.Errorf("toolshelf serve --http did not start: %s", said.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	// The stateless HTTP surface has no stream to say when the tools
	// change: ask until they are all there.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		n, err := listTools(ctx, url+"/direct")
		if err == nil && n >= want {
			return url, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("the gateway's direct surface lists %d of %d tools after 3 minutes (%v)", n, want, err)
		}
		select {
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// listTools counts the tools of an MCP server over stateless streamable
// HTTP, page by page.
func listTools(ctx context.Context, url string) (int, error) {
	n := 0
	cursor := ""
	for range 100 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})
		if err != nil {
			return 0, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("tools/list: %s: %s", resp.Status, truncate(string(data), 200))
		}
		// An event stream carries the answer on its data line.
		for line := range bytes.Lines(data) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				data = d
				break
			}
		}
		var answer struct {
			Result struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(data, &answer); err != nil {
			return 0, fmt.Errorf("tools/list: %w", err)
		}
		n += len(answer.Result.Tools)
		if cursor = answer.Result.NextCursor; cursor == "" {
			return n, nil
		}
	}
	return 0, errors.New("tools/list: more than 100 pages")
}

// emulate starts toolshelf emulate --script on a free loopback port; it
// returns the base URL, the request log and a function that stops it.
func (r *Runner) emulate(ctx context.Context, script string) (string, *bytes.Buffer, func(), error) {
	ectx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ectx, r.Toolshelf, "emulate", "--listen", "127.0.0.1:0", "--script", script,
		"--context-window", strconv.Itoa(contextWindow))
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var log bytes.Buffer
	cmd.Stderr = &log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return "", nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return "", nil, nil, err
	}
	stop := func() {
		cancel()
		_ = cmd.Wait()
	}
	sc := bufio.NewScanner(stdout)
	re := regexp.MustCompile(`listening on (http://\S+)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return m[1], &log, stop, nil
		}
	}
	stop()
	return "", nil, nil, fmt.Errorf("toolshelf emulate did not start: %s", log.String())
}

var (
	logLine   = regexp.MustCompile(`^#\d+ anthropic-messages (\S+) 200 (count_tokens )?input=(\d+)`)
	usageLine = regexp.MustCompile(` read=(\d+) write=(\d+) uncached=(\d+) `)
	errorLine = regexp.MustCompile(`^#\d+ \S+ \S* (\d+) error: (.*)$`)
)

// readLog adds up the emulator's log: one line per request.
func (res *Result) readLog(log string) error {
	for line := range strings.SplitSeq(strings.TrimSpace(log), "\n") {
		if line == "" {
			continue
		}
		if m := errorLine.FindStringSubmatch(line); m != nil {
			if res.Failed == "" {
				res.Failed = "the emulator answered " + m[1] + ": " + truncate(m[2], 200)
			}
			continue
		}
		m := logLine.FindStringSubmatch(line)
		if m == nil {
			return fmt.Errorf("a line of the emulator's log that is not a request's: %q", line)
		}
		if m[2] != "" {
			res.Counts++
			continue
		}
		u := usageLine.FindStringSubmatch(line)
		if u == nil {
			return fmt.Errorf("a request's line without usage in the emulator's log: %q", line)
		}
		res.Requests++
		res.model = m[1]
		res.Input += atoi(m[3])
		res.Read += atoi(u[1])
		res.Write += atoi(u[2])
		res.Uncached += atoi(u[3])
	}
	return nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// check sets Failed unless Claude Code called the wanted tools in order,
// the read came back with the file's text and the session ended with the
// scripted answer.
func (res *Result) check(out []byte, want []string, runErr error, stderr string) {
	if res.Failed != "" {
		return
	}
	if runErr != nil {
		res.Failed = fmt.Sprintf("claude -p: %v: %s", runErr, truncate(strings.TrimSpace(stderr), 200))
		return
	}
	var calls []string
	var final *claudecode.Event
	read := false
	for line := range bytes.Lines(out) {
		var ev claudecode.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			res.Failed = "a line of stream-json is not JSON"
			return
		}
		switch ev.Type {
		case "assistant", "user":
			for _, b := range ev.Message.Content {
				switch b.Type {
				case "tool_use":
					calls = append(calls, b.Name)
				case "tool_result":
					if b.IsError {
						res.Failed = "a tool failed: " + truncate(b.Text(), 200)
						if strings.Contains(b.Text(), "No such tool available") {
							res.Failed = "Claude Code had not taken the tool up when the model called it (" + truncate(b.Text(), 200) + ")"
						}
						return
					}
					read = read || strings.Contains(b.Text(), noteText)
				}
			}
		case "result":
			final = &ev
			res.reported = ev.Usage
			for _, u := range ev.ModelUsage {
				res.window = max(res.window, u.ContextWindow)
			}
		}
	}
	switch {
	case !slices.Equal(calls, want):
		res.Failed = fmt.Sprintf("Claude Code called %v, want %v", calls, want)
	case !read:
		res.Failed = "no tool result has the file's text"
	case final == nil || final.IsError || final.Result != answer:
		res.Failed = "Claude Code did not end with the scripted answer"
	}
}
