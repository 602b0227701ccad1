package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// servingLine is what serve --http prints on stderr once it listens.
var servingLine = regexp.MustCompile(`^toolshelf gateway on http://(\S+)/mcp `)

// syncBuffer is a buffer written by one goroutine and read by another.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServeHTTP runs "toolshelf serve" with args (which hold --http) in
// this process until the test ends, and returns the gateway's base URL
// once it listens, read from the line serve prints, and its stderr. A
// gateway listening on every address is reached on 127.0.0.1.
func startServeHTTP(t *testing.T, args ...string) (base string, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, append([]string{"serve"}, args...), strings.NewReader(""), io.Discard, pw)
		pw.Close()
		done <- code
	}()
	stderr = &syncBuffer{}
	sc := bufio.NewScanner(pr)
	var addr string
	for addr == "" && sc.Scan() {
		stderr.Write(append(sc.Bytes(), '\n'))
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		cancel()
		t.Fatalf("serve %q ended before it listened: exit %d: %s", args, <-done, stderr)
	}
	drained := make(chan struct{})
	go func() { // keep reading, so serve is never blocked on its stderr
		defer close(drained)
		io.Copy(stderr, pr)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve %q exited %d: %s", args, code, stderr)
		}
		<-drained
	})
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), stderr
}

// TestServeBeyondLoopbackNeedsAToken: serve --http on an address other
// machines can reach, without a token, refuses to start and says why and
// what to do.
func TestServeBeyondLoopbackNeedsAToken(t *testing.T) {
	t.Setenv("TOOLSHELF_TOKEN", "")
	code, out, errOut := run(t, "serve", "--mcp", testMCP(t, nil), "--metrics", "off", "--http", "0.0.0.0:0")
	if code != 2 || out != "" {
		t.Errorf("exit %d, stdout %q, want 2 and nothing", code, out)
	}
	for _, want := range []string{"--http 0.0.0.0:0 listens beyond this machine", "without authentication", "set --token (or $TOOLSHELF_TOKEN)", "or listen on 127.0.0.1"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q does not say %q", errOut, want)
		}
	}
}

// TestServeHTTPNeedsTheToken: with a token (the flag or $TOOLSHELF_TOKEN)
// serve listens beyond loopback, and every surface answers a request
// without the token, or with another, 401 with a Bearer challenge; the
// token itself never reaches the log.
func TestServeHTTPNeedsTheToken(t *testing.T) {
	const token = "s3cret-gateway-token-of-32-bytes-or-more"
	for _, c := range []struct {
		name, env string
		flags     []string
	}{
		{"flag", "", []string{"--token", token}},
		{"environment", token, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("TOOLSHELF_TOKEN", c.env)
			args := append([]string{"--mcp", testMCP(t, nil), "--metrics", "off", "-v", "--http", "0.0.0.0:0"}, c.flags...)
			base, stderr := startServeHTTP(t, args...)
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
			for _, path := range []string{"/mcp", "/mcp/meta", "/mcp/direct", "/mcp/codemode"} {
				for _, auth := range []string{"", "Bearer wrong", token, "Bearer " + token} {
					req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					if auth != "" {
						req.Header.Set("Authorization", auth)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					got, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					want := http.StatusUnauthorized
					if auth == "Bearer "+token {
						want = http.StatusOK
					}
					if resp.StatusCode != want {
						t.Errorf("%s with Authorization %q: %d %s, want %d", path, auth, resp.StatusCode, got, want)
					}
					if want == http.StatusUnauthorized && (!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") || !strings.Contains(string(got), "Authorization: Bearer")) {
						t.Errorf("%s: a 401 without a Bearer challenge or the fix: %v %q", path, resp.Header, got)
					}
					if want == http.StatusOK && !strings.Contains(string(got), `"serverInfo":{"name":"toolshelf"`) {
						t.Errorf("%s: the initialize answer: %s", path, got)
					}
				}
			}
			if strings.Contains(stderr.String(), token) {
				t.Errorf("the token reached the log: %s", stderr)
			}
		})
	}
}

// TestServeListCodemode: serve --list --surface codemode prints what a
// client of the codemode surface is told, code and tool_search with their
// tokens and the total that gateway.Tokens counts; an unknown surface is a
// usage error that names the three.
func TestServeListCodemode(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "serve", "--mcp", testMCP(t, nil), "--metrics", "off", "--list", "--surface", "codemode")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	total := 0
	var names []string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) != 2 || f[0] == "TOOL" {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n <= 0 {
			t.Errorf("line %q: want a tool and its tokens", line)
		}
		names = append(names, f[0])
		total += n
	}
	if !slices.Equal(names, []string{"tool_search", "code"}) || !strings.Contains(out, fmt.Sprintf("codemode surface: 2 tools, %d tokens of tool definitions", total)) {
		t.Errorf("serve --list --surface codemode:\n%s", out)
	}
	code, _, errOut = run(t, "serve", "--mcp", testMCP(t, nil), "--metrics", "off", "--surface", "nope")
	if code != 2 || !strings.Contains(errOut, `unknown surface "nope"`) || !strings.Contains(errOut, "codemode (tool_search and code") {
		t.Errorf("--surface nope: exit %d, %q", code, errOut)
	}
}

// TestServeRefusesNegativeScriptBounds: a negative script bound is a
// usage error that names the flags.
func TestServeRefusesNegativeScriptBounds(t *testing.T) {
	t.Parallel()
	mcp := writeMCPConfig(t, map[string]any{})
	for _, flag := range []string{"--max-scripts=-1", "--queue-wait=-1s", "--script-timeout=-1s", "--script-memory=-1"} {
		exit, _, errOut := run(t, "serve", "--mcp", mcp, flag)
		if exit != 2 || !strings.Contains(errOut, "--max-scripts, --queue-wait, --script-timeout and --script-memory take positive values") {
			t.Errorf("%s: exit %d: %s", flag, exit, errOut)
		}
	}
}

// TestServeStdioSurvivesBadLines: toolshelf serve, a real process on
// real pipes (this test binary run as toolshelf), answers a line that is
// not JSON with a parse error and an object without "jsonrpc": "2.0"
// with an invalid-request error, and goes on: it initializes, its direct
// surface's tools/list holds the upstream server's tools, and a call of
// one runs.
// Each bad line is logged once, and serve exits 0 when its input ends.
// Before, the first bad line ended serve with exit 1.
func TestServeStdioSurvivesBadLines(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args, err := json.Marshal([]string{"serve", "--mcp", testMCP(t, nil), "--metrics", "off", "--surface", "direct"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"="+string(args))
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
	answers := bufio.NewScanner(stdout)
	exchange := func(line string, answered bool) string {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("writing %q: %v", line, err)
		}
		if !answered {
			return ""
		}
		for {
			if !answers.Scan() {
				stdin.Close()
				t.Fatalf("serve closed its output after %q: %v; exit %v\n%s", line, answers.Err(), cmd.Wait(), stderr.String())
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.Unmarshal(answers.Bytes(), &msg); err != nil {
				t.Fatalf("serve wrote a line that is not JSON: %v: %s", err, answers.Text())
			}
			if msg.ID != nil || msg.Method == "" { // not a notification (tools/list_changed)
				return answers.Text()
			}
		}
	}
	for _, c := range []struct{ line, want string }{
		{"this is not JSON", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: line 1 is not JSON`},
		{`{"id":1,"method":"initialize"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: line 2 is not a JSON-RPC 2.0 request`},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":1,"result":{`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `"name":"mcp__t__echo"`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp__t__echo","arguments":{"text":"still here"}}}`, `"text":"echo: still here"`},
	} {
		got := exchange(c.line, c.want != "")
		if !strings.Contains(got, c.want) {
			t.Errorf("the answer to %s: %s, want %s", c.line, got, c.want)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve at the end of its input: %v, want exit 0\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "a bad line from the stdio client"); n != 2 {
		t.Errorf("%d bad lines logged, want 2:\n%s", n, stderr.String())
	}
}

// startServe runs "toolshelf serve" with args in this process, with a
// standard input that stays open (a client that has not spoken yet), and
// returns its first line of stderr, the rest of stderr once serve ended,
// and its exit status, after stop cancels serve's context.
func startServe(t *testing.T, args ...string) (first string, stop func() (rest string, code int)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdin, keep := io.Pipe()
	t.Cleanup(func() { keep.Close() })
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, append([]string{"serve"}, args...), stdin, io.Discard, pw)
		pw.Close()
		done <- code
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		cancel()
		t.Fatalf("serve %q printed nothing and exited %d", args, <-done)
	}
	first = sc.Text()
	rest := make(chan string, 1)
	go func() {
		var b strings.Builder
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		rest <- b.String()
	}()
	return first, func() (string, int) {
		cancel()
		code := <-done
		return <-rest, code
	}
}

// TestServeSaysItIsReady: serve started by hand says on one short line of
// stderr that it serves, what (stdio and the surface, or the HTTP URL), how
// many servers of which file, and how to stop it. With --log-format json
// the line is a JSON log record, so stderr stays JSON.
func TestServeSaysItIsReady(t *testing.T) {
	mcp := testMCP(t, nil)
	for _, c := range []struct {
		name string
		args []string
		want *regexp.Regexp
	}{
		{"stdio", nil, regexp.MustCompile(`^toolshelf gateway on stdio \(meta surface\): 1 server of ` + regexp.QuoteMeta(mcp) + `; waiting for a client on stdin, Ctrl-C stops it$`)},
		{"codemode", []string{"--surface", "codemode"}, regexp.MustCompile(`^toolshelf gateway on stdio \(codemode surface\): 1 server of `)},
		{"http", []string{"--http", "127.0.0.1:0"}, regexp.MustCompile(`^toolshelf gateway on http://127\.0\.0\.1:\d+/mcp \(and /direct, /codemode\): 1 server of ` + regexp.QuoteMeta(mcp) + `; Ctrl-C stops it$`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, stop := startServe(t, append([]string{"--mcp", mcp, "--metrics", "off"}, c.args...)...)
			if !c.want.MatchString(first) {
				t.Errorf("serve's first line %q does not match %s", first, c.want)
			}
			if rest, code := stop(); code != 0 {
				t.Errorf("exit %d after the stop: %s", code, rest)
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		first, stop := startServe(t, "--log-format", "json", "--mcp", mcp, "--metrics", "off", "--http", "127.0.0.1:0")
		var rec map[string]any
		if err := json.Unmarshal([]byte(first), &rec); err != nil {
			t.Fatalf("with --log-format json the first line %q is not JSON: %v", first, err)
		}
		url, _ := rec["url"].(string)
		if rec["msg"] != "gateway ready" || rec["servers"] != 1.0 || rec["mcp"] != mcp || !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/mcp$`).MatchString(url) {
			t.Errorf("the ready record is %v", rec)
		}
		stop()
	})
}
