package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "new" {
		t.Fatalf("read %q, %v; want new", data, err)
	}
	if info, _ := os.Stat(path); runtime.GOOS != "windows" && info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", info.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the file", len(entries))
	}
}

func TestWriteIntoAMissingFolderFailsAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := Write(filepath.Join(dir, "no", "a.json"), []byte("x"), 0o600); err == nil {
		t.Fatal("no error writing into a missing folder")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("folder holds %d entries, want none", len(entries))
	}
}

func TestWriteInReplacesThroughTheRoot(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, data := range []string{"old", "new"} {
		if err := WriteIn(root, "a.json", []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "a.json"))
	if err != nil || string(got) != "new" {
		t.Fatalf("read %q, %v; want new", got, err)
	}
	if info, _ := os.Stat(filepath.Join(dir, "a.json")); runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the file", len(entries))
	}
	// A link inside the folder to another one: the root refuses to follow
	// it out, where a plain open would write through it.
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, "out")); err != nil {
		t.Skip(err)
	}
	if err := WriteIn(root, "out/escape.json", []byte("x"), 0o600); err == nil {
		t.Error("wrote outside the root, through a link")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the folder the link points to holds %d entries, want none", len(entries))
	}
}
