package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStateRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "toolshelf")
	s, err := Load(dir)
	if err != nil || len(s.AlwaysLoad(servers)) != 0 {
		t.Fatalf("Load of nothing = %+v, %v; want an empty state", s, err)
	}
	if err := s.Apply(servers, []string{"mcp__git__status", "mcp__git__log", "mcp__git__status"}, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if m := info.Mode().Perm(); m != 0o600 {
		t.Errorf("state file mode %04o, want 0600", m)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mcp__git__log", "mcp__git__status"}, got.AlwaysLoad(servers)); diff != "" {
		t.Errorf("always load (-want +got):\n%s", diff)
	}
	if got.AlwaysLoad("/other/mcp.json") != nil {
		t.Errorf("another servers file has tools applied")
	}
	if had, err := Reset(dir); !had || err != nil {
		t.Fatalf("Reset = %v, %v; want true", had, err)
	}
	if got, err := Load(dir); err != nil || len(got.Files) != 0 {
		t.Errorf("after Reset: %+v, %v", got, err)
	}
	if had, err := Reset(dir); had || err != nil {
		t.Errorf("second Reset = %v, %v; want false", had, err)
	}
}

func TestStateBounds(t *testing.T) {
	var s State
	many := make([]string, MaxTools+1)
	for i := range many {
		many[i] = fmt.Sprintf("mcp__s__t%d", i)
	}
	if err := s.Apply(servers, many, t0); err == nil {
		t.Errorf("applied %d tools", len(many))
	}
	if err := s.Apply(servers, []string{"not a name"}, t0); err == nil {
		t.Errorf("applied a name with spaces")
	}
	for i := range MaxFiles + 1 {
		if err := s.Apply(fmt.Sprintf("/f%02d", i), []string{"mcp__s__t"}, t0.AddDate(0, 0, i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.Files) != MaxFiles {
		t.Errorf("%d servers files kept, want %d", len(s.Files), MaxFiles)
	}
	if _, ok := s.Files["/f00"]; ok {
		t.Errorf("the servers file applied longest ago is kept")
	}
}

func TestStateRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string)
		want string
	}{
		{"a link", func(t *testing.T, dir string) {
			target := filepath.Join(t.TempDir(), "elsewhere.json")
			if err := os.WriteFile(target, []byte(`{"files":{}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, FileName)); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"open to others", func(t *testing.T, dir string) {
			write(t, dir, `{"files":{}}`, 0o644)
		}, "chmod 600"},
		{"another user's", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a file to another user")
			}
			write(t, dir, `{"files":{}}`, 0o600)
			if err := os.Chown(filepath.Join(dir, FileName), 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "belongs to another user"},
		{"damaged", func(t *testing.T, dir string) {
			write(t, dir, `{"files":{"x":{"alwaysLoad":["a b"]}}}`, 0o600)
		}, "--reset"},
		{"unknown fields", func(t *testing.T, dir string) {
			write(t, dir, `{"files":{},"extra":1}`, 0o600)
		}, "--reset"},
		{"too large", func(t *testing.T, dir string) {
			write(t, dir, `{"files":{}}`+strings.Repeat(" ", maxBytes), 0o600)
		}, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "toolshelf")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.make(t, dir)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error with %q", err, tc.want)
			}
			if tc.name == "a link" || tc.name == "another user's" {
				if err := (State{}).Save(dir); err == nil {
					t.Errorf("Save replaced %s", tc.name)
				}
			}
		})
	}
}

func write(t *testing.T, dir, text string, mode os.FileMode) {
	t.Helper()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
