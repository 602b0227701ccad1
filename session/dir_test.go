package session_test

import (
	"errors"
	"os"
	"path/filepath"
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
		"empty":       empty,
		"missing":     filepath.Join(empty, "missing"),
		"only broken": broken,
	} {
		if p, err := session.Latest(dir); !errors.Is(err, session.ErrNoSessions) {
			t.Errorf("%s: Latest = %q, %v; want ErrNoSessions", name, p, err)
		}
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
