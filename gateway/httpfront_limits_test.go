package gateway_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolshelf/toolshelf/gateway"
)

// TestCheckToken: what a token that guards the HTTP front may be.
func TestCheckToken(t *testing.T) {
	long := strings.Repeat("a", gateway.MinTokenBytes)
	for _, c := range []struct {
		token          string
		beyondLoopback bool
		want           string // in the error; "" for none
	}{
		{"", true, ""}, // no token: listenGateway's to refuse
		{"x", false, ""},
		{long, true, ""},
		{"with inner space " + long, true, ""},
		{long[1:], true, fmt.Sprintf("the token is %d bytes long", gateway.MinTokenBytes-1)},
		{"x", true, "the token is 1 byte long"},
		{long + "\r\n", false, `surrounding whitespace ("" before it, "\r\n" after it`},
		{"\t" + long, false, `("\t" before it, "" after it`},
		{" \r\n ", false, "only whitespace"},
		{"ab\x00cd", false, `control character ("\x00" at byte 2)`},
		{"ab\x7fcd", false, "control character"},
	} {
		err := gateway.CheckToken(c.token, c.beyondLoopback)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckToken(%q, %v) = %v, want nil", c.token, c.beyondLoopback, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckToken(%q, %v) = %v, want an error saying %q", c.token, c.beyondLoopback, err, c.want)
		}
	}
}

// TestHTTPStalledBodyTimesOut: a body that stops arriving is answered 408
// BodyTimeout after the handler started to read it.
func TestHTTPStalledBodyTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := serveFront(t, "").dial(t)
		got := readAnswer(conn)
		start := time.Now()
		if _, err := io.WriteString(conn, postHead("", 100)+"{"); err != nil {
			t.Fatal(err)
		}
		resp := <-got
		if took := time.Since(start); resp == nil || resp.StatusCode != http.StatusRequestTimeout || took != gateway.BodyTimeout || !resp.Close {
			t.Fatalf("answer %+v after %v, want 408 closing the connection after %v", resp, took, gateway.BodyTimeout)
		}
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), "gateway.BodyTimeout") {
			t.Errorf("the 408 does not name the bound: %q", b)
		}
	})
}

// TestHTTPBodyTooLarge: a body longer than MaxRequestBytes is answered 413,
// at once when its length is declared, as soon as the bound is passed when
// it is chunked; the connection is closed.
func TestHTTPBodyTooLarge(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked %v", chunked), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				conn := serveFront(t, "").dial(t)
				got := readAnswer(conn)
				if !chunked {
					_, _ = io.WriteString(conn, postHead("", gateway.MaxRequestBytes+1))
				} else {
					head := strings.Replace(postHead("", 0), "Content-Length: 0\r\n", "Transfer-Encoding: chunked\r\n", 1)
					_, _ = io.WriteString(conn, head)
					chunk := fmt.Sprintf("%x\r\n%s\r\n", 64<<10, strings.Repeat(" ", 64<<10))
					for range gateway.MaxRequestBytes/(64<<10) + 1 {
						_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
						if _, err := io.WriteString(conn, chunk); err != nil {
							break // the server stopped reading
						}
					}
				}
				resp := <-got
				if resp == nil || resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
					t.Fatalf("answer %+v, want 413 closing the connection", resp)
				}
				b, _ := io.ReadAll(resp.Body)
				if !strings.Contains(string(b), "gateway.MaxRequestBytes") {
					t.Errorf("the 413 does not name the bound: %q", b)
				}
			})
		})
	}
}

// TestHTTPServerCutsSlowHeaders: the server NewHTTPServer makes closes a
// connection whose headers trickle in, ReadHeaderTimeout after they began.
func TestHTTPServerCutsSlowHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := serveOn(t, gateway.NewHTTPServer(newGateway(t).Handler(gateway.HTTPConfig{})))
		conn := ln.dial(t)
		start := time.Now()
		_, _ = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nX-Slow: ")
		var err error
		for time.Since(start) < 10*gateway.ReadHeaderTimeout {
			_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err = conn.Write([]byte{'a'}); err != nil {
				break
			}
			time.Sleep(time.Second)
		}
		// The server's read ended at the deadline; the write after it
		// finds the connection closed (or not read within its second).
		if took := time.Since(start); err == nil || took > gateway.ReadHeaderTimeout+2*time.Second {
			t.Errorf("slow headers held the connection %v (write: %v), want it cut after %v", took, err, gateway.ReadHeaderTimeout)
		}
		if !errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, io.EOF) {
			t.Logf("the write after the cut: %v", err)
		}
	})
}
