package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
)

// parseSeeds returns session files to start from, kept short (the fuzzing
// engine minimizes each new input in time quadratic in its length): the
// entries of a session with each kind of entry, a branch and a compaction,
// and files with the problems parse reports.
func parseSeeds(f *testing.F) [][]byte {
	f.Helper()
	now := time.Date(2026, 1, 2, 15, 4, 5, 123_000_000, time.UTC)
	s, err := Create(f.TempDir(), &Options{Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	call := &llm.ToolCall{ID: "c1", Name: "t", Arguments: json.RawMessage(`{"q":"x"}`)}
	var first Entry
	for i, m := range []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("p")}, Sections: llm.Sections{llm.Set("a", "1")},
			ToolsAdded: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`{"type":"object"}`)}}},
		llm.UserText("hi", 1),
		{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: call}}, StopReason: llm.StopToolUse, Timestamp: 2},
		{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "t", Content: []llm.Part{llm.Text("r")}, Timestamp: 3},
	} {
		e, err := s.Append(m)
		if err != nil {
			f.Fatal(err)
		}
		if i == 1 {
			first = e
		}
	}
	if err := s.SetLeaf(first.ID); err != nil {
		f.Fatal(err)
	}
	if _, err := s.AppendCompaction("sum", first.ID); err != nil {
		f.Fatal(err)
	}
	if _, err := s.AppendData("label", map[string]any{"x": 1}); err != nil {
		f.Fatal(err)
	}
	if err := s.Close(); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(s.Path())
	if err != nil {
		f.Fatal(err)
	}
	// The header with each entry, the user message with the compaction
	// that keeps it, and the cuts of one.
	lines := bytes.SplitAfter(valid, []byte("\n"))
	h := string(lines[0])
	var seeds [][]byte
	for _, l := range lines[1:] {
		seeds = append(seeds, []byte(h+string(l)))
	}
	user := h + string(lines[2])
	seeds = append(seeds, []byte(user+string(lines[5])), []byte(strings.TrimSuffix(user, "\n")), []byte(user[:len(user)-9]))
	for _, s := range []string{
		"", "\n", "{}", "null\n", "\xff\xfe\x00", strings.TrimSuffix(h, "\n"), strings.Replace(h, `"version":1`, `"version":2`, 1),
		h + "\n" + h, h + h, h + "\n\n",
		h + `{"type":"message","id":"a","parentId":"zz","timestamp":"2026-01-02T15:04:05Z","message":{"role":"user","content":"x"}}` + "\n",
		h + `{"type":"message","id":"a","timestamp":"2026-01-02T15:04:05Z","message":{"role":"user","content":"x"}}` + "\n" +
			`{"type":"message","id":"a","timestamp":"2026-01-02T15:04:05Z","message":{"role":"user","content":"y"}}` + "\n",
		h + `{"type":"compaction","id":"c","timestamp":"2026-01-02T15:04:05+14:00","summary":"s","firstKeptId":"c","systemMessage":{"role":"user"}}`,
		h + `{"type":"message","id":"b","parentId":"","timestamp":"0000-01-01T00:00:00.000000001Z","message":{"role":"system","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"sections":{"x":null,"x":"y"}}}` + "\n",
		h + `{"type":"message","id":"d","timestamp":"2026-01-02T15:04:05Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"n","arguments":"\"\\\"q\\\"\""}]}}`,
		h + `{"type":"x","id":"e","timestamp":"2026-01-02T15:04:05Z","data":[1,{}]}` + "\n" + `{"type":"","id":"f"}` + "\n",
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// withoutRaw returns copies of entries without Raw for the known types:
// entries written again are other lines, so their Raw differs.
func withoutRaw(es []Entry) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = e.clone()
		if e.Type == TypeMessage || e.Type == TypeCompaction {
			out[i].Raw = nil
		}
	}
	return out
}

// FuzzParse reads arbitrary bytes as a session file, in memory: the
// parser behind Open, without the file system, so it runs thousands of
// inputs a second (FuzzOpen covers what Open does to the file). parse must
// not panic. A failure is a *FormatError naming the file and a line, with
// what precedes the bad line when there was a header, and that part is
// itself a session that reads back with the same entries (so a fork at
// the last intact entry keeps them). A success accounts for every byte
// (the entries and a torn tail that is not JSON and has no newline) and
// is a tree: unique ids, parents earlier in the file, the leaf's branch
// from a root. Its header and entries written out again read back the
// same, with the same conversation; and an entry appended as Append
// writes it (after a newline when the file lacks its last one) reads back
// after them.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds(f) {
		f.Add(s)
	}
	const path = "fuzz.jsonl"
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parse(path, data)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Path != path || fe.Line < 1 || fe.Err == nil {
				t.Fatalf("error %v (%T) is not a *FormatError naming the file and a line", err, err)
			}
			if (p == nil) != (fe.Line == 1) {
				t.Fatalf("line %d, but what precedes it is %v", fe.Line, p)
			}
			if p == nil {
				return
			}
			if fe.Intact != len(p.entries) || fe.LastIntact != p.leaf() || p.torn != 0 {
				t.Fatalf("error says %d intact up to %q; %d entries up to %q, %d torn", fe.Intact, fe.LastIntact, len(p.entries), p.leaf(), p.torn)
			}
			intact, err := parse(path, data[:p.end])
			if err != nil || intact.torn != 0 {
				t.Fatalf("the part before line %d does not read (%v)", fe.Line, err)
			}
			if diff := cmp.Diff(p.entries, intact.entries); diff != "" {
				t.Fatalf("the part before line %d reads differently (-before the error +alone):\n%s", fe.Line, diff)
			}
			return
		}

		if p.end+p.torn != int64(len(data)) {
			t.Fatalf("%d bytes read and %d torn of %d", p.end, p.torn, len(data))
		}
		if tail := data[p.end:]; p.torn > 0 && (bytes.IndexByte(tail, '\n') >= 0 || json.Valid(tail)) {
			t.Fatalf("torn tail %q", tail)
		}
		if p.needNewline && (p.torn > 0 || data[len(data)-1] == '\n') {
			t.Fatal("needNewline, but the file ends with a newline or a torn line")
		}
		for i, e := range p.entries {
			if j, ok := p.index[e.ID]; !ok || j != i {
				t.Fatalf("entry %d (%q) is indexed at %d", i, e.ID, j)
			}
			if j, ok := p.index[e.ParentID]; e.ParentID != "" && (!ok || j >= i) {
				t.Fatalf("entry %q has parent %q, which is not earlier", e.ID, e.ParentID)
			}
		}
		if len(p.index) != len(p.entries) {
			t.Fatalf("%d ids for %d entries", len(p.index), len(p.entries))
		}
		if branch := p.branch(p.leaf()); len(p.entries) > 0 &&
			(p.entries[branch[0]].ParentID != "" || p.entries[branch[len(branch)-1]].ID != p.leaf()) {
			t.Fatalf("branch %v does not run from a root to the leaf", branch)
		}
		msgs := newSession(path, nil, p, nil).Messages()

		// Written out again.
		var b bytes.Buffer
		line, err := p.header.MarshalJSON()
		if err != nil {
			t.Fatalf("encoding the header: %v", err)
		}
		b.Write(append(line, '\n'))
		for _, e := range p.entries {
			line, err := e.MarshalJSON()
			if err != nil {
				t.Fatalf("encoding entry %s: %v", e.ID, err)
			}
			b.Write(append(line, '\n'))
		}
		again, err := parse(path, b.Bytes())
		if err != nil || again.torn != 0 {
			t.Fatalf("the entries written out again do not read (%v):\n%s", err, b.Bytes())
		}
		if diff := cmp.Diff(p.header, again.header); diff != "" {
			t.Fatalf("header (-first +again):\n%s", diff)
		}
		if diff := cmp.Diff(withoutRaw(p.entries), withoutRaw(again.entries)); diff != "" {
			t.Fatalf("entries (-first +again):\n%s", diff)
		}
		if diff := cmp.Diff(msgs, newSession(path, nil, again, nil).Messages()); diff != "" {
			t.Fatalf("messages (-first +again):\n%s", diff)
		}

		// Appended.
		var id string
		for n := 0; ; n++ {
			id = fmt.Sprintf("fuzz%04d", n)
			if _, taken := p.index[id]; !taken {
				break
			}
		}
		e := Entry{Type: TypeMessage, ID: id, ParentID: p.leaf(), Timestamp: now, Message: &llm.Message{Role: llm.RoleUser,
			Content: []llm.Part{llm.Text("appended")}, Timestamp: 1}}
		line, err = e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		file := bytes.Clone(data[:p.end])
		if p.needNewline {
			file = append(file, '\n')
		}
		file = append(append(file, line...), '\n')
		grown, err := parse(path, file)
		if err != nil || grown.torn != 0 || grown.needNewline {
			t.Fatalf("the file with an appended entry does not read (%v):\n%s", err, file)
		}
		var stored Entry
		if err := stored.UnmarshalJSON(line); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(append(p.entries[:len(p.entries):len(p.entries)], stored), grown.entries); diff != "" {
			t.Fatalf("entries after an append (-want +got):\n%s", diff)
		}
	})
}
