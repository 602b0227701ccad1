package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The limits of the HTTP front. [NewHTTPServer] sets the server's
// timeouts from them; [Gateway.Handler] bounds each request's body itself,
// so a handler served by another server keeps that bound.
const (
	// ReadHeaderTimeout is how long a client may take to send a request's
	// headers.
	ReadHeaderTimeout = 10 * time.Second
	// BodyTimeout is how long a client may take to send a request's body,
	// counted from the moment the handler starts reading it. A body still
	// arriving then is answered 408 and its connection closed: a client
	// that sends a byte every few seconds cannot hold a connection.
	BodyTimeout = 30 * time.Second
	// ReadTimeout bounds the reading of a whole request, headers and body,
	// behind ReadHeaderTimeout and BodyTimeout. Answers are not bounded: a
	// tool call or a script may stream its answer for minutes.
	ReadTimeout = ReadHeaderTimeout + BodyTimeout
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request.
	IdleTimeout = 2 * time.Minute
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes = 64 << 10
	// MaxRequestBytes bounds a request's body: a longer one is answered
	// 413 and its connection closed. It is the MCP SDK's own bound.
	MaxRequestBytes = mcp.DefaultMaxRequestBodyBytes
	// MinTokenBytes is the length of the shortest bearer token that may
	// guard a listener other machines can reach (see [CheckToken]):
	// short enough to type, too long to guess. A random one:
	// openssl rand -hex 32.
	MinTokenBytes = 32
)

// NewHTTPServer returns a server of h with the front's timeouts
// (ReadHeaderTimeout, ReadTimeout, IdleTimeout) and MaxHeaderBytes.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		IdleTimeout: IdleTimeout, MaxHeaderBytes: MaxHeaderBytes}
}

// CheckToken reports why token cannot guard the HTTP front, or nil.
// Surrounding whitespace is refused rather than trimmed: a token read
// from a file with Windows line endings ends in "\r", which no client
// sends, so the gateway would start and then refuse every client; the
// person who set it is told at once, and the token the gateway checks is
// exactly the one configured. Control characters cannot travel in a
// header and are refused too. beyondLoopback says that other machines can
// reach the listener: the token must then be at least MinTokenBytes long.
// An empty token is no token, and is not CheckToken's to refuse.
func CheckToken(token string, beyondLoopback bool) error {
	if token == "" {
		return nil
	}
	if strings.TrimSpace(token) == "" {
		return fmt.Errorf("the token is only whitespace (%q): set a real one, e.g. the output of openssl rand -hex 32", token)
	}
	if strings.TrimSpace(token) != token {
		rest := strings.TrimLeftFunc(token, unicode.IsSpace)
		start, end := token[:len(token)-len(rest)], rest[len(strings.TrimRightFunc(rest, unicode.IsSpace)):]
		return fmt.Errorf("the token has surrounding whitespace (%q before it, %q after it; a file with Windows line endings leaves \"\\r\"): "+
			"clients send it without, so none would match; remove it (e.g. tr -d ' \\r\\n' < FILE)", start, end)
	}
	if i := strings.IndexFunc(token, unicode.IsControl); i >= 0 {
		return fmt.Errorf("the token holds a control character (%q at byte %d), which an HTTP header cannot carry: use printable characters, e.g. the output of openssl rand -hex 32", token[i:i+1], i)
	}
	if beyondLoopback && len(token) < MinTokenBytes {
		return fmt.Errorf("the token is %s long: on an address other machines can reach it must be at least %d (gateway.MinTokenBytes), so that it cannot be guessed; "+
			"make one with openssl rand -hex 32, or listen on 127.0.0.1", bytesLong(len(token)), MinTokenBytes)
	}
	return nil
}

// bytesLong is "1 byte" or "n bytes".
func bytesLong(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// BeyondLoopback reports whether addr, a listener's address, can be
// reached from other machines.
func BeyondLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && !tcp.IP.IsLoopback()
}

// refuse answers r with code and msg before reading its body, and closes
// the connection. Without the cut, net/http would read up to 256 KiB of a
// body nobody uses before it sends the answer (to keep the connection),
// so a slow client would wait for its 401 and hold the connection while
// it trickles the body in.
func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	// Whatever is still to be read of the body is not wanted: the
	// server's own reads after the handler fail at once.
	_ = rc.SetReadDeadline(time.Now())
}

// readBody reads each request's body before next sees it: within
// BodyTimeout (else 408) and MaxRequestBytes (else 413), each refusal
// closing the connection. Where the connection has no read deadline to
// set (a handler served by a recorder), the server's own timeouts apply.
func readBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			// Nothing more to read: lift ReadTimeout's deadline, as after
			// a body, or the server's background read would hit it and
			// cancel the request while its answer still streams.
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > MaxRequestBytes {
			refuse(w, http.StatusRequestEntityTooLarge, tooLarge(r.ContentLength))
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(BodyTimeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
		var tooBig *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &tooBig):
			refuse(w, http.StatusRequestEntityTooLarge, tooLarge(-1))
			return
		case errors.As(err, &ne) && ne.Timeout():
			refuse(w, http.StatusRequestTimeout, fmt.Sprintf("request timeout: the body did not arrive within %v (gateway.BodyTimeout)", BodyTimeout))
			return
		case err != nil:
			refuse(w, http.StatusBadRequest, fmt.Sprintf("bad request: reading the body: %v", err))
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// tooLarge is the message of a 413; n is the declared length, or -1.
func tooLarge(n int64) string {
	if n >= 0 {
		return fmt.Sprintf("request too large: %d bytes; a request body may hold at most %d (gateway.MaxRequestBytes)", n, MaxRequestBytes)
	}
	return fmt.Sprintf("request too large: a request body may hold at most %d bytes (gateway.MaxRequestBytes)", MaxRequestBytes)
}
