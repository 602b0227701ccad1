package emulator

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/toolshelf/toolshelf/internal/adapt"
)

// oaiNullable is a string that is null when empty.
func oaiNullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// oaiWriteError writes an error the way both OpenAI APIs do:
// {"error":{"message","type","param","code"}} with the status; a 429
// carries retry-after. Types named in Anthropic's terms (the server's
// own errors) become OpenAI's.
func oaiWriteError(w http.ResponseWriter, e *Error) {
	typ := e.Type
	switch typ {
	case "", "not_found_error", "authentication_error", "permission_error":
		typ = "invalid_request_error"
	case "api_error", "overloaded_error":
		typ = "server_error"
	case "rate_limit_error":
		typ = "requests"
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.Status == http.StatusTooManyRequests {
		h.Set("Retry-After", "1")
		h.Set("Retry-After-Ms", "1000")
	}
	w.WriteHeader(e.Status)
	body := map[string]any{"error": map[string]any{
		"message": e.Message, "type": typ, "param": oaiNullable(e.Param), "code": oaiNullable(e.Code),
	}}
	_, _ = w.Write(append(adapt.JSON(body), '\n'))
}

// oaiWriteJSON writes a 200 JSON reply.
func oaiWriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(adapt.JSON(v), '\n'))
}

// oaiStream writes server-sent events, flushing after each.
type oaiStream struct {
	w   http.ResponseWriter
	f   http.Flusher
	seq int
}

func oaiNewStream(w http.ResponseWriter) *oaiStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &oaiStream{w: w, f: f}
}

func (s *oaiStream) write(b []byte) {
	_, _ = s.w.Write(b)
	if s.f != nil {
		s.f.Flush()
	}
}

// event writes a Responses event: the type and sequence number first,
// then the fields of v (a struct or map).
func (s *oaiStream) event(typ string, v any) {
	fields := adapt.JSON(v)
	var b bytes.Buffer
	fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d", typ, typ, s.seq)
	if len(fields) > 2 {
		b.WriteByte(',')
		b.Write(fields[1:])
	} else {
		b.WriteByte('}')
	}
	b.WriteString("\n\n")
	s.seq++
	s.write(b.Bytes())
}

// data writes a Chat Completions chunk (no event name).
func (s *oaiStream) data(v any) {
	s.write(append(append([]byte("data: "), adapt.JSON(v)...), "\n\n"...))
}

// oaiChunks splits text into stream deltas of a few words: a cut after
// whitespace once a piece has size bytes, a hard cut (at a rune boundary)
// at four times that.
func oaiChunks(s string, size int) []string {
	var out []string
	start := 0
	for i, r := range s {
		n := i + utf8.RuneLen(r) - start
		if (n >= size && (r == ' ' || r == '\n')) || n >= 4*size {
			out = append(out, s[start:i+utf8.RuneLen(r)])
			start = i + utf8.RuneLen(r)
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// oaiCallID is a reply call's id: the responder's, else
// call_emu_<seq>_<i> (see Exchange.callSeq).
func oaiCallID(ex *Exchange, c Call, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return "call_emu_" + strconv.Itoa(ex.callSeq()) + "_" + strconv.Itoa(i)
}

// oaiCallArguments is a reply call's arguments as the string the APIs
// send.
func oaiCallArguments(c Call) string {
	if len(bytes.TrimSpace(c.Arguments)) == 0 {
		return "{}"
	}
	return string(c.Arguments)
}

// oaiCreated is the creation time replies carry.
func oaiCreated() int64 { return time.Now().Unix() }
