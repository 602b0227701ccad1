package session_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// fuzzSeedSession returns the content of a session with every kind of
// message, a branch, a compaction and an entry of an unknown type.
func fuzzSeedSession(f *testing.F) []byte {
	f.Helper()
	s, err := session.Create(f.TempDir(), clock(epoch))
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	var last session.Entry
	for i, m := range everyKind() {
		e, err := s.Append(m)
		if err != nil {
			f.Fatal(err)
		}
		if i == 2 {
			last = e
		}
	}
	if err := s.SetLeaf(last.ID); err != nil {
		f.Fatal(err)
	}
	if _, err := s.Append(llm.UserText("on a branch", 9)); err != nil {
		f.Fatal(err)
	}
	if _, err := s.AppendCompaction("summary <&>", last.ID); err != nil {
		f.Fatal(err)
	}
	if _, err := s.Append(llm.UserText("after", 10)); err != nil {
		f.Fatal(err)
	}
	if err := s.Close(); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		f.Fatal(err)
	}
	return append(data, `{"type":"label","id":"1abe1000","parentId":null,"timestamp":"2026-01-02T00:00:00+02:00","x":[1,{}]}`+"\n"...)
}

const fuzzHeader = `{"type":"session","version":1,"id":"0123456789abcdef","timestamp":"2026-01-02T15:04:05.123Z"}` + "\n"

// FuzzOpen opens arbitrary file contents. Open must not panic; when it
// fails, the file is unchanged; when it succeeds, the file lost only the
// torn tail it reports, the header and entries written out again read
// back the same, and the session accepts an append that a reopen sees.
//
// An input takes about a millisecond (files, fsync), so the fuzzing
// engine's default of 60 seconds to minimize each new interesting input
// dominates short runs; pass -fuzzminimizetime=3s for more executions.
func FuzzOpen(f *testing.F) {
	valid := fuzzSeedSession(f)
	lines := bytes.SplitAfter(valid, []byte("\n"))
	entry := `{"type":"message","id":"aaaa0000","parentId":null,"timestamp":"2026-01-02T15:04:05.123Z","message":{"role":"user","content":[{"type":"text","text":"%s"}],"timestamp":1}}`
	for _, seed := range [][]byte{
		valid,
		valid[:len(valid)-1],                    // no final newline
		valid[:len(valid)-20],                   // torn
		bytes.Join(lines[:3], nil),              // header and two entries
		append(bytes.Join(lines[:2], nil), '{'), // torn after one entry
		bytes.Join(append(lines[:2:2], lines[3:]...), nil), // a missing parent
		[]byte(fuzzHeader),
		[]byte(strings.TrimSuffix(fuzzHeader, "\n")),
		[]byte(strings.Replace(fuzzHeader, `"version":1`, `"version":2`, 1)),
		[]byte(fuzzHeader + strings.Replace(entry, "%s", "\xff\xfe invalid \xc3\x28 UTF-8", 1) + "\n"),
		[]byte(fuzzHeader + strings.Replace(entry, "%s", strings.Repeat("huge ", 20_000), 1) + "\n"),
		[]byte(fuzzHeader + strings.Replace(entry, "%s", `\ud800 \u0000 \u2028`, 1)),
		[]byte(fuzzHeader + strings.Repeat("x", 70_000)), // a huge torn line
		[]byte(fuzzHeader + "\n" + fuzzHeader),
		[]byte(fuzzHeader + `{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-02T15:04:05+14:00","message":{"role":"system","content":[{"type":"text","text":""},{"type":"text","text":"b"}],"sections":{"a":null,"a":"x"},"toolsAdded":[{"name":"t","description":"","parameters":{ "z" : 1 , "a":[ ] }}],"timestamp":2}}` + "\n"),
		[]byte(fuzzHeader + `{"type":"message","id":"b","parentId":"","timestamp":"0000-01-01T00:00:00.000000001Z","message":{"role":"user","content":"text","sections":{"x":"y"},"details":{ "k" : 1 }}}` + "\n"),
		// Tool call arguments that are a JSON string holding a JSON string.
		[]byte(fuzzHeader + `{"type":"message","id":"d","timestamp":"2026-01-02T15:04:05Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"n","arguments":"\"\\\"q\\\"\""}]}}` + "\n"),
		[]byte(fuzzHeader + `{"type":"compaction","id":"c","timestamp":"2026-01-02T15:04:05Z","summary":"s","firstKeptId":null,"systemMessage":null}`),
		{},
		[]byte("\n"),
		[]byte("{}"),
		[]byte("null\n"),
		[]byte("\xff\xfe\x00"),
	} {
		f.Add(seed)
	}
	// One directory for every input: a worker runs them one at a time.
	dir := f.TempDir()
	// Byte slices compared in one go: cmp's element-wise comparison is
	// most of the time of an input otherwise.
	// (json.RawMessage included).
	fast := cmp.Comparer(bytes.Equal)
	// diff is cmp.Diff behind a faster check for the common case.
	diff := func(x, y any, opts ...cmp.Option) string {
		if reflect.DeepEqual(x, y) {
			return ""
		}
		return cmp.Diff(x, y, append(opts, fast)...)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.jsonl")
		writeFile(t, path, data)
		s, err := session.Open(path, nil)
		if err != nil {
			if got := readFile(t, path); !bytes.Equal(got, data) {
				t.Fatalf("Open failed (%v) and changed the file", err)
			}
			return
		}
		defer s.Close()
		if got := readFile(t, path); !bytes.Equal(got, data[:int64(len(data))-s.Recovered()]) {
			t.Fatalf("Open recovered %d bytes, but the file is now %q", s.Recovered(), got)
		}
		entries := s.Entries()
		s.Branch()
		msgs := s.Messages()

		// Write the header and the entries again and read them back.
		var b bytes.Buffer
		line, err := s.Header().MarshalJSON()
		if err != nil {
			t.Fatalf("encoding the header: %v", err)
		}
		b.Write(append(line, '\n'))
		for _, e := range entries {
			line, err := e.MarshalJSON()
			if err != nil {
				t.Fatalf("encoding entry %s: %v", e.ID, err)
			}
			b.Write(append(line, '\n'))
		}
		path2 := filepath.Join(dir, "again.jsonl")
		writeFile(t, path2, b.Bytes())
		s2, err := session.Open(path2, nil)
		if err != nil {
			t.Fatalf("the entries do not read back: %v\n%s", err, b.Bytes())
		}
		defer s2.Close()
		if diff := diff(s.Header(), s2.Header()); diff != "" {
			t.Errorf("header (-first +second):\n%s", diff)
		}
		// The lines differ, so Raw does, except for unknown types.
		if diff := diff(withoutRaw(s.Entries()), withoutRaw(s2.Entries())); diff != "" {
			t.Errorf("entries (-first +second):\n%s", diff)
		}
		if diff := diff(msgs, s2.Messages()); diff != "" {
			t.Errorf("messages (-first +second):\n%s", diff)
		}

		// The recovered file stays appendable.
		e, err := s.Append(llm.UserText("appended", 1))
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s3, err := session.Open(path, nil)
		if err != nil {
			t.Fatalf("reopening after an append: %v", err)
		}
		defer s3.Close()
		if diff := diff(append(entries, e), s3.Entries()); diff != "" {
			t.Errorf("entries after an append (-want +got):\n%s", diff)
		}
	})
}

// withoutRaw clears the Raw of the entries of known types.
func withoutRaw(es []session.Entry) []session.Entry {
	for i := range es {
		if es[i].Type == session.TypeMessage || es[i].Type == session.TypeCompaction {
			es[i].Raw = nil
		}
	}
	return es
}
