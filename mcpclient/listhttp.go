package mcpclient

import (
	"bytes"
	"io"
	"mime"
	"net/http"
)

// Over streamable HTTP, the client's requests and the server's answers
// pass through the transport's http.RoundTripper (httpRecorder): a request
// body goes to listBytes.sent, and an answer's body, a JSON message or a
// stream of server-sent events, is read through listBytes.received: the
// whole body, or each event's data when the event has one data line (as
// the SDKs write them). Everything else goes through as it is.

// maxListBody bounds the bytes of a JSON answer, or of one event, read
// whole; a longer one goes through as it is (the SDK's event limit is its
// own).
const maxListBody = 16 << 20

// noteRequest hands a request's body, when it can be read again, to
// l.sent.
func (l *listBytes) noteRequest(req *http.Request) {
	if req.Method != http.MethodPost || req.GetBody == nil || req.ContentLength > maxListBody {
		return
	}
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxListBody))
	if err == nil {
		l.sent(bytes.TrimSpace(b))
	}
}

// readAnswer returns resp with its body read through l, when it is JSON or
// an event stream.
func (l *listBytes) readAnswer(resp *http.Response) *http.Response {
	if resp.StatusCode != http.StatusOK || resp.Body == nil {
		return resp
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch media {
	case "application/json":
		resp.Body = &jsonBody{r: resp.Body, l: l}
	case "text/event-stream":
		resp.Body = &eventBody{rewriter: rewriter{r: resp.Body}, l: l}
	}
	return resp
}

// jsonBody is a JSON answer's body, read whole through listBytes.received
// on the first Read.
type jsonBody struct {
	r    io.ReadCloser
	l    *listBytes
	read io.Reader
}

// Read reads the body.
func (b *jsonBody) Read(p []byte) (int, error) {
	if b.read == nil {
		whole, err := io.ReadAll(io.LimitReader(b.r, maxListBody+1))
		switch {
		case err != nil:
			b.read = io.MultiReader(bytes.NewReader(whole), errReader{err})
		case len(whole) > maxListBody:
			b.read = io.MultiReader(bytes.NewReader(whole), b.r)
		default:
			b.read = bytes.NewReader(b.l.received(whole))
		}
	}
	return b.read.Read(p)
}

// Close closes the body.
func (b *jsonBody) Close() error { return b.r.Close() }

// errReader fails every Read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// eventBody is an event stream's body: each event, once its blank line
// is read, goes on with its data rewritten when it has one data line.
type eventBody struct {
	rewriter // in holds the current event's lines, then what follows
	l        *listBytes
	raw      bool // an event was too long: the rest goes through as it is

	// Of the event at the start of in: where its first line not read yet
	// starts, how many data lines it has and where the last one starts.
	line, datas, data int
}

// Read reads the stream.
func (b *eventBody) Read(p []byte) (int, error) { return b.read(p, b.events) }

// events moves the whole events of in to out.
func (b *eventBody) events() {
	if b.raw {
		b.out, b.in = append(b.out, b.in...), nil
		return
	}
	done := 0 // b.in[:done] has gone to out
	for {
		end, data := b.scan(done)
		if end < 0 {
			break
		}
		event := b.in[done:end]
		if data >= 0 {
			event = b.rewrite(event, data-done)
		}
		b.out = append(b.out, event...)
		done = end
	}
	if done > 0 {
		b.in = append([]byte(nil), b.in[done:]...)
		b.line -= done
		if b.data >= 0 {
			b.data -= done
		}
	}
	if len(b.in) > maxListBody {
		b.raw = true
		b.out, b.in = append(b.out, b.in...), nil
	}
}

// scan reads the lines of the event that starts at in[start], from the
// first one not read yet. It returns the end of the event (after the blank
// line that ends it), or -1 when it is not whole yet, and the start of its
// data line when it has exactly one, or -1. Lines end in \n (a \r before
// it is part of the line: the SDKs write \n).
func (b *eventBody) scan(start int) (end, data int) {
	if b.line < start {
		b.line, b.datas, b.data = start, 0, -1
	}
	for b.line < len(b.in) {
		nl := bytes.IndexByte(b.in[b.line:], '\n')
		if nl < 0 {
			return -1, -1
		}
		line := b.in[b.line : b.line+nl]
		next := b.line + nl + 1
		switch {
		case len(line) == 0 || (len(line) == 1 && line[0] == '\r'):
			data = b.data
			if b.datas != 1 {
				data = -1
			}
			b.line, b.datas, b.data = next, 0, -1
			return next, data
		case bytes.HasPrefix(line, []byte("data:")):
			b.datas++
			b.data = b.line
		}
		b.line = next
	}
	return -1, -1
}

// rewrite returns event with the JSON of its data line, which starts at
// data, read through listBytes.received.
func (b *eventBody) rewrite(event []byte, data int) []byte {
	nl := data + bytes.IndexByte(event[data:], '\n')
	payload := data + len("data:")
	if payload < nl && event[payload] == ' ' {
		payload++
	}
	value := event[payload:nl]
	value = bytes.TrimSuffix(value, []byte("\r"))
	got := b.l.received(value)
	if len(got) == len(value) && (len(got) == 0 || &got[0] == &value[0]) {
		return event
	}
	out := make([]byte, 0, len(event)-len(value)+len(got))
	out = append(out, event[:payload]...)
	out = append(out, got...)
	return append(out, event[payload+len(value):]...)
}
