package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// sample writes a closed session with three entries and returns its path
// and lines (each with its newline).
func sample(t *testing.T) (string, []string) {
	t.Helper()
	s := newSession(t)
	mustAppend(t, s, llm.UserText("one", 1))
	mustAppend(t, s, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("two")}, Timestamp: 2})
	mustAppend(t, s, llm.UserText("three", 3))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.Path(), strings.SplitAfter(strings.TrimSuffix(string(readFile(t, s.Path())), "\n"), "\n")
}

func TestOpenErrors(t *testing.T) {
	path, lines := sample(t)
	header, e1, e2, e3 := lines[0], lines[1], lines[2], lines[3]
	id := func(line string) string {
		var e session.Entry
		if err := e.UnmarshalJSON([]byte(line)); err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	tests := []struct {
		name    string
		content string
		line    int
		want    string // in the error
		is      error
	}{
		{"corrupt middle line", header + e1 + "{garbage\n" + e2, 3, "invalid JSON", nil},
		{"truncated middle line", header + e1 + e2[:20] + "\n" + e3, 3, "invalid JSON", nil},
		{"empty middle line", header + e1 + "\n" + e2, 3, "empty line", nil},
		{"unknown version", strings.Replace(header, `"version":1`, `"version":2`, 1) + e1, 1, "version 2", session.ErrUnsupportedVersion},
		{"version as a string", strings.Replace(header, `"version":1`, `"version":"1"`, 1), 1, `version "1"`, session.ErrUnsupportedVersion},
		{"no version", strings.Replace(header, `"version":1,`, ``, 1), 1, "no version", nil},
		{"missing header", e1 + e2, 1, "not a session header", nil},
		{"empty file", "", 1, "no session header", nil},
		{"torn header", header[:30], 1, "no session header", nil},
		{"second header", header + e1 + header, 3, "second session header", nil},
		{"unknown parentId", header + e1 + e3, 3, fmt.Sprintf("parentId %q", id(e2)), session.ErrUnknownEntry},
		{"parent after child", header + e2 + e1, 2, "parentId", session.ErrUnknownEntry},
		{"duplicate id", header + e1 + e1, 3, "duplicate entry id", nil},
		{"entry without id", header + strings.Replace(e1, `"id":"`+id(e1)+`"`, `"id":""`, 1), 2, "no id", nil},
		{"bad timestamp", header + strings.Replace(e1, `"timestamp":"2026`, `"timestamp":"yesterday`, 1), 2, "not RFC 3339", nil},
		{"invalid message", header + strings.Replace(e1, `"role":"user"`, `"role":"narrator"`, 1), 2, "narrator", nil},
		{"message entry without message", header + `{"type":"message","id":"abcd0123","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z"}` + "\n", 2, "without a message", nil},
		{"not an object", header + "[1,2]\n", 2, "invalid JSON", nil},
		{"null line", header + "null\n", 2, "not a JSON object", nil},
		{"compaction keeping a stranger", header + e1 + `{"type":"compaction","id":"c0000000","parentId":"` + id(e1) + `","timestamp":"2026-01-02T00:00:00.000Z","summary":"s","firstKeptId":"zzz"}` + "\n", 3, "firstKeptId", nil},
		{"invalid final line without newline is not torn when JSON", header + e1 + `{"type":"message"}`, 3, "no id", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, path, []byte(tc.content))
			_, err := session.Open(path, nil)
			if err == nil {
				t.Fatal("Open succeeded")
			}
			var fe *session.FormatError
			if !errors.As(err, &fe) || fe.Path != path || fe.Line != tc.line {
				t.Errorf("error %v, want a FormatError for %s line %d", err, path, tc.line)
			}
			msg := err.Error()
			if !strings.Contains(msg, path) || !strings.Contains(msg, fmt.Sprintf("line %d", tc.line)) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want the path, line %d and %q", msg, tc.line, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
			if got := readFile(t, path); string(got) != tc.content {
				t.Errorf("Open changed the file:\n got %q\nwant %q", got, tc.content)
			}
		})
	}
}

func TestOpenMissingFile(t *testing.T) {
	_, err := session.Open(filepath.Join(t.TempDir(), "none.jsonl"), nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want ErrNotExist", err)
	}
}

func TestOpenTornLine(t *testing.T) {
	path, lines := sample(t)
	complete := strings.Join(lines, "")
	for _, torn := range []string{
		lines[3][:1],
		lines[3][:len(lines[3])/2],
		lines[3][:len(lines[3])-2], // all but the closing braces
		" ",
		"\xff\xfe",
	} {
		t.Run(fmt.Sprintf("%d bytes", len(torn)), func(t *testing.T) {
			content := strings.Join(lines[:3], "") + torn
			writeFile(t, path, []byte(content))
			s, err := session.Open(path, clock(epoch))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Recovered() != int64(len(torn)) {
				t.Errorf("Recovered() = %d, want %d", s.Recovered(), len(torn))
			}
			if got := readFile(t, path); string(got) != strings.Join(lines[:3], "") {
				t.Errorf("file not truncated to its complete lines:\n%q", got)
			}
			if len(s.Entries()) != 2 {
				t.Fatalf("%d entries, want 2", len(s.Entries()))
			}
			e := mustAppend(t, s, llm.UserText("after recovery", 9))
			r := reopen(t, s)
			if r.Recovered() != 0 {
				t.Errorf("second Open recovered %d bytes", r.Recovered())
			}
			if got := ids(r.Entries()); len(got) != 3 || got[2] != e.ID || r.Leaf() != e.ID {
				t.Errorf("reopened entries %v, leaf %q; want 3 ending with %q", got, r.Leaf(), e.ID)
			}
		})
	}
	// Untouched, the complete file recovers nothing.
	writeFile(t, path, []byte(complete))
	s, err := session.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Recovered() != 0 || len(s.Entries()) != 3 {
		t.Errorf("complete file: recovered %d, %d entries", s.Recovered(), len(s.Entries()))
	}
}

func TestOpenFinalLineWithoutNewline(t *testing.T) {
	path, lines := sample(t)
	for _, n := range []int{1, 4} { // header only, and entries
		t.Run(fmt.Sprintf("%d lines", n), func(t *testing.T) {
			content := strings.TrimSuffix(strings.Join(lines[:n], ""), "\n")
			writeFile(t, path, []byte(content))
			s, err := session.Open(path, clock(epoch))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Recovered() != 0 || len(s.Entries()) != n-1 {
				t.Errorf("recovered %d, %d entries; want 0, %d", s.Recovered(), len(s.Entries()), n-1)
			}
			e := mustAppend(t, s, llm.UserText("next", 9))
			got := readFile(t, path)
			if !bytes.HasPrefix(got, []byte(content+"\n")) || bytes.Count(got, []byte("\n")) != n+1 || got[len(got)-1] != '\n' {
				t.Errorf("the append is not on its own line:\n%s", got)
			}
			r := reopen(t, s)
			if len(r.Entries()) != n || r.Leaf() != e.ID {
				t.Errorf("reopened: %d entries, leaf %q", len(r.Entries()), r.Leaf())
			}
		})
	}
}

func TestOpenUnknownEntryType(t *testing.T) {
	path, lines := sample(t)
	var e2 session.Entry
	if err := e2.UnmarshalJSON([]byte(lines[2])); err != nil {
		t.Fatal(err)
	}
	label := `{"type":"label","id":"1abe1000","parentId":"` + e2.ID + `","timestamp":"2026-01-02T00:00:00.000+02:00","label":{"text":"bookmark","color":7},"message":"not a message"}`
	writeFile(t, path, []byte(strings.Join(lines[:3], "")+label+"\n"+
		strings.Replace(lines[3], `"parentId":"`+e2.ID+`"`, `"parentId":"1abe1000"`, 1)))
	s, err := session.Open(path, clock(epoch))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entries := s.Entries()
	if len(entries) != 4 || entries[2].Type != "label" || string(entries[2].Raw) != label || entries[2].ParentID != e2.ID {
		t.Fatalf("unknown entry not kept: %+v", entries)
	}
	if diff := cmp.Diff([]string{"user:one", "assistant:two", "user:three"}, texts(s.Messages())); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	// Forks copy it verbatim.
	f, err := session.Fork(path, "", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !bytes.Contains(readFile(t, f.Path()), []byte("\n"+label+"\n")) {
		t.Errorf("the fork lost the unknown entry:\n%s", readFile(t, f.Path()))
	}
	// And its encoding is its raw line.
	b, err := entries[2].MarshalJSON()
	if err != nil || string(b) != label {
		t.Errorf("MarshalJSON = %s, %v; want the raw line", b, err)
	}
}

func TestOpenReadOnly(t *testing.T) {
	path, lines := sample(t)
	content := strings.Join(lines, "") + "\n" + `{"type":"mess`
	writeFile(t, path, []byte(content))
	s, err := session.Open(path, &session.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Recovered() != int64(len(`{"type":"mess`)) || len(s.Entries()) != 3 {
		t.Errorf("recovered %d, %d entries", s.Recovered(), len(s.Entries()))
	}
	if diff := cmp.Diff([]string{"user:one", "assistant:two", "user:three"}, texts(s.Messages())); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if _, err := s.Append(llm.UserText("no", 1)); !errors.Is(err, session.ErrReadOnly) {
		t.Errorf("Append: %v, want ErrReadOnly", err)
	}
	if _, err := s.AppendCompaction("no", ""); !errors.Is(err, session.ErrReadOnly) {
		t.Errorf("AppendCompaction: %v, want ErrReadOnly", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if got := readFile(t, path); string(got) != content {
		t.Errorf("a read-only Open changed the file:\n%q", got)
	}
}
