package mcpclient

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/internal/jsonscan"
)

// The SDK decodes a tools/list answer's schemas into maps, which
// rawToolSchemas encodes again; at shelf scale that is most of a start's
// time and garbage. Over a byte stream (stdio, in memory) a listBytes
// reads the answers to this client's tools/list requests before the SDK
// does and puts each tool's schemas aside, already in the form marshal
// would give them (canonical), leaving in their place a marker string that
// rawToolSchemas swaps back. A schema with an x-mcp-header annotation, which
// the SDK reads, and anything the strict reader is unsure of stay in the
// answer as they were, for the SDK to read as it always did.

// maxPending bounds the tools/list requests a listBytes awaits the answer
// of; beyond it, answers are left to the SDK.
const maxPending = 64

// listBytes is one connection's state: the ids of its tools/list requests
// in flight and the schemas put aside, by marker.
type listBytes struct {
	prefix string // of every marker: a random nonce, so a server cannot forge one

	mu      sync.Mutex
	pending map[string]bool // raw JSON ids
	next    uint64
	aside   map[string]json.RawMessage
}

// newListBytes returns the state of a new connection.
func newListBytes() *listBytes {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	return &listBytes{prefix: "toolshelf-schema:" + hex.EncodeToString(nonce[:]) + ":",
		pending: make(map[string]bool), aside: make(map[string]json.RawMessage)}
}

// take returns the schema a marker stands for, and forgets it. It is
// ok false for any other value, and on a nil listBytes.
func (l *listBytes) take(v any) (json.RawMessage, bool) {
	s, ok := v.(string)
	if l == nil || !ok || len(s) <= len(l.prefix) || s[:len(l.prefix)] != l.prefix {
		return nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.aside[s]
	delete(l.aside, s)
	return b, ok
}

// forget drops the requests awaited and the schemas put aside and not
// taken: those of a listing given up on, whose answer the SDK dropped or
// never had. refresh calls it when it starts.
func (l *listBytes) forget() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.pending)
	clear(l.aside)
}

// sent notes a message the client wrote: its id when it is a tools/list
// request.
func (l *listBytes) sent(msg []byte) {
	if !bytes.Contains(msg, []byte(`"tools/list"`)) {
		return
	}
	i := jsonscan.SkipSpace(msg, 0)
	end, ok := jsonscan.ScanValue(msg, i, 8)
	if !ok || msg[i] != '{' || jsonscan.SkipSpace(msg, end) != len(msg) {
		return
	}
	var id []byte
	method := false
	ms, _ := jsonscan.Members(msg, i, nil)
	for _, m := range ms {
		switch m.Key {
		case "id":
			id = msg[m.Start:m.End]
		case "method":
			method = string(msg[m.Start:m.End]) == `"tools/list"`
		}
	}
	if !method || id == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) < maxPending {
		l.pending[string(id)] = true
	}
}

// received returns a message the client reads: an answer to a pending
// tools/list request with its tools' schemas put aside; any other message
// as it is.
func (l *listBytes) received(msg []byte) []byte {
	if !bytes.Contains(msg, []byte(`"tools"`)) {
		return msg
	}
	i := jsonscan.SkipSpace(msg, 0)
	// The SDK refuses a message nested deeper than 1000.
	end, ok := jsonscan.ScanValue(msg, i, 1000)
	if !ok || msg[i] != '{' || jsonscan.SkipSpace(msg, end) != len(msg) {
		return msg
	}
	top, ok := jsonscan.Members(msg, i, nil)
	if !ok {
		return msg
	}
	id, result, ok := unique2(top, "id", "result", "")
	if !ok || id == nil {
		return msg
	}
	l.mu.Lock()
	wanted := l.pending[string(msg[id.Start:id.End])]
	delete(l.pending, string(msg[id.Start:id.End]))
	l.mu.Unlock()
	if _, failed, _ := unique2(top, "", "error", ""); !wanted || failed != nil || result == nil || msg[result.Start] != '{' {
		return msg
	}
	fields, ok := jsonscan.Members(msg, result.Start, nil)
	if !ok {
		return msg
	}
	tools, _, ok := unique2(fields, "tools", "", "")
	if !ok || tools == nil || msg[tools.Start] != '[' {
		return msg
	}
	var out []byte
	last := 0 // msg[:last] is in out
	var ms []jsonscan.Member
	for j := jsonscan.SkipSpace(msg, tools.Start+1); msg[j] != ']'; {
		vend := jsonscan.SkipValue(msg, j)
		if msg[j] == '{' {
			if ms, ok = jsonscan.Members(msg, j, ms[:0]); ok {
				in, outSchema, ok := unique2(ms, "inputSchema", "outputSchema", "")
				for _, m := range []*jsonscan.Member{in, outSchema} {
					if !ok || m == nil || msg[m.Start] != '{' {
						continue
					}
					c, canon := canonicalValid(msg[m.Start:m.End])
					if !canon || (m == in && hasAnnotation(c)) {
						continue
					}
					if out == nil {
						out = make([]byte, 0, len(msg)/2)
					}
					out = append(out, msg[last:m.Start]...)
					out = strconv.AppendQuote(out, l.putAside(c))
					last = m.End
				}
			}
		}
		j = jsonscan.SkipSpace(msg, vend)
		if msg[j] == ',' {
			j = jsonscan.SkipSpace(msg, j+1)
		}
	}
	if out == nil {
		return msg
	}
	return append(out, msg[last:]...)
}

// putAside keeps a schema and returns its marker.
func (l *listBytes) putAside(schema []byte) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	marker := l.prefix + strconv.FormatUint(l.next, 10)
	l.aside[marker] = schema
	return marker
}

// unique2 finds the Members named a and b among ms, each of which must be
// there at most once and with a plain key, and says whether none is named
// not (a key the SDK might read differently, escaped, makes it false too).
func unique2(ms []jsonscan.Member, a, b, not string) (ma, mb *jsonscan.Member, ok bool) {
	for k := range ms {
		m := &ms[k]
		switch {
		case !m.Plain:
			return nil, nil, false
		case m.Key == not:
			return nil, nil, false
		case m.Key == a:
			if ma != nil {
				return nil, nil, false
			}
			ma = m
		case b != "" && m.Key == b:
			if mb != nil {
				return nil, nil, false
			}
			mb = m
		}
	}
	return ma, mb, true
}

// hasAnnotation reports whether a canonical schema holds an x-mcp-header
// annotation where the SDK looks for one (hasHeaderAnnotation).
func hasAnnotation(c []byte) bool {
	if !bytes.Contains(c, []byte(`"x-mcp-header"`)) {
		return false // a canonical key is never escaped
	}
	ms, _ := jsonscan.Members(c, 0, nil)
	for _, m := range ms {
		switch m.Key {
		case "x-mcp-header":
			return true
		case "properties":
			if c[m.Start] != '{' {
				continue
			}
			props, _ := jsonscan.Members(c, m.Start, nil)
			for _, p := range props {
				if c[p.Start] == '{' && hasAnnotation(c[p.Start:p.End]) {
					return true
				}
			}
		}
	}
	return false
}

// listReader is the client's end of a byte stream as the SDK reads it:
// each JSON value, once whole, goes through listBytes.received. A value
// longer than limit (the SDK's frame limit), or a stream that is not a
// sequence of objects and arrays, goes through as it is.
type listReader struct {
	r     io.ReadCloser
	l     *listBytes
	limit int

	in  []byte // read and not yet framed: the current value's start on
	out []byte // ready for the SDK
	err error

	scanned      int  // in[:scanned] is scanned
	depth        int  // of the current value at in[scanned]
	str, escaped bool // in a string, after a backslash in one
	through      bool // the current value goes through as it is read
	raw          bool // everything goes through as it is read
}

// newListReader returns r read through l.
func newListReader(r io.ReadCloser, l *listBytes) *listReader {
	return &listReader{r: r, l: l, limit: mcp.DefaultMaxLineLength}
}

// Read hands the SDK the next bytes.
func (lr *listReader) Read(p []byte) (int, error) {
	for len(lr.out) == 0 {
		if lr.err != nil {
			return 0, lr.err
		}
		lr.frame()
		if len(lr.out) > 0 {
			break
		}
		if cap(lr.in)-len(lr.in) < 4096 {
			// Doubling: a listing's answer can be megabytes.
			lr.in = slices.Grow(lr.in, max(32<<10, cap(lr.in)))
		}
		n, err := lr.r.Read(lr.in[len(lr.in):cap(lr.in)])
		lr.in = lr.in[:len(lr.in)+n]
		if err != nil {
			lr.err = err
			lr.out, lr.in = lr.in, nil // what is left goes as it is
		}
	}
	n := copy(p, lr.out)
	lr.out = lr.out[n:]
	if len(lr.out) == 0 {
		lr.out = nil
	}
	return n, nil
}

// frame scans what was read: white space between values, values that went
// through and whole values go to out.
func (lr *listReader) frame() {
	if lr.raw || lr.through {
		lr.scan()
		lr.out, lr.in = lr.in[:lr.scanned], lr.in[lr.scanned:]
		lr.scanned = 0
		lr.trim()
		return
	}
	for {
		start := lr.scanned
		if lr.depth == 0 {
			start = jsonscan.SkipSpace(lr.in, lr.scanned)
			if start < len(lr.in) && lr.in[start] != '{' && lr.in[start] != '[' {
				lr.raw = true // not JSON-RPC; the SDK reports it
			}
			if start > 0 && (start == len(lr.in) || lr.raw) {
				lr.out, lr.in, lr.scanned = append(lr.out, lr.in[:start]...), lr.in[start:], 0
				lr.trim()
				return
			}
			if start == len(lr.in) || lr.raw {
				return
			}
		}
		lr.scanned = start
		if !lr.scan() {
			if len(lr.in) > lr.limit {
				lr.through = true
				lr.out, lr.in, lr.scanned = append(lr.out, lr.in...), nil, 0
			}
			return
		}
		if value := lr.in[:lr.scanned]; len(value) > lr.limit {
			lr.out = append(lr.out, value...)
		} else {
			lr.out = append(lr.out, lr.l.received(value)...)
		}
		lr.in, lr.scanned = lr.in[lr.scanned:], 0
		lr.trim()
	}
}

// scan advances over in from scanned to the end of the current value; it
// reports whether the value ended (leaving scanned after it).
func (lr *listReader) scan() bool {
	b := lr.in
	for i := lr.scanned; i < len(b); i++ {
		c := b[i]
		switch {
		case lr.str:
			switch {
			case lr.escaped:
				lr.escaped = false
			case c == '\\':
				lr.escaped = true
			case c == '"':
				lr.str = false
			}
		case c == '"':
			lr.str = true
		case c == '{' || c == '[':
			lr.depth++
		case c == '}' || c == ']':
			lr.depth--
			if lr.depth <= 0 {
				lr.depth = 0
				lr.scanned = i + 1
				lr.through = false
				return true
			}
		}
	}
	lr.scanned = len(b)
	return false
}

// trim lets go of a large buffer once its value is read.
func (lr *listReader) trim() {
	if cap(lr.in) > 64<<10 {
		lr.in = append([]byte(nil), lr.in...)
	}
}

// Close closes the stream.
func (lr *listReader) Close() error { return lr.r.Close() }

// listWriter is the client's end of a byte stream as the SDK writes to it;
// each write (the SDK writes one message a time) goes to listBytes.sent
// first.
type listWriter struct {
	w io.WriteCloser
	l *listBytes
}

// Write notes p and writes it.
func (lw listWriter) Write(p []byte) (int, error) {
	lw.l.sent(bytes.TrimRight(p, "\r\n"))
	return lw.w.Write(p)
}

// Close closes the stream.
func (lw listWriter) Close() error { return lw.w.Close() }
