package emulator

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// Client returns an HTTP client whose requests the server answers in
// process: each request goes to ServeHTTP on the caller's goroutine, and
// its answer, a stream included, comes back whole once the handler
// returns. Nothing listens and nothing leaves the process, whatever host
// the URL names. Give it to an SDK or an adapter as its HTTP client, with a
// base URL whose path the server routes (see [Server]).
func (s *Server) Client() *http.Client {
	return &http.Client{Transport: inProcess{s}}
}

// inProcess is an http.RoundTripper that serves requests with a handler
// in the same process.
type inProcess struct{ h http.Handler }

// RoundTrip hands the request to the handler as a server would receive it
// and returns what the handler wrote.
func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "in-process"
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	if in.Body == nil {
		in.Body = http.NoBody
	}
	w := &answer{header: http.Header{}}
	t.h.ServeHTTP(w, in)
	return w.response(req), nil
}

// answer is the http.ResponseWriter of an in-process request: it keeps
// the status, the headers as they were when it was written, and the body.
// Flush does nothing: the body is returned whole.
type answer struct {
	header http.Header
	status int
	sent   http.Header
	body   bytes.Buffer
}

func (w *answer) Header() http.Header { return w.header }

func (w *answer) WriteHeader(code int) {
	if w.status != 0 || code < 200 {
		return // informational answers are not kept
	}
	w.status, w.sent = code, w.header.Clone()
}

func (w *answer) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush marks the answer as started, as a network flush would.
func (w *answer) Flush() { w.WriteHeader(http.StatusOK) }

func (w *answer) response(req *http.Request) *http.Response {
	w.WriteHeader(http.StatusOK)
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode: w.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.sent, ContentLength: int64(w.body.Len()),
		Body: io.NopCloser(bytes.NewReader(w.body.Bytes())), Request: req,
	}
}
