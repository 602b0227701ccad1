package emulator

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener hands out the server ends of in-memory connections.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// dial returns the client end of a new connection to the listener.
func (l *pipeListener) dial() net.Conn {
	srv, cli := net.Pipe()
	l.conns <- srv
	return cli
}

// TestBodyTimeout: a request whose body arrives too slowly, or never
// completes (Content-Length larger than what is sent), is answered 408
// once BodyTimeout has passed and its connection is closed; a whole body
// is answered as usual. The server is an http.Server without ReadTimeout,
// as the command line builds it: the bound is the emulator's own.
func TestBodyTimeout(t *testing.T) {
	srv, err := New(Config{BodyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const head = "POST /v1/chat/completions HTTP/1.1\r\nHost: emulator\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n"
	body := `{"model":"llama-3.3-70b","messages":[{"role":"user","content":"hello"}]}`
	for _, tc := range []struct {
		name string
		send func(c net.Conn)
		want int
	}{
		{"whole body", func(c net.Conn) {
			io.WriteString(c, head+"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
		}, http.StatusOK},
		{"short body", func(c net.Conn) {
			io.WriteString(c, head+"Content-Length: "+strconv.Itoa(len(body)+100)+"\r\n\r\n"+body)
		}, http.StatusRequestTimeout},
		{"slow body", func(c net.Conn) {
			io.WriteString(c, head+"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n")
			for i := range len(body) {
				time.Sleep(time.Second) // 72 s in all, past the 30 s allowed
				if _, err := io.WriteString(c, body[i:i+1]); err != nil {
					return // the server gave up
				}
			}
		}, http.StatusRequestTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ln := newPipeListener()
				hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
				go hs.Serve(ln)
				defer hs.Close()
				c := ln.dial()
				sent := make(chan struct{})
				go func() {
					defer close(sent)
					tc.send(c)
				}()
				defer func() {
					c.Close()
					<-sent // a slow sender stops at its next write
				}()
				br := bufio.NewReader(c)
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				msg, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != tc.want {
					t.Fatalf("status %d (%s), want %d", res.StatusCode, msg, tc.want)
				}
				if tc.want != http.StatusRequestTimeout {
					return
				}
				if !strings.Contains(string(msg), "did not arrive within 30s") {
					t.Errorf("error %s", msg)
				}
				// The connection is closed, not held.
				if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
					t.Errorf("after the error the connection gave %v, want EOF", err)
				}
			})
		})
	}
}
