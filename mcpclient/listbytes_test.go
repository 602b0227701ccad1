package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/toolshelf/toolshelf/catalog/builtin"
)

// canonicalByDecoding is what canonical stands for: the SDK's decoding
// (segmentio/encoding, case-sensitive) into a value, and marshal's
// encoding of it.
func canonicalByDecoding(b []byte) ([]byte, error) {
	var v any
	d := segjson.NewDecoder(bytes.NewReader(b))
	d.DontMatchCaseInsensitiveStructFields()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return marshal(v)
}

// canonicalCases are values that exercise key order, duplicate keys,
// escapes, HTML-unsafe bytes, line separators, numbers in every form and
// nesting.
var canonicalCases = []string{
	`{"b":1,"a":2,"c":{"z":[1,2,{"y":true,"x":null}],"a":"s"}}`,
	`{"a":1,"a":2,"b":{"k":1,"k":{"k":3}},"a":3}`,
	` { "a" : [ 1 , 2 ] , "b" : { } , "c" : [ ] } `,
	`{"<":"x&y<z>","\u0026":"\u003c","\u00e9":"é","é":"\u00e9","\n":"\t\r\b\f\/\\\"","\u0000":"\u001f\u007f"}`,
	`{"s":"\u2028 \u2029  ","k\u2028":1}`,
	`{"n":[0,-0,1,-1,10,123456789012345,1234567890123456,12345678901234567890,1.0,1.50,1e3,1E+3,1e-3,1e-6,1e-7,1e20,1e21,1.5e300,5e-324,-1.5e-9,0.1,1.7976931348623157e308]}`,
	`{"big":1e400}`, `{"s":"\ud83d\ude00"}`, `{"s":"\ud800"}`, `{"s":"😀 中文 ü"}`,
	`[{"a":{"b":{"c":{"d":{"e":[[[[1]]]]}}}}}]`, strings.Repeat(`{"a":`, 64) + "1" + strings.Repeat("}", 64),
	strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), `"plain"`, `"<"`, `true`, `false`, `null`, `-0.0`,
	`{"type":"object","properties":{"q":{"type":"string","description":"a \"quoted\" <b>word</b>\nnext"}},"required":["q"]}`,
	`{"type":"object","properties":{"r":{"type":"string","x-mcp-h\u0065ader":"Region"}}}`,
	`{"properties":{"n":{"properties":{"id":{"x-mcp-header":"Id"}}}}}`, `{"x-mcp-header":"Top"}`,
	`{"properties":[{"x-mcp-header":"A"}],"items":{"x-mcp-header":"B"}}`, `{"properties":{"a":{"items":{"x-mcp-header":"C"}}}}`,
	`{"a":}`, `{"a" 1}`, `[1,]`, `{"a":01}`, `"\x"`, "\"\x01\"", "\"\xff\"", `{"a":1}x`, `[1.]`, `[.5]`, `[1e]`, `nul`,
}

// TestCanonicalIsDecoding: canonical writes what the SDK's decoding and
// marshal's encoding give, for every built-in corpus schema and for
// values that exercise the rules; it refuses what the SDK cannot decode,
// and accepts every corpus schema.
func TestCanonicalIsDecoding(t *testing.T) {
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	cases := canonicalCases
	for _, s := range servers {
		for _, e := range s.Tools {
			cases = append(cases, string(e.InputSchema))
			if len(e.OutputSchema) > 0 {
				cases = append(cases, string(e.OutputSchema))
			}
		}
	}
	refused, annotations := 0, 0
	for k, c := range cases {
		got, ok := canonical([]byte(c))
		want, err := canonicalByDecoding([]byte(c))
		switch {
		case ok && err != nil:
			t.Errorf("canonical(%q) = %s, but the SDK cannot decode it: %v", c, got, err)
		case ok && !bytes.Equal(got, want):
			t.Errorf("canonical(%q)\n = %s\nwant %s", c, got, want)
		case ok && got[0] == '{':
			var v any
			_ = json.Unmarshal(got, &v)
			if hasAnnotation(got) != hasHeaderAnnotation(v) {
				t.Errorf("%s: hasAnnotation %v, hasHeaderAnnotation %v", got, hasAnnotation(got), !hasAnnotation(got))
			}
			if hasAnnotation(got) {
				annotations++
			}
		case !ok:
			refused++
			if k >= len(canonicalCases) {
				t.Errorf("canonical refuses corpus schema %q", c)
			}
		}
	}
	if annotations < 3 {
		t.Errorf("only %d cases hold an annotation", annotations)
	}
	if refused < 10 || refused == len(cases) {
		t.Fatalf("canonical refused %d of %d cases", refused, len(cases))
	}
}

// FuzzCanonical: whatever canonical accepts, the SDK decodes, and marshal
// encodes as canonical wrote it.
func FuzzCanonical(f *testing.F) {
	for _, c := range canonicalCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := canonical(b)
		if !ok {
			return
		}
		want, err := canonicalByDecoding(b)
		if err != nil {
			t.Fatalf("canonical(%q) = %s, but the SDK cannot decode it: %v", b, got, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("canonical(%q)\n = %s\nwant %s", b, got, want)
		}
	})
}

// readAll reads a stream through a listReader whose listBytes awaits the
// given request ids, and returns what the SDK would read.
func readAll(t *testing.T, l *listBytes, stream string, chunk int) string {
	t.Helper()
	lr := newListReader(io.NopCloser(&chunked{s: stream, n: chunk}), l)
	var out strings.Builder
	buf := make([]byte, 7)
	for {
		n, err := lr.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			return out.String()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// chunked reads s n bytes a time.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(c.n, len(p), len(c.s))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// TestListReader: an answer to a tools/list request the client sent comes
// to the SDK with its tools' object schemas as markers that take turns
// back into their canonical bytes, whatever the order of its Members and
// however it is split into reads; annotated input schemas, answers to
// other requests, errors, escaped or repeated keys, invalid JSON and other
// messages come as they were, and so does the white space between them.
func TestListReader(t *testing.T) {
	schema := `{ "type":"object", "properties":{"q":{"type":"string","description":"a<b"}}}`
	annotated := `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`
	long := `a long description, with \"escapes\" \u00e9 and <b>markup</b>, that the SDK would keep in its read buffer`
	answer := `{"result":{"tools":[{"name":"a","outputSchema":{"b":1,"a":2},"description":"` + long + `","inputSchema":` + schema + `},` +
		`{"name":"h","inputSchema":` + annotated + `},{"name":"s","inputSchema":"str"},7],"nextCursor":"c"},"jsonrpc":"2.0","id":3}`
	untouched := []string{
		`{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"a","inputSchema":` + schema + `}]}}`, // not pending
		`{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"m"},"result":{"tools":[{"inputSchema":{}}]}}`,
		`{"jsonrpc":"2.0","id":6,"result":{"tools":[{"inputSchema":{},"inputSchema":{}}]}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"tools":[{"inputSchema":{}}],"tool\u0073":[]}}`,
		`{"jsonrpc":"2.0","id":8,"result":{"tools":[{"inputSchema":{"a":01}}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"tools":1}}`,
	}
	stream := "\n" + answer + "\n\r\n" + strings.Join(untouched, "\n") + "\n"
	for _, chunk := range []int{1, 3, 64, 1 << 20} {
		l := newListBytes()
		for _, id := range []string{"3", "5", "6", "7", "8"} {
			l.sent([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{}}`))
		}
		got := readAll(t, l, stream, chunk)
		lines := strings.Split(got, "\n")
		if len(lines) != len(untouched)+4 || lines[0] != "" || lines[2] != "\r" || strings.Join(lines[3:len(lines)-1], "\n") != strings.Join(untouched, "\n") {
			t.Fatalf("chunk %d: read\n%s", chunk, got)
		}
		var msg struct {
			Result struct {
				Tools []json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(lines[1]), &msg); err != nil {
			t.Fatalf("chunk %d: %v in %s", chunk, err, lines[1])
		}
		var tools []map[string]any
		for _, r := range msg.Result.Tools {
			var m map[string]any
			_ = json.Unmarshal(r, &m)
			tools = append(tools, m)
		}
		in, ok := l.take(tools[0]["inputSchema"])
		want, _ := canonicalByDecoding([]byte(schema))
		if !ok || !bytes.Equal(in.schema, want) {
			t.Errorf("chunk %d: input schema taken as %s, %v; want %s", chunk, in, ok, want)
		}
		if out, ok := l.take(tools[0]["outputSchema"]); !ok || string(out.schema) != `{"a":2,"b":1}` {
			t.Errorf("chunk %d: output schema taken as %s, %v", chunk, out, ok)
		}
		if _, ok := l.take(tools[0]["inputSchema"]); ok {
			t.Errorf("chunk %d: a marker is taken twice", chunk)
		}
		var text string
		_ = json.Unmarshal([]byte(`"`+long+`"`), &text)
		if d, ok := l.take(tools[0]["description"]); !ok || d.text != text {
			t.Errorf("chunk %d: description taken as %q, %v; want %q", chunk, d.text, ok, text)
		}
		if b, _ := json.Marshal(tools[1]["inputSchema"]); !strings.Contains(string(b), "x-mcp-header") {
			t.Errorf("chunk %d: the annotated schema became %s", chunk, b)
		}
		if tools[2]["inputSchema"] != "str" || !strings.HasSuffix(lines[1], `,7],"nextCursor":"c"},"jsonrpc":"2.0","id":3}`) {
			t.Errorf("chunk %d: the answer became %s", chunk, lines[1])
		}
		if len(l.pending) != 1 || !l.pending["8"] { // 8's answer is not JSON
			t.Errorf("chunk %d: still awaiting %v", chunk, l.pending)
		}
	}
}

// TestListBytesMarkers: a marker is only taken from the listBytes that
// wrote it: another connection's, or one a server forges, is a string.
func TestListBytesMarkers(t *testing.T) {
	a, b := newListBytes(), newListBytes()
	m := a.putAside(aside{schema: []byte(`{}`)})
	if _, ok := b.take(m); ok {
		t.Fatal("another connection's marker was taken")
	}
	forged := a.prefix + "999"
	if _, ok := a.take(forged); ok {
		t.Fatal("a forged marker was taken")
	}
	var none *listBytes
	if _, ok := none.take(m); ok {
		t.Fatal("a nil listBytes took a marker")
	}
	a.sent([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	a.forget()
	if _, ok := a.take(m); ok || len(a.pending) != 0 {
		t.Fatalf("forget left %v awaited, a schema to take: %v", a.pending, ok)
	}
}

// TestListReaderPassesLargeValues: a value longer than the SDK's frame
// limit, and a stream that is not JSON-RPC, go through as they are.
func TestListReaderPassesLargeValues(t *testing.T) {
	l := newListBytes()
	l.sent([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	big := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"description":"` + strings.Repeat("x", 5000) + `"}}]}}`
	lr := newListReader(io.NopCloser(strings.NewReader(big+"\n"+big+"\n")), l)
	lr.limit = 1000
	got, err := io.ReadAll(lr)
	if err != nil || string(got) != big+"\n"+big+"\n" {
		t.Fatalf("read %d bytes (%v), want the stream as it was", len(got), err)
	}
	for _, s := range []string{"garbage {\"a\":1}\n", "  42\n{}", "}{"} {
		got := readAll(t, newListBytes(), s, 2)
		if got != s {
			t.Errorf("read %q, want %q", got, s)
		}
	}
}

// TestListBytesRegisterAsTheSDK: a server of every built-in corpus tool,
// a tool with an annotated schema and one whose schema the strict reader
// refuses registers the same definitions, byte for byte, read through a
// listBytes (the in-memory transport) as read by the SDK alone.
func TestListBytesRegisterAsTheSDK(t *testing.T) {
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "all", Version: "1"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
	n := 0
	for _, s := range servers {
		for _, e := range s.Tools {
			n++
			out := json.RawMessage(e.OutputSchema)
			if len(out) == 0 {
				out = nil
			}
			srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d_%s", n, e.Name), Description: e.Description,
				InputSchema: json.RawMessage(e.InputSchema), OutputSchema: out}, noop)
		}
	}
	srv.AddTool(&mcp.Tool{Name: "annotated", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`)}, noop)
	srv.AddTool(&mcp.Tool{Name: "surrogate", InputSchema: json.RawMessage(`{"type":"object","description":"\ud800"}`)}, noop)
	definitions := func(bySDK bool) map[string]string {
		f := newFixture(t, memServer("all"))
		useMemServers(f.m, map[string]*mcp.Server{"all": srv})
		if bySDK {
			f.m.transport = func(*server) (transport, error) {
				st, ct := mcp.NewInMemoryTransports()
				if _, err := srv.Connect(context.Background(), st, nil); err != nil {
					return transport{}, err
				}
				return transport{Transport: ct}, nil
			}
		}
		f.m.Start(f.ctx())
		f.waitAll()
		defs := make(map[string]string)
		for _, tl := range f.reg.Tools() {
			b, err := json.Marshal(tl.Annotations)
			if err != nil {
				t.Fatal(err)
			}
			defs[tl.Name] = fmt.Sprintf("%s|%s|%s|%s|%s|%v|%s|%s", tl.Title, tl.Description, tl.Parameters, tl.Brief,
				tl.Exposure, tl.StartInactive, b, tl.Origin)
		}
		f.m.Close()
		return defs
	}
	want, got := definitions(true), definitions(false)
	if len(want) != n+2 {
		t.Fatalf("the SDK's listing registered %d tools, want %d", len(want), n+2)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("definitions differ (-SDK +listBytes):\n%s", diff)
	}
	// Over HTTP, answered as JSON and as events.
	for _, asJSON := range []bool{true, false} {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: asJSON})
		hs := httptest.NewServer(h)
		f := newFixture(t, ServerConfig{Name: "all", Type: "http", URL: hs.URL})
		f.m.Start(f.ctx())
		f.waitAll()
		got := make(map[string]string)
		for _, tl := range f.reg.Tools() {
			b, _ := json.Marshal(tl.Annotations)
			got[tl.Name] = fmt.Sprintf("%s|%s|%s|%s|%s|%v|%s|%s", tl.Title, tl.Description, tl.Parameters, tl.Brief,
				tl.Exposure, tl.StartInactive, b, tl.Origin)
		}
		f.m.Close()
		hs.Close()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("over HTTP (JSON answers: %v), definitions differ (-SDK in memory +listBytes):\n%s", asJSON, diff)
		}
	}
}

// TestListReaderGrowingAnswers: answers whose markers are longer than the
// schemas they replace, back to back in one read after messages that come
// as they are, each come whole.
func TestListReaderGrowingAnswers(t *testing.T) {
	var stream strings.Builder
	for id := 1; id <= 5; id++ {
		stream.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`)
		fmt.Fprintf(&stream, `{"jsonrpc":"2.0","id":%d,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"b","inputSchema":{}}]}}`, id)
		if id%2 == 0 {
			stream.WriteString("\n")
		}
	}
	for _, chunk := range []int{1, 5, 1 << 20} {
		l := newListBytes()
		for id := 1; id <= 5; id++ {
			l.sent(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		}
		d := json.NewDecoder(strings.NewReader(readAll(t, l, stream.String(), chunk)))
		for id := 1; id <= 5; id++ {
			var note, msg struct {
				ID     int
				Result struct{ Tools []struct{ InputSchema any } }
			}
			if err := d.Decode(&note); err != nil {
				t.Fatalf("chunk %d: before answer %d: %v", chunk, id, err)
			}
			if err := d.Decode(&msg); err != nil || msg.ID != id || len(msg.Result.Tools) != 2 {
				t.Fatalf("chunk %d: answer %d read as %+v (%v)", chunk, id, msg, err)
			}
			for _, tl := range msg.Result.Tools {
				if b, ok := l.take(tl.InputSchema); !ok || string(b.schema) != `{}` {
					t.Fatalf("chunk %d: answer %d: schema %v taken as %s, %v", chunk, id, tl.InputSchema, b, ok)
				}
			}
		}
	}
}

// TestEventBody: in an event stream, the data of an event with one data
// line is read through listBytes.received, whatever the line endings and
// the other fields; events with several data lines, comments and an event
// too long to hold go on as they were, in order, however the stream is
// split into reads.
func TestEventBody(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":%d,"result":{"tools":[{"name":"a","inputSchema":{"b":1,"a":2}}]}}`
	stream := ": a comment\n\n" +
		"event: message\nid: 1\ndata: " + fmt.Sprintf(answer, 1) + "\n\n" +
		"event: message\r\ndata:" + fmt.Sprintf(answer, 2) + "\r\nid: 2\r\n\r\n" +
		"data: " + fmt.Sprintf(answer, 3)[:20] + "\ndata: " + fmt.Sprintf(answer, 3)[20:] + "\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n" +
		"data: " + fmt.Sprintf(answer, 4)
	for _, chunk := range []int{1, 7, 1 << 20} {
		l := newListBytes()
		for id := 1; id <= 4; id++ {
			l.sent(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		}
		b := &eventBody{rewriter: rewriter{r: io.NopCloser(&chunked{s: stream, n: chunk})}, l: l}
		got, err := io.ReadAll(b)
		if err != nil {
			t.Fatal(err)
		}
		var markers []string
		want := stream
		for _, m := range regexp.MustCompile(`"toolshelf-aside:[0-9a-f]+:[0-9]+"`).FindAllString(string(got), -1) {
			markers = append(markers, m)
			want = strings.Replace(want, `{"b":1,"a":2}`, m, 1)
		}
		if len(markers) != 2 || string(got) != want {
			t.Fatalf("chunk %d: read\n%q\nwant\n%q", chunk, got, want)
		}
		for _, m := range markers {
			var v any
			_ = json.Unmarshal([]byte(m), &v)
			if a, ok := l.take(v); !ok || string(a.schema) != `{"a":2,"b":1}` {
				t.Errorf("chunk %d: %s taken as %s, %v", chunk, m, a.schema, ok)
			}
		}
	}
}

// TestJSONBody: a JSON answer is read through listBytes.received whole;
// one longer than maxListBody, and a failed read, go on as they were.
func TestJSONBody(t *testing.T) {
	l := newListBytes()
	l.sent([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	body := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{}}]}}`
	got, err := io.ReadAll(&jsonBody{r: io.NopCloser(strings.NewReader(body)), l: l})
	if err != nil || !strings.Contains(string(got), `"inputSchema":"toolshelf-aside:`) {
		t.Fatalf("read %s (%v)", got, err)
	}
	long := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"description":"` + strings.Repeat("x", maxListBody) + `"}]}}`
	l.sent([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	if got, err := io.ReadAll(&jsonBody{r: io.NopCloser(strings.NewReader(long)), l: l}); err != nil || string(got) != long {
		t.Fatalf("a long body read as %d bytes (%v)", len(got), err)
	}
	failing := io.MultiReader(strings.NewReader(body[:10]), errReader{io.ErrUnexpectedEOF})
	if got, err := io.ReadAll(&jsonBody{r: io.NopCloser(failing), l: l}); err != io.ErrUnexpectedEOF || string(got) != body[:10] {
		t.Fatalf("a failed body read as %q (%v)", got, err)
	}
}
