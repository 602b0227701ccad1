package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// stdioClient is a client of ServeStdio over pipes, that writes raw lines
// and reads the answers one by one.
type stdioClient struct {
	in      *io.PipeWriter
	answers chan string
	done    chan struct{} // closed once ServeStdio returned err
	err     error
}

func serveStdioPipes(t *testing.T, g *gateway.Gateway, s gateway.Surface) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{in: inW, answers: make(chan string, 64), done: make(chan struct{})}
	go func() {
		c.err = g.ServeStdio(t.Context(), s, inR, outW)
		outW.Close()
		close(c.done)
	}()
	go func() {
		defer close(c.answers)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.answers <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		<-c.done
	})
	return c
}

func (c *stdioClient) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line); err != nil {
		t.Fatalf("writing %.40q: %v", line, err)
	}
}

// answer is the next message from the gateway, decoded.
type answer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

func (c *stdioClient) next(t *testing.T) answer {
	t.Helper()
	line, ok := <-c.answers
	if !ok {
		<-c.done
		t.Fatalf("the gateway closed its output: %v", c.err)
	}
	var a answer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("an answer that is not JSON: %v: %s", err, line)
	}
	a.raw = line
	return a
}

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestStdioSurvivesBadLines: a line that is not JSON, JSON that is not a
// JSON-RPC message, or a line past MaxStdioLine is answered with the
// JSON-RPC error (-32700 parse error, -32600 invalid request; the id of a
// request whose id could be read, null otherwise), and the session goes
// on: the client then initializes and lists the tools. Before, the first
// such line ended the session. A message with blanks around it and a
// CRLF is read, and blank lines are skipped unanswered.
func TestStdioSurvivesBadLines(t *testing.T) {
	log := &logRecords{}
	g := newGatewayWith(t, gateway.Config{Logger: slog.New(log)}, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
	c := serveStdioPipes(t, g, gateway.Meta)
	for _, bad := range []struct {
		line, id string
		code     int
		says     string
	}{
		{"hello\n", "null", -32700, "Parse error: line 1 is not JSON"},
		{"[]\n", "null", -32600, "batches are not supported"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n", "null", -32600, "batches are not supported"},
		{"42\n", "null", -32600, "line 4 is not a JSON-RPC 2.0 request"},
		{`{"id":7,"method":"tools/list"}` + "\n", "7", -32600, `"jsonrpc": "2.0"`},
		{`{"jsonrpc":"1.0","id":"a","method":"ping"}` + "\n", `"a"`, -32600, "not a JSON-RPC 2.0 request"},
		{`{"jsonrpc":"2.0"}` + "\n", "null", -32600, `or an "id" with a "result"`},
		{`{"jsonrpc":"2.0","id":8,"method":"ping"} {"jsonrpc":"2.0","id":9,"method":"ping"}` + "\n", "null", -32700, "line 8 is not JSON"},
		{`{"jsonrpc":"2.0","id":10,"method":"ping","params":{"pad":"` + strings.Repeat("x", gateway.MaxStdioLine) + `"}}` + "\n", "null", -32600,
			fmt.Sprintf("line 9 is longer than %d bytes", gateway.MaxStdioLine)},
	} {
		c.send(t, bad.line)
		a := c.next(t)
		if a.Error == nil || a.Error.Code != bad.code || string(a.ID) != bad.id || !strings.Contains(a.Error.Message, bad.says) {
			t.Errorf("the answer to %.60q: %.300s, want error %d with id %s saying %q", bad.line, a.raw, bad.code, bad.id, bad.says)
		}
	}
	c.send(t, "\n  \r\n   "+initializeLine+"  \r\n")
	if a := c.next(t); a.Error != nil || string(a.ID) != "1" || !strings.Contains(string(a.Result), `"serverInfo"`) {
		t.Fatalf("initialize after the bad lines: %s", a.raw)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	if a := c.next(t); a.Error != nil || string(a.ID) != "2" || !strings.Contains(string(a.Result), `"name":"tool_search"`) {
		t.Fatalf("tools/list after the bad lines: %s", a.raw)
	}
	// Many bad lines are all answered, but only the first are logged.
	for range 40 {
		c.send(t, "nope\n")
		if a := c.next(t); a.Error == nil || a.Error.Code != -32700 {
			t.Fatalf("the answer to a bad line: %s", a.raw)
		}
	}
	if n := len(log.matching("a bad line from the stdio client")); n != 16 {
		t.Errorf("%d bad lines logged, want the first 16", n)
	}
	if n := len(log.matching("no longer logged")); n != 1 {
		t.Errorf("the note that bad lines are no longer logged: %d times, want once", n)
	}
	if got := log.matching("line=1 "); len(got) != 1 || !strings.Contains(got[0], `excerpt="hello"`) || !strings.Contains(got[0], "code=-32700") {
		t.Errorf("the log of the first bad line: %q", got)
	}
	if got := log.matching("line=9 "); len(got) != 1 || strings.Contains(got[0], "xxx") {
		t.Errorf("the log of the long line holds it, or is missing: %.200q", got)
	}
	c.in.Close()
	if <-c.done; c.err != nil {
		t.Errorf("the session ended with %v, want nil at the end of its input", c.err)
	}
}

// TestStdioLongLineIsNotHeld: a line many times MaxStdioLine is read in
// pieces and dropped, not held whole, and the lines after it are read,
// the last one without its newline too.
func TestStdioLongLineIsNotHeld(t *testing.T) {
	const size = 16 * gateway.MaxStdioLine
	in := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`),
		io.LimitReader(repeat('x'), size), strings.NewReader(`"}}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"+`{"jsonrpc":"2.0","id":3,"method":"ping"}`))
	read, answered, held, err := gateway.FilterLines(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n"; string(read) != want {
		t.Errorf("the SDK reads %.200q, want the lines after the long one: %q", read, want)
	}
	if !bytes.Contains(answered, []byte(`"code":-32600`)) || bytes.Count(answered, []byte("\n")) != 1 {
		t.Errorf("answered %.300q, want one invalid-request error", answered)
	}
	if held > 2*gateway.MaxStdioLine {
		t.Errorf("the filter held %d bytes of a %d-byte line, want at most %d", held, size, 2*gateway.MaxStdioLine)
	}
}

// repeat is an endless reader of one byte.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
