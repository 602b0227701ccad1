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
// time and garbage, and the SDK's read buffer, which lasts as long as the
// connection, grows to the answer's size. A listBytes reads the answers to
// this client's tools/list requests before the SDK does (over stdio and in
// memory through a listReader, over HTTP as listhttp.go says). It puts
// each tool's schemas aside, already in the form marshal would give them
// (canonical), and its description, decoded, leaving in their place a
// marker string that rawToolSchemas swaps back. A schema with an
// x-mcp-header annotation, which the SDK reads, and anything the strict
// reader is unsure of stay in the answer as they were, for the SDK to read
// as it always did.

// maxPending bounds the tools/list requests a listBytes awaits the answer
// of; beyond it, answers are left to the SDK.
const maxPending = 64

// listBytes is one connection's state: the ids of its tools/list requests
// in flight and what was put aside, by marker.
type listBytes struct {
	prefix string // of every marker: a random nonce, so a server cannot forge one

	mu      sync.Mutex
	pending map[string]bool // raw JSON ids
	next    uint64
	aside   map[string]aside
}

// aside is what a marker stands for: a schema, as canonical bytes, or a
// tool's description.
type aside struct {
	schema json.RawMessage
	text   string
}

// minAsideText is the shortest encoded description put aside: a shorter
// one costs the SDK less than its marker.
const minAsideText = 64

// newListBytes returns the state of a new connection.
func newListBytes() *listBytes {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	return &listBytes{prefix: "toolshelf-aside:" + hex.EncodeToString(nonce[:]) + ":",
		pending: make(map[string]bool), aside: make(map[string]aside)}
}

// take returns what a marker stands for, and forgets it. It is ok false
// for any other value, and on a nil listBytes.
func (l *listBytes) take(v any) (aside, bool) {
	s, ok := v.(string)
	if l == nil || !ok || len(s) <= len(l.prefix) || s[:len(l.prefix)] != l.prefix {
		return aside{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.aside[s]
	delete(l.aside, s)
	if ok && len(l.aside) == 0 {
		l.aside = make(map[string]aside) // a map keeps its largest size
	}
	return a, ok
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
	found, ok := unique(top, "", "id", "result", "error")
	id, result := member(found, "id"), member(found, "result")
	if !ok || id == nil {
		return msg
	}
	l.mu.Lock()
	wanted := l.pending[string(msg[id.Start:id.End])]
	delete(l.pending, string(msg[id.Start:id.End]))
	l.mu.Unlock()
	if !wanted || member(found, "error") != nil || result == nil || msg[result.Start] != '{' {
		return msg
	}
	fields, ok := jsonscan.Members(msg, result.Start, nil)
	if !ok {
		return msg
	}
	found, ok = unique(fields, "", "tools")
	tools := member(found, "tools")
	if !ok || tools == nil || msg[tools.Start] != '[' {
		return msg
	}
	var out []byte
	var w canonicalWriter
	last := 0 // msg[:last] is in out
	var ms []jsonscan.Member
	for j := jsonscan.SkipSpace(msg, tools.Start+1); msg[j] != ']'; {
		vend := jsonscan.SkipValue(msg, j)
		if msg[j] == '{' {
			if ms, ok = jsonscan.Members(msg, j, ms[:0]); ok {
				found, ok := unique(ms, "", "inputSchema", "outputSchema", "description")
				if ok {
					// In the order of the bytes, which is the server's.
					slices.SortFunc(found, func(a, b *jsonscan.Member) int { return a.Start - b.Start })
				}
				for _, m := range found {
					if !ok {
						break
					}
					var marker string
					switch {
					case m.Key == "description":
						if msg[m.Start] != '"' || m.End-m.Start < minAsideText {
							continue
						}
						end, plain, _ := jsonscan.ScanString(msg, m.Start)
						text, decoded := jsonscan.DecodeString(msg[m.Start:end], plain)
						if !decoded {
							continue
						}
						marker = l.putAside(aside{text: text})
					case msg[m.Start] == '{':
						c, canon := w.canonical(msg[m.Start:m.End])
						if !canon || (m.Key == "inputSchema" && hasAnnotation(c)) {
							continue
						}
						marker = l.putAside(aside{schema: c})
					default:
						continue
					}
					if out == nil {
						out = make([]byte, 0, len(msg)/4)
					}
					out = append(out, msg[last:m.Start]...)
					out = strconv.AppendQuote(out, marker)
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

// putAside keeps a schema or a text and returns its marker.
func (l *listBytes) putAside(a aside) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	marker := l.prefix + strconv.FormatUint(l.next, 10)
	l.aside[marker] = a
	return marker
}

// unique finds the members named by names among ms, in the order of ms;
// each must be there at most once and every key plain (an escaped key may
// be one of them, as the SDK reads it), and none may be named not.
func unique(ms []jsonscan.Member, not string, names ...string) (found []*jsonscan.Member, ok bool) {
	for k := range ms {
		m := &ms[k]
		switch {
		case !m.Plain, not != "" && m.Key == not:
			return nil, false
		case slices.Contains(names, m.Key):
			for _, f := range found {
				if f.Key == m.Key {
					return nil, false
				}
			}
			found = append(found, m)
		}
	}
	return found, true
}

// member returns the member named name among found, or nil.
func member(found []*jsonscan.Member, name string) *jsonscan.Member {
	for _, m := range found {
		if m.Key == name {
			return m
		}
	}
	return nil
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
	rewriter // in holds what is not framed yet: the current value's start on
	l        *listBytes
	limit    int

	scanned      int  // in[:scanned] is scanned
	depth        int  // of the current value at in[scanned]
	str, escaped bool // in a string, after a backslash in one
	through      bool // the current value goes through as it is read
	raw          bool // everything goes through as it is read
}

// newListReader returns r read through l.
func newListReader(r io.ReadCloser, l *listBytes) *listReader {
	return &listReader{rewriter: rewriter{r: r}, l: l, limit: mcp.DefaultMaxLineLength}
}

// Read hands the SDK the next bytes.
func (lr *listReader) Read(p []byte) (int, error) { return lr.read(p, lr.frame) }

// rewriter is what a listReader and an eventBody share: bytes read from r
// into in, which their framing moves to out, rewritten or not, to be
// handed on.
type rewriter struct {
	r   io.ReadCloser
	in  []byte // read and not moved to out yet
	out []byte // ready to hand on
	err error
}

// read hands on the next bytes of out. When out is empty it calls frame,
// which moves what it can of in to out, and reads more when frame moved
// nothing. Once r fails or ends, what is left of in goes as it is.
func (w *rewriter) read(p []byte, frame func()) (int, error) {
	for len(w.out) == 0 {
		if w.err != nil {
			return 0, w.err
		}
		frame()
		if len(w.out) > 0 {
			break
		}
		if cap(w.in)-len(w.in) < 4096 {
			// Doubling: a listing's answer can be megabytes.
			w.in = slices.Grow(w.in, max(32<<10, cap(w.in)))
		}
		n, err := w.r.Read(w.in[len(w.in):cap(w.in)])
		w.in = w.in[:len(w.in)+n]
		if err != nil {
			w.err = err
			w.out, w.in = w.in, nil
		}
	}
	n := copy(p, w.out)
	w.out = w.out[n:]
	if len(w.out) == 0 {
		w.out = nil
	}
	return n, nil
}

// Close closes r.
func (w *rewriter) Close() error { return w.r.Close() }

// frame scans what was read: white space between values, values that go
// through and whole values go to out.
func (lr *listReader) frame() {
	if lr.raw {
		lr.out, lr.in = lr.in, nil
		return
	}
	if lr.through {
		lr.scan()
		lr.out = lr.in[:lr.scanned:lr.scanned]
		lr.consume(lr.scanned)
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
				lr.out = append(lr.out, lr.in[:start]...)
				lr.consume(start)
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
		value := lr.in[:lr.scanned]
		if len(value) <= lr.limit {
			value = lr.l.received(value)
		}
		if len(lr.out) == 0 {
			// in's front, which consume leaves be, or a new buffer; never
			// appended to in place.
			lr.out = value[:len(value):len(value)]
		} else {
			lr.out = append(lr.out, value...)
		}
		lr.consume(lr.scanned)
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

// consume drops in[:n], letting go of a large buffer once its value is
// read (out may still hold a part of it).
func (lr *listReader) consume(n int) {
	if cap(lr.in) > 64<<10 {
		lr.in = append([]byte(nil), lr.in[n:]...)
	} else {
		lr.in = lr.in[n:]
	}
	lr.scanned = 0
}

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
