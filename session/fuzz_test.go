package session_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// fuzzSeedSession returns the content of a session with every kind of
// message, a branch, a compaction and an entry of an unknown type.
func fuzzSeedSession(f testing.TB) []byte {
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

// openInputs are session files for FuzzOpen and TestOpenInputs: whole
// sessions, cut and torn ones, headers, odd entries and garbage.
func openInputs(tb testing.TB) [][]byte {
	valid := fuzzSeedSession(tb)
	lines := bytes.SplitAfter(valid, []byte("\n"))
	entry := `{"type":"message","id":"aaaa0000","parentId":null,"timestamp":"2026-01-02T15:04:05.123Z","message":{"role":"user","content":[{"type":"text","text":"%s"}],"timestamp":1}}`
	return [][]byte{
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
	}
}

// maxOpenSeed is the longest input FuzzOpen starts from. The fuzzing
// engine minimizes each input that finds new code in time quadratic in its
// length, which for the whole sessions above takes the minute it is
// allowed; TestOpenInputs checks the longer inputs instead.
const maxOpenSeed = 512

// opener opens session files on disk and checks what Open does to them:
// Open must not panic; when it fails, the file is unchanged; when it
// succeeds, the file lost only the torn tail it reports, and the session
// accepts an append that a reopen sees after the entries it had. Each file
// is new (rewriting one in place makes ext4 flush it on close) and the
// session never calls fsync(2), so that an input costs a fraction of a
// millisecond.
type opener struct {
	path string
	opts *session.Options
}

func newOpener(tb testing.TB) *opener {
	return &opener{path: filepath.Join(tb.TempDir(), "fuzz.jsonl"), opts: &session.Options{Sync: session.SyncNoneForTest}}
}

// Byte slices compared in one go: cmp's element-wise comparison is most
// of the time of an input otherwise (json.RawMessage included).
var fastBytes = cmp.Comparer(bytes.Equal)

// diff is cmp.Diff behind a faster check for the common case.
func diff(x, y any) string {
	if reflect.DeepEqual(x, y) {
		return ""
	}
	return cmp.Diff(x, y, fastBytes)
}

func (o *opener) check(t *testing.T, data []byte) {
	t.Helper()
	if err := os.Remove(o.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	writeFile(t, o.path, data)
	s, err := session.Open(o.path, o.opts)
	if err != nil {
		if got := readFile(t, o.path); !bytes.Equal(got, data) {
			t.Fatalf("Open failed (%v) and changed the file", err)
		}
		return
	}
	defer s.Close()
	if got := readFile(t, o.path); !bytes.Equal(got, data[:int64(len(data))-s.Recovered()]) {
		t.Fatalf("Open recovered %d bytes, but the file is now %q", s.Recovered(), got)
	}
	entries := s.Entries()
	s.Branch()
	s.Messages()

	// The recovered file stays appendable.
	e, err := s.Append(llm.UserText("appended", 1))
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := session.Open(o.path, &session.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reopening after an append: %v", err)
	}
	if s2.Recovered() != 0 {
		t.Fatalf("the reopened file has a torn tail of %d bytes", s2.Recovered())
	}
	if diff := diff(append(entries, e), s2.Entries()); diff != "" {
		t.Errorf("entries after an append (-want +got):\n%s", diff)
	}
}

// FuzzOpen opens arbitrary file contents on disk, for what Open does to
// the file (see opener); FuzzParse fuzzes the parser behind it in memory,
// with the round trips.
func FuzzOpen(f *testing.F) {
	for _, in := range openInputs(f) {
		if len(in) <= maxOpenSeed {
			f.Add(in)
		}
	}
	o := newOpener(f) // one file for every input: a worker runs them one at a time
	f.Fuzz(o.check)
}

// TestOpenInputs checks every input of openInputs as FuzzOpen does, the
// ones too long to start fuzzing from included.
func TestOpenInputs(t *testing.T) {
	o := newOpener(t)
	for i, in := range openInputs(t) {
		t.Run(strconv.Itoa(i), func(t *testing.T) { o.check(t, in) })
	}
}
