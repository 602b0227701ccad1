package lexicon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// lexPath returns a lexicon path in a fresh private folder.
func lexPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "lexicon", FileName)
}

func TestLearnSaveOpen(t *testing.T) {
	path := lexPath(t)
	l, err := Open(path, t0)
	if err != nil || l.Len() != 0 {
		t.Fatalf("Open of a missing file: %d entries, %v", l.Len(), err)
	}
	if _, err := os.Stat(filepath.Dir(path)); err == nil {
		t.Error("Open made the folder: reading must leave nothing behind")
	}
	n := l.Learn([]Pair{{"post to the team channel", "mcp__slack__send"}, {"select:a", "b"}, {"post to the team channel", ""},
		{strings.Repeat("long ", 50), "x"}, {"Posting team channels", "mcp__slack__send"}}, t0)
	if n != 2 {
		t.Errorf("Learn recorded %d pairs, want 2 (the select:, the empty tool and the long query are not aliases)", n)
	}
	want := []Entry{{Query: "post to the team channel", Tool: "mcp__slack__send", Uses: 2, Last: t0}}
	if diff := cmp.Diff(want, l.Entries()); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]os.FileMode{true: 0o700, false: 0o600}[info.IsDir()]; info.Mode().Perm() != want {
			t.Errorf("%s has mode %04o, want %04o", filepath.Base(p), info.Mode().Perm(), want)
		}
	}
	again, err := Open(path, t0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again.Entries()); diff != "" {
		t.Errorf("entries read back (-want +got):\n%s", diff)
	}
	if got := again.Lookup("team channel post"); len(got) != 1 || got[0] != "mcp__slack__send" {
		t.Errorf("Lookup of the same words in another order = %v", got)
	}
	if got := again.Lookup("post to the team"); got != nil {
		t.Errorf("Lookup of other words = %v, want none", got)
	}
}

func TestDecayAndBounds(t *testing.T) {
	l, err := Open(lexPath(t), t0)
	if err != nil {
		t.Fatal(err)
	}
	l.Learn([]Pair{{"old words", "a"}}, t0)
	l.Learn([]Pair{{"used words", "b"}, {"used words", "b"}}, t0)
	if err := l.Add("pinned words", "c", t0); err != nil {
		t.Fatal(err)
	}
	if w := l.Entries()[0].Weight(t0.Add(HalfLife)); w != 1 {
		t.Errorf("weight of 2 uses after one half-life = %v, want 1", w)
	}
	// Two half-lives later the alias learned once is forgotten; the one
	// used twice and the pinned one stay.
	l.Learn(nil, t0.Add(2*HalfLife+time.Hour))
	var got []string
	for _, e := range l.Entries() {
		got = append(got, e.Query)
	}
	if diff := cmp.Diff([]string{"pinned words", "used words"}, got); diff != "" {
		t.Errorf("after two half-lives (-want +got):\n%s", diff)
	}
	// A use renews an alias (the same query key and tool); another tool
	// of the same query is an alias of its own.
	l.Learn([]Pair{{"words used", "b"}, {"used words", "other"}}, t0.Add(3*HalfLife))
	if e := l.Entries()[0]; e.Query != "used words" || e.Uses != 3 || !e.Last.Equal(t0.Add(3*HalfLife)) {
		t.Errorf("renewed entry %+v", e)
	}
	if !l.Called("other") || !l.Called("b") || l.Called("never") {
		t.Errorf("Called(other, b, never) = %v, %v, %v; want true, true, false", l.Called("other"), l.Called("b"), l.Called("never"))
	}

	// The count is bounded: the lightest go first.
	var pairs []Pair
	for i := range MaxEntries + 10 {
		pairs = append(pairs, Pair{fmt.Sprintf("query number%d", i), "t"})
	}
	now := t0.Add(3 * HalfLife)
	l.Learn(pairs, now)
	if l.Len() != MaxEntries {
		t.Errorf("%d entries, want %d", l.Len(), MaxEntries)
	}
	if e := l.Entries()[0]; e.Query != "used words" {
		t.Errorf("heaviest entry %+v, want the one used three times", e)
	}
	if err := l.Add(strings.Repeat("x", MaxQueryBytes+1), "t", now); err == nil {
		t.Error("Add took a query over MaxQueryBytes")
	}
	if err := l.Add("the of", "t", now); err == nil {
		t.Error("Add took a query of stop words")
	}
	if n := l.Remove("WORDS USED"); n != 1 {
		t.Errorf("Remove removed %d, want 1", n)
	}
	if got := l.Lookup("used words"); got != nil {
		t.Errorf("after Remove: Lookup = %v", got)
	}
}

func TestRefusesFilesNotTheUsers(t *testing.T) {
	t.Run("link", func(t *testing.T) {
		path := lexPath(t)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(t.TempDir(), "elsewhere.json")
		if err := os.WriteFile(target, []byte(`{"version":1,"entries":[]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, t0); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Open of a link: %v, want a refusal naming the link", err)
		}
		l := &Lexicon{path: path, now: t0}
		if err := l.Save(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Save over a link: %v, want a refusal", err)
		}
	})
	t.Run("open to others", func(t *testing.T) {
		path := lexPath(t)
		l, _ := Open(path, t0)
		if err := l.Save(); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, t0); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("Open of a file others can read: %v, want a refusal naming the fix", err)
		}
	})
	t.Run("another user's", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("only root can give a file to another user")
		}
		path := lexPath(t)
		l, _ := Open(path, t0)
		if err := l.Save(); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, t0); err == nil || !strings.Contains(err.Error(), "another user") {
			t.Errorf("Open of another user's file: %v, want a refusal", err)
		}
	})
	t.Run("damaged", func(t *testing.T) {
		path := lexPath(t)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("not json"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, t0); err == nil || !strings.Contains(err.Error(), "lexicon --reset") {
			t.Errorf("Open of a damaged file: %v, want the fix", err)
		}
	})
}

func TestReset(t *testing.T) {
	path := lexPath(t)
	if had, err := Reset(path); had || err != nil {
		t.Errorf("Reset without a file = %v, %v", had, err)
	}
	if _, err := Update(path, t0, func(l *Lexicon) error { l.Learn([]Pair{{"some words", "t"}}, t0); return nil }); err != nil {
		t.Fatal(err)
	}
	if had, err := Reset(path); !had || err != nil {
		t.Errorf("Reset = %v, %v, want true", had, err)
	}
	if l, err := Open(path, t0); err != nil || l.Len() != 0 {
		t.Errorf("after Reset: %d entries, %v", l.Len(), err)
	}
}
