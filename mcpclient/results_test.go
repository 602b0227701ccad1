package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tool"
)

func TestResults(t *testing.T) {
	t.Parallel()
	f := newFixture(t, memServer("r"))
	useMemServers(f.m, map[string]*mcp.Server{"r": mcptest.NewServer("r", "")})
	f.m.Start(f.ctx())
	f.waitAll()

	mixed := f.call("mcp__r__mixed", `{}`)
	want := &tool.Result{Content: []tool.Content{
		{Text: "hello"},
		{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
		{Text: "[audio: audio/wav, 8 bytes, not shown]"},
		{Text: "[resource link: a.txt <file:///tmp/a.txt> (text/plain) A file.]"},
		{Text: "[resource <file:///tmp/b.txt> (text/plain)]\ncontents of b"},
		{Text: "[resource <file:///tmp/c.bin>, 3 bytes of binary data, not shown]"},
	}}
	if diff := cmp.Diff(want, mixed); diff != "" {
		t.Errorf("mixed (-want +got):\n%s", diff)
	}

	structured := f.call("mcp__r__structured", `{}`)
	want = &tool.Result{Content: []tool.Content{{Text: `{"answer":42}`}}, Structured: json.RawMessage(`{"answer":42}`)}
	if diff := cmp.Diff(want, structured); diff != "" {
		t.Errorf("structured (-want +got):\n%s", diff)
	}

	failed := f.call("mcp__r__fail", `{}`)
	if !failed.IsError || text(failed) != "it failed" {
		t.Errorf("fail = %+v", failed)
	}

	// A JSON-RPC error (bad arguments) is an error result; the session stays.
	bad := f.call("mcp__r__echo", `{"text": 7}`)
	if !bad.IsError || !strings.Contains(text(bad), "rejected") {
		t.Errorf("bad arguments = %+v", bad)
	}
	if f.status("r").State != Connected {
		t.Errorf("an error answer disconnected the server")
	}
}

func TestTruncation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, memServer("r"))
	dir := t.TempDir() + "/out"
	f.m.opts.OutputDir = dir
	useMemServers(f.m, map[string]*mcp.Server{"r": mcptest.NewServer("r", "")})
	f.m.Start(f.ctx())
	f.waitAll()

	small := f.call("mcp__r__big", fmt.Sprintf(`{"n":%d}`, MaxOutputBytes))
	if got := text(small); len(got) != MaxOutputBytes || strings.HasPrefix(got, "Warning") {
		t.Errorf("an output of exactly %d bytes was changed: %d bytes", MaxOutputBytes, len(got))
	}

	const n = 100_001
	r := f.call("mcp__r__big", fmt.Sprintf(`{"n":%d}`, n))
	if len(r.Content) != 1 {
		t.Fatalf("%d parts", len(r.Content))
	}
	out := r.Content[0].Text
	first, rest, _ := strings.Cut(out, "\n")
	var path string
	var kept int
	if _, err := fmt.Sscanf(first, "Warning: output truncated from 100001 to %d bytes; the full output is in %s", &kept, &path); err != nil {
		t.Fatalf("first line %q: %v", first, err)
	}
	if len(out) > MaxOutputBytes {
		t.Errorf("truncated output is %d bytes, over %d", len(out), MaxOutputBytes)
	}
	if !strings.HasPrefix(rest, "<start>") || !strings.HasSuffix(rest, "<end>") || !strings.Contains(rest, "[…]") {
		t.Errorf("the head or tail is missing: %.60q … %.60q", rest, rest[len(rest)-60:])
	}
	if got := len(rest) - len(omitted); got != kept {
		t.Errorf("the note says %d bytes kept; %d were", kept, got)
	}
	if !utf8Valid(rest) {
		t.Errorf("the truncated text cuts a rune")
	}
	full, err := readFileMode(path)
	if err != nil {
		t.Fatal(err)
	}
	if full.text != mcptest.BigText(n) {
		t.Errorf("saved file has %d bytes, want the full %d", len(full.text), n)
	}
	if full.mode != 0o600 {
		t.Errorf("file mode %o, want 600", full.mode)
	}
	if full.dirMode != 0o700 {
		t.Errorf("folder mode %o, want 700", full.dirMode)
	}
	if !strings.HasPrefix(path, dir) {
		t.Errorf("saved to %s, not under %s", path, dir)
	}
}

func TestTruncateMiddleSaveError(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("ab", MaxOutputBytes)
	out := truncateMiddle(s, "", errors.New("disk full"))
	if !strings.HasPrefix(out, fmt.Sprintf("Warning: output truncated from %d to ", len(s))) ||
		!strings.Contains(strings.SplitN(out, "\n", 2)[0], "could not be saved: disk full") {
		t.Errorf("note = %q", strings.SplitN(out, "\n", 2)[0])
	}
	if len(out) > MaxOutputBytes {
		t.Errorf("%d bytes", len(out))
	}
}
