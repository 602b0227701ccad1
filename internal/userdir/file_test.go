package userdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileOfNothingCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if data, found, err := ReadFile(dir, "f.json", 100); data != nil || found || err != nil {
		t.Fatalf("ReadFile of a missing folder = %q, %v, %v; want nothing found", data, found, err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile made the folder (%v)", err)
	}
	if removed, err := RemoveFile(dir, "f.json"); removed || err != nil {
		t.Errorf("RemoveFile of a missing folder = %v, %v", removed, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, found, err := ReadFile(dir, "f.json", 100); found || err != nil {
		t.Errorf("ReadFile of a missing file = %v, %v", found, err)
	}
}

func TestWriteReadRemove(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "state")
	if err := WriteFile(dir, "f.json", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dir, "f.json", []byte("two")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "f.json"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v, %v; want mode 0600", info.Mode(), err)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the folder: %v, %v; want mode 0700", info.Mode(), err)
	}
	data, found, err := ReadFile(dir, "f.json", 3)
	if string(data) != "two" || !found || err != nil {
		t.Fatalf("ReadFile = %q, %v, %v; want the second write", data, found, err)
	}
	if _, found, err := ReadFile(dir, "f.json", 2); !found || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "over 2 bytes") {
		t.Errorf("ReadFile over the limit = %v, %v; want ErrTooLarge", found, err)
	}
	if removed, err := RemoveFile(dir, "f.json"); !removed || err != nil {
		t.Errorf("RemoveFile = %v, %v; want removed", removed, err)
	}
	if removed, err := RemoveFile(dir, "f.json"); removed || err != nil {
		t.Errorf("RemoveFile again = %v, %v; want nothing to remove", removed, err)
	}
}

func TestFilesThatAreNotTheUsersAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("not yours"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "open.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"link.json": "symbolic link", "open.json": "chmod 600"} {
		if _, _, err := ReadFile(dir, name, 100); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFile(%s) = %v; want an error saying %q", name, err, want)
		}
		if err := WriteFile(dir, name, []byte("new")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("WriteFile(%s) = %v; want an error saying %q", name, err, want)
		}
	}
	if data, err := os.ReadFile(secret); err != nil || string(data) != "not yours" {
		t.Errorf("the link's target is now %q, %v", data, err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFile(dir, "open.json", 100); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("ReadFile in an open folder = %v; want the chmod that fixes it", err)
	}
}
