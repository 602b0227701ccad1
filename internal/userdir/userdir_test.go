package userdir

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestState(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if got, err := State(); err != nil || got != filepath.Join("/var/state", "toolshelf") {
		t.Errorf("State() = %q, %v", got, err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"", "relative/state"} {
		t.Setenv("XDG_STATE_HOME", v)
		if got, err := State(); err != nil || got != filepath.Join(home, ".local", "state", "toolshelf") {
			t.Errorf("XDG_STATE_HOME=%q: State() = %q, %v", v, got, err)
		}
	}
}

func TestOpenPrivateCreates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b", "outputs")
	root, err := OpenPrivate(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		info, err := os.Stat(d)
		if err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a folder of mode 0700", d, info.Mode(), err)
		}
	}
	// A second open finds the folder as it was made.
	again, err := OpenPrivate(dir)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
}

func TestOpenPrivateRefuses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix modes and links")
	}
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string)
		want string
	}{
		{"open to others", func(t *testing.T, dir string) {
			mkdir(t, dir)
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, "can be used by other users (mode 0777): run chmod 700 "},
		{"open to the group", func(t *testing.T, dir string) {
			mkdir(t, dir)
			if err := os.Chmod(dir, 0o750); err != nil {
				t.Fatal(err)
			}
		}, "(mode 0750)"},
		{"a link to a private folder", func(t *testing.T, dir string) {
			target := t.TempDir()
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link: remove the link"},
		{"a dangling link", func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(t.TempDir(), "nothing"), dir); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"a file", func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is a file: move it away"},
		{"another user's folder", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a folder to another user")
			}
			mkdir(t, dir)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "belongs to another user (uid 65534)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "outputs")
			tc.make(t, dir)
			root, err := OpenPrivate(dir)
			if err == nil {
				root.Close()
				t.Fatalf("opened")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q, want %q and the folder", err, tc.want)
			}
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix modes and links")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "l")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	check := func(path string) error {
		info, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return CheckFile(path, info)
	}
	if err := check(file); err != nil {
		t.Errorf("a private file: %v", err)
	}
	if err := check(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link: %v", err)
	}
	if err := check(dir); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("a folder: %v", err)
	}
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := check(file); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a file open to the group: %v", err)
	}
}
