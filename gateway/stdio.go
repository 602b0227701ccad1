package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/toolshelf/toolshelf/internal/cut"
)

// MaxStdioLine bounds one line (one JSON-RPC message) a stdio client
// sends, in bytes. A longer line is answered with an invalid-request
// error and skipped; it is read in pieces and never held whole.
const MaxStdioLine = 4 << 20

const (
	// maxBadLineLogs bounds how many bad lines a session logs; the ones
	// after are answered but not logged.
	maxBadLineLogs = 16
	// badLineExcerpt bounds how much of a bad line is logged, in bytes.
	badLineExcerpt = 120
)

// lineFilter is what the SDK's stdio transport reads instead of the
// client's input: the lines that are JSON-RPC messages, one per line.
// Every other line is answered on the output with the JSON-RPC error the
// SDK itself would not send (it ends the session on such a line), logged,
// and skipped:
//
//   - a line that is not JSON: -32700, parse error;
//   - JSON that is not a request, notification or response object (an
//     array, which MCP no longer allows as a batch; a number; an object
//     without "jsonrpc": "2.0", or with neither a method nor an id):
//     -32600, invalid request;
//   - a line longer than [MaxStdioLine]: -32600.
//
// Blank lines are skipped unanswered.
type lineFilter struct {
	br  *bufio.Reader
	out *lockedWriter
	log *slog.Logger

	buf     []byte // the line being read
	pending []byte // what Read has still to return: a message and its newline
	err     error  // the input's, once it ended
	lines   int    // lines read
	bad     int    // bad lines answered
}

func newLineFilter(r io.Reader, out *lockedWriter, log *slog.Logger) *lineFilter {
	return &lineFilter{br: bufio.NewReaderSize(r, 64<<10), out: out, log: log}
}

// Read returns the next good messages' bytes, answering and skipping the
// bad lines before them; at the input's end, its error (io.EOF).
func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		if cap(f.buf) > 1<<20 {
			f.buf = nil // a long line's buffer is not kept for the session
		}
		line, overlong, err := f.next()
		if err != nil {
			f.err = err // the last line, without its newline, is still read
		}
		pending, werr := f.check(line, overlong)
		if werr != nil {
			f.err = fmt.Errorf("answering a bad line on standard output: %w", werr)
		}
		f.pending = pending
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// next reads a line; overlong reports that it was longer than
// [MaxStdioLine], in which case it was read to its end and dropped.
func (f *lineFilter) next() (line []byte, overlong bool, err error) {
	f.buf = f.buf[:0]
	for {
		chunk, err := f.br.ReadSlice('\n')
		// The bound allows for a line's \r\n.
		if !overlong && len(f.buf)+len(chunk) > MaxStdioLine+2 {
			overlong, f.buf = true, f.buf[:0]
		}
		if !overlong {
			f.buf = append(f.buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil || len(f.buf) > 0 || overlong {
			f.lines++
		}
		line = bytes.TrimRight(f.buf, "\r\n")
		if !overlong && len(line) > MaxStdioLine {
			overlong, line = true, nil
		}
		return line, overlong, err
	}
}

// check returns a good line as the SDK reads it, with its newline, or
// answers a bad one and returns nil; the error is the output's.
func (f *lineFilter) check(line []byte, overlong bool) ([]byte, error) {
	trimmed := bytes.TrimSpace(line)
	if !overlong && len(trimmed) == 0 {
		return nil, nil
	}
	var (
		code    int64
		problem string
		id      any // nil: null
	)
	switch {
	case overlong:
		code, problem = jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: line %d is longer than %d bytes, the gateway's bound on one message; it was skipped", f.lines, MaxStdioLine)
	case !json.Valid(trimmed):
		var v json.RawMessage
		err := json.Unmarshal(trimmed, &v)
		code, problem = jsonrpc.CodeParseError, fmt.Sprintf("Parse error: line %d is not JSON (%v); send one JSON-RPC 2.0 message per line", f.lines, err)
	case trimmed[0] == '[':
		code, problem = jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: line %d is a JSON array; batches are not supported: send one JSON-RPC 2.0 message per line", f.lines)
	default:
		_, err := jsonrpc.DecodeMessage(trimmed)
		if err == nil {
			// Trimmed: the SDK takes anything after a message but its
			// newline for trailing data, and ends the session.
			return append(trimmed, '\n'), nil
		}
		code, problem = jsonrpc.CodeInvalidRequest, fmt.Sprintf(`Invalid Request: line %d is not a JSON-RPC 2.0 request, notification or response (%v); `+
			`send an object with "jsonrpc": "2.0" and a "method", or an "id" with a "result" or an "error"`, f.lines, err)
		id = requestID(trimmed)
	}
	f.bad++
	switch {
	case f.bad <= maxBadLineLogs:
		f.log.Warn("a bad line from the stdio client was answered with an error and skipped",
			"line", f.lines, "code", code, "bytes", len(line), "excerpt", excerpt(line, overlong))
	case f.bad == maxBadLineLogs+1:
		f.log.Warn("more bad lines from the stdio client: they are answered with errors but no longer logged", "after", maxBadLineLogs)
	}
	answer, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, problem}})
	if err != nil {
		return nil, err
	}
	_, err = f.out.Write(append(answer, '\n'))
	return nil, err
}

// requestID returns the id of an object that looks like a request (it
// has a method) and has a valid id, a string or a number, so that the
// client can match the error to its request; otherwise nil (null).
func requestID(b []byte) any {
	var m struct {
		Method json.RawMessage `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(b, &m) != nil || len(m.Method) == 0 || len(m.ID) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(m.ID, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(m.ID, &n) == nil {
		if _, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return n
		}
	}
	return nil
}

// excerpt is the start of a bad line for the log: at most
// [badLineExcerpt] bytes, cut at a rune, quoted so that no control
// character reaches the log.
func excerpt(line []byte, overlong bool) string {
	if overlong {
		return "(not kept)"
	}
	s := string(line[:cut.Before(string(line), badLineExcerpt)])
	if len(s) < len(line) {
		return strconv.Quote(s) + "…"
	}
	return strconv.Quote(s)
}

// lockedWriter serialises whole writes, so that the answers to bad lines
// and the SDK's messages never interleave on the output.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *lockedWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Close()
}

// filteredInput is the input the SDK reads: the filter's lines, closing
// the client's reader.
type filteredInput struct {
	*lineFilter
	io.Closer
}
