//go:build unix

package mcpclient

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// bigOutput starts a Manager saving outputs in dir ("" for the default)
// and returns a function that makes a call whose output is truncated and
// returns the warning line that opens the result.
func bigOutput(t *testing.T, dir string) (call func() string) {
	t.Helper()
	f := newFixture(t, memServer("r"))
	f.m.opts.OutputDir = dir
	useMemServers(f.m, map[string]*mcp.Server{"r": mcptest.NewServer("r", "")})
	f.m.Start(f.ctx())
	f.waitAll()
	return func() string {
		r := f.call("mcp__r__big", fmt.Sprintf(`{"n":%d}`, 2*MaxOutputBytes))
		first, _, _ := strings.Cut(text(r), "\n")
		return first
	}
}

// savedPath reads the path a truncation warning names.
func savedPath(t *testing.T, warning string) string {
	t.Helper()
	_, path, ok := strings.Cut(warning, "; the full output is in ")
	if !ok {
		t.Fatalf("the output was not saved: %q", warning)
	}
	return path
}

// TestOutputsGoToTheStateDir: without OutputDir, full outputs are saved in
// $XDG_STATE_HOME/toolshelf/outputs, a folder of mode 0700, not in a
// shared temporary folder.
func TestOutputsGoToTheStateDir(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	path := savedPath(t, bigOutput(t, "")())
	want := filepath.Join(state, "toolshelf", "outputs")
	if filepath.Dir(path) != want {
		t.Errorf("saved to %s, want a file in %s", path, want)
	}
	saved, err := readFileMode(path)
	if err != nil {
		t.Fatal(err)
	}
	if saved.mode != 0o600 || saved.dirMode != 0o700 || saved.text != mcptest.BigText(2*MaxOutputBytes) {
		t.Errorf("file mode %o, folder mode %o, %d bytes", saved.mode, saved.dirMode, len(saved.text))
	}
}

// TestOutputsRefuseAFolderOthersCanUse: a folder open to other users, or a
// link in its place, is not used: the result says why the output was not
// saved, and nothing is written there.
func TestOutputsRefuseAFolderOthersCanUse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string) (watched string)
		want string
	}{
		{"mode 0777", func(t *testing.T, dir string) string {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "can be used by other users (mode 0777): run chmod 700"},
		{"a link", func(t *testing.T, dir string) string {
			target := t.TempDir()
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
			return target
		}, "is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "outputs")
			watched := tc.make(t, dir)
			warning := bigOutput(t, dir)()
			if !strings.Contains(warning, "the full output could not be saved: ") || !strings.Contains(warning, tc.want) {
				t.Errorf("warning %q, want the reason %q", warning, tc.want)
			}
			if entries, err := os.ReadDir(watched); err != nil || len(entries) > 0 {
				t.Errorf("%s holds %d files (%v)", watched, len(entries), err)
			}
		})
	}
}

// TestOldOutputsAreCleanedUp: the first save of a Manager removes saved
// outputs older than a week, and only those; it does so once.
func TestOldOutputsAreCleanedUp(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "outputs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	age := func(name string, d time.Duration) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		then := time.Now().Add(-d)
		if err := os.Chtimes(path, then, then); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const day = 24 * time.Hour
	old := age("r-big-old.txt", 8*day)
	recent := age("r-big-recent.txt", 6*day)
	other := age("notes.md", 30*day)
	call := bigOutput(t, dir)
	saved := savedPath(t, call())
	exists := func(path string) bool { _, err := os.Lstat(path); return err == nil }
	if exists(old) || !exists(recent) || !exists(other) || !exists(saved) {
		t.Errorf("after the first save: old %v, recent %v, other file %v, new %v; want only the old one gone",
			exists(old), exists(recent), exists(other), exists(saved))
	}
	// Once per Manager: an old file that appears later stays.
	later := age("r-big-later.txt", 8*day)
	savedPath(t, call())
	if !exists(later) {
		t.Errorf("the second save cleaned up again")
	}
}
