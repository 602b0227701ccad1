package session_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

func TestList(t *testing.T) {
	dir := t.TempDir()
	create := func(at time.Time, msgs ...llm.Message) *session.Session {
		t.Helper()
		s, err := session.Create(dir, clock(at))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			mustAppend(t, s, m)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	long := strings.Repeat("ü", 100)
	oldest := create(epoch, llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("prompt")}},
		llm.UserText("  hello\n\n  world ", 1), llm.UserText("second", 2))
	middle := create(epoch.Add(time.Hour), llm.UserText(long, 1))
	newest := create(epoch.Add(2 * time.Hour))
	fork, err := session.Fork(oldest.Path(), "", dir, clock(epoch.Add(3*time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	fork.Close()
	writeFile(t, filepath.Join(dir, "broken.jsonl"), []byte("not a session\n"))
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("ignored"))
	if err := os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}

	infos, err := session.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	info := func(s *session.Session, entries int, title string) session.Info {
		h := s.Header()
		return session.Info{Path: s.Path(), ID: h.ID, Timestamp: h.Timestamp, ParentSession: h.ParentSession,
			ParentEntry: h.ParentEntry, Entries: entries, FirstUserText: title}
	}
	want := []session.Info{
		info(fork, 3, "hello world"),
		info(newest, 0, ""),
		info(middle, 1, strings.Repeat("ü", 79)+"…"),
		info(oldest, 3, "hello world"),
		{Path: filepath.Join(dir, "broken.jsonl")},
	}
	if diff := cmp.Diff(want, infos, cmpopts.IgnoreFields(session.Info{}, "Err")); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if len(infos) == 5 {
		var fe *session.FormatError
		if !errors.As(infos[4].Err, &fe) {
			t.Errorf("broken file's Err = %v, want a FormatError", infos[4].Err)
		}
		for _, in := range infos[:4] {
			if in.Err != nil {
				t.Errorf("%s: %v", in.Path, in.Err)
			}
		}
		if n := utf8.RuneCountInString(infos[2].FirstUserText); n != 80 {
			t.Errorf("title of %d runes, want 80", n)
		}
		if infos[0].ParentSession != oldest.Path() {
			t.Errorf("fork's parent %q, want %q", infos[0].ParentSession, oldest.Path())
		}
	}

	latest, err := session.Latest(dir)
	if err != nil || latest != fork.Path() {
		t.Errorf("Latest = %q, %v; want %q", latest, err, fork.Path())
	}
}

func TestLatestNone(t *testing.T) {
	empty := t.TempDir()
	broken := t.TempDir()
	writeFile(t, filepath.Join(broken, "x.jsonl"), []byte("{}\n"))
	for name, dir := range map[string]string{
		"empty":   empty,
		"missing": filepath.Join(empty, "missing"),
	} {
		if p, err := session.Latest(dir); !errors.Is(err, session.ErrNoSessions) {
			t.Errorf("%s: Latest = %q, %v; want ErrNoSessions", name, p, err)
		}
	}
	// A folder of unreadable files has sessions: Latest says what is
	// wrong with them rather than that there are none.
	var fe *session.FormatError
	if p, err := session.Latest(broken); !errors.As(err, &fe) || p != filepath.Join(broken, "x.jsonl") {
		t.Errorf("only broken: Latest = %q, %v; want the file and its FormatError", p, err)
	}
	if infos, err := session.List(filepath.Join(empty, "missing")); err != nil || len(infos) != 0 {
		t.Errorf("List of a missing directory = %v, %v", infos, err)
	}
}

func TestDefaultDir(t *testing.T) {
	data, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	for _, tc := range []struct{ xdg, want string }{
		{data, filepath.Join(data, "toolshelf", "sessions")},
		{"", filepath.Join(home, ".local", "share", "toolshelf", "sessions")},
		{"relative/path", filepath.Join(home, ".local", "share", "toolshelf", "sessions")},
	} {
		t.Setenv("XDG_DATA_HOME", tc.xdg)
		got, err := session.DefaultDir()
		if err != nil || got != tc.want {
			t.Errorf("XDG_DATA_HOME=%q: DefaultDir() = %q, %v; want %q", tc.xdg, got, err, tc.want)
		}
	}
}

// damage replaces line n (1-based) of a session file with text.
func damage(t *testing.T, path string, n int, text string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[n-1] = text + "\n"
	writeFile(t, path, []byte(strings.Join(lines, "")))
}

// TestDamagedNewestSession: when the newest session is damaged in the
// middle, Latest reports it (never an older one in its place), List shows
// it in its place with what could be read, and a fork at the last intact
// entry recovers that part.
func TestDamagedNewestSession(t *testing.T) {
	dir := t.TempDir()
	older, err := session.Create(dir, clock(epoch))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, older, llm.UserText("older", 1))
	older.Close()
	newest, err := session.Create(dir, clock(epoch.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	e1 := mustAppend(t, newest, llm.UserText("first", 1))
	e2 := mustAppend(t, newest, llm.UserText("second", 2))
	mustAppend(t, newest, llm.UserText("third", 3))
	newest.Close()
	damage(t, newest.Path(), 4, `{"type":"message","id":"zz"`+"\x00")

	p, err := session.Latest(dir)
	var fe *session.FormatError
	if !errors.As(err, &fe) || p != newest.Path() {
		t.Fatalf("Latest = %q, %v; want the damaged newest session and its FormatError", p, err)
	}
	if fe.Line != 4 || fe.Intact != 2 || fe.LastIntact != e2.ID {
		t.Errorf("FormatError line %d, intact %d, last intact %q; want 4, 2, %q", fe.Line, fe.Intact, fe.LastIntact, e2.ID)
	}
	infos, err := session.List(dir)
	if err != nil || len(infos) != 2 {
		t.Fatalf("List = %v, %v", infos, err)
	}
	if in := infos[0]; in.Path != newest.Path() || in.Err == nil || in.ID != newest.ID() || in.Entries != 2 || in.FirstUserText != "first" {
		t.Errorf("the damaged session is listed as %+v", in)
	}
	// Recovery: a fork at the last intact entry; not at the damaged end.
	if _, err := session.Fork(newest.Path(), "", t.TempDir(), nil); !errors.As(err, &fe) {
		t.Errorf("fork of a damaged session at its end: err = %v, want the FormatError", err)
	}
	forked, err := session.Fork(newest.Path(), fe.LastIntact, t.TempDir(), nil)
	if err != nil {
		t.Fatalf("fork at the last intact entry: %v", err)
	}
	defer forked.Close()
	var ids []string
	for _, e := range forked.Branch() {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []string{e1.ID, e2.ID}) {
		t.Errorf("the fork holds %v, want %v", ids, []string{e1.ID, e2.ID})
	}
}

// TestDamagedHeaderIsListedByName: a file whose header is damaged keeps
// the id and time its name gives, so it is found and ordered.
func TestDamagedHeaderIsListedByName(t *testing.T) {
	dir := t.TempDir()
	s, err := session.Create(dir, clock(epoch))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	damage(t, s.Path(), 1, "garbage")
	infos, err := session.List(dir)
	if err != nil || len(infos) != 1 {
		t.Fatalf("List = %v, %v", infos, err)
	}
	want := s.Header().Timestamp.Truncate(time.Second)
	if in := infos[0]; in.ID != s.ID() || !in.Timestamp.Equal(want) || in.Err == nil {
		t.Errorf("listed as %+v; want id %s, time %v and an error", in, s.ID(), want)
	}
}
