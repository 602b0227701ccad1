package gateway_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolshelf/toolshelf/gateway"
)

// These tests drive the HTTP front byte by byte over in-memory
// connections inside a synctest bubble, so the bounds they check are
// measured in the bubble's clock and cost no real time. They use only the
// Handler and a plain http.Server without timeouts: the bounds they find
// are the Handler's own.

// pipeListener is a net.Listener whose connections are in-memory pipes.
type pipeListener struct {
	conns     chan net.Conn
	closeOnce sync.Once
	done      chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept returns the server's end of the next dialled connection.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept.
func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

// Addr is the pipe's address.
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial returns the client's end of a new connection.
func (l *pipeListener) dial(t *testing.T) net.Conn {
	t.Helper()
	client, server := net.Pipe()
	select {
	case l.conns <- server:
	case <-l.done:
		t.Fatal("the listener is closed")
	}
	t.Cleanup(func() { client.Close() })
	return client
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// serveFront serves the gateway's Handler with the token on an in-memory
// listener until the test ends, in a plain server without timeouts.
func serveFront(t *testing.T, token string) *pipeListener {
	t.Helper()
	return serveOn(t, &http.Server{Handler: newGateway(t).Handler(gateway.HTTPConfig{Token: token})})
}

// serveOn serves srv on an in-memory listener until the test ends, and
// then waits for each of its connections to end.
func serveOn(t *testing.T, srv *http.Server) *pipeListener {
	t.Helper()
	ln := newPipeListener()
	var conns sync.WaitGroup
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			conns.Done()
		}
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-served
		conns.Wait()
	})
	return ln
}

// postHead is the head of an initialize POST whose body is n bytes long.
func postHead(auth string, n int) string {
	h := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	if auth != "" {
		h += "Authorization: " + auth + "\r\n"
	}
	return h + fmt.Sprintf("Content-Length: %d\r\n\r\n", n)
}

// readAnswer reads the response on c in the background.
func readAnswer(c net.Conn) <-chan *http.Response {
	got := make(chan *http.Response, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			resp = nil
		}
		got <- resp
	}()
	return got
}

// TestHTTPSlowBodyIsCut: a body sent one byte every 5 s, by a client that
// carries the token or by one that does not, is not read for ever: the
// connection is answered (408 with the token, 401 without) and closed
// within 60 s. A probe of bfe0462 found five such connections open past
// 65 s.
func TestHTTPSlowBodyIsCut(t *testing.T) {
	const token = "a-token-long-enough-for-any-listener-0123"
	for _, c := range []struct {
		name, auth string
		want       int
	}{
		{"with the token", "Bearer " + token, http.StatusRequestTimeout},
		{"without a token", "", http.StatusUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ln := serveFront(t, token)
				conn := ln.dial(t)
				const body = 100_000
				got := readAnswer(conn)
				start := time.Now()
				if _, err := io.WriteString(conn, postHead(c.auth, body)); err != nil {
					t.Fatal(err)
				}
				var resp *http.Response
			send:
				for range body {
					select {
					case resp = <-got:
						break send
					default:
					}
					if time.Since(start) > 60*time.Second {
						break
					}
					// The server may stop reading: a write it does not take
					// is given up after a second.
					_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
					_, _ = conn.Write([]byte{' '})
					time.Sleep(5 * time.Second)
				}
				took := time.Since(start)
				if resp == nil {
					t.Fatalf("no answer %v after the headers, the body still trickling in: the connection is held", took.Round(time.Second))
				}
				_, _ = io.ReadAll(resp.Body)
				if resp.StatusCode != c.want {
					t.Errorf("answered %d after %v, want %d", resp.StatusCode, took, c.want)
				}
				if !resp.Close {
					t.Errorf("the answer keeps the connection (no Connection: close): %v", resp.Header)
				}
				// The server closed its end: a read ends at once.
				_ = conn.SetReadDeadline(time.Now().Add(time.Second))
				if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
					t.Errorf("after the answer the connection is still open (read: %v)", err)
				}
			})
		})
	}
}

// TestHTTPUnauthorizedBeforeBody: a request without the token is answered
// 401 as soon as its headers arrive, without waiting for the body it
// announced (on bfe0462 net/http first read up to 256 KiB of it), and its
// connection is closed rather than kept for the rest of the body.
func TestHTTPUnauthorizedBeforeBody(t *testing.T) {
	for _, auth := range []string{"", "Bearer wrong"} {
		t.Run(fmt.Sprintf("Authorization %q", auth), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ln := serveFront(t, "a-token-long-enough-for-any-listener-0123")
				conn := ln.dial(t)
				got := readAnswer(conn)
				if _, err := io.WriteString(conn, postHead(auth, 200_000)+"{"); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				var resp *http.Response
				select {
				case resp = <-got:
				default:
				}
				if resp == nil {
					t.Fatal("no answer while the announced body is unsent: the 401 waits for the body")
				}
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "Authorization: Bearer") ||
					!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
					t.Errorf("answered %d %q %v, want 401 with the challenge and the fix", resp.StatusCode, b, resp.Header)
				}
				_ = conn.SetReadDeadline(time.Now().Add(time.Second))
				if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
					t.Errorf("after the 401 the connection is still open (read: %v)", err)
				}
			})
		})
	}
}
