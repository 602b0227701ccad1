package userdir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// State returns toolshelf's state folder: $XDG_STATE_HOME/toolshelf, or
// ~/.local/state/toolshelf when XDG_STATE_HOME is unset or not an absolute
// path (as the XDG Base Directory specification asks). It creates nothing.
func State() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "toolshelf"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state folder (set XDG_STATE_HOME): %w", err)
	}
	return filepath.Join(home, ".local", "state", "toolshelf"), nil
}

// OpenPrivate opens dir, a folder only the user may use, creating it (and
// its missing parents) with mode 0700 when it does not exist. An existing
// dir is refused, with an error that says what to do, when it is a
// symbolic link, not a folder, owned by another user, or open to the group
// or others: another local user could then read, replace or plant what is
// kept there. The mode of a folder of the user's is not changed behind the
// user's back; the error names the chmod that fixes it.
//
// The folder is returned as an [os.Root] whose identity was checked
// against the folder examined, so files made through it land in that
// folder even if its path is changed meanwhile.
func OpenPrivate(dir string) (*os.Root, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		// A dangling link or a file in the way says more than "exists".
		if info, lerr := os.Lstat(dir); lerr == nil {
			if cerr := check(dir, info); cerr != nil {
				return nil, cerr
			}
		}
		return nil, fmt.Errorf("cannot create the private folder: %w", err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot examine the private folder %s: %w", dir, err)
	}
	if err := check(dir, info); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open the private folder %s: %w", dir, err)
	}
	opened, err := root.Stat(".")
	if err != nil || !os.SameFile(info, opened) {
		root.Close()
		return nil, fmt.Errorf("the private folder %s changed while it was being opened: try again, and check who else writes to %s", dir, filepath.Dir(dir))
	}
	return root, nil
}

// check refuses a folder that is not the user's alone.
func check(dir string, info fs.FileInfo) error {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return symlinkError(dir)
	case !info.IsDir():
		return fmt.Errorf("%s should be a private folder but is a %s: move it away, and toolshelf creates the folder", dir, kind(info.Mode()))
	}
	if uid, mine := owner(info); !mine {
		return fmt.Errorf("the private folder %s belongs to another user (uid %d): remove it if you can, or set XDG_STATE_HOME to a folder of your own", dir, uid)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("the private folder %s can be used by other users (mode %04o): run chmod 700 %s", dir, perm, dir)
	}
	return nil
}

func symlinkError(dir string) error {
	return fmt.Errorf("%s should be a private folder but is a symbolic link: remove the link, and toolshelf creates the folder", dir)
}

// kind names what a file that is not a folder is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// CheckFile refuses a file of a private folder, described by info (from
// Lstat), that is not the user's alone: a symbolic link, not a regular
// file, another user's, or open to the group or others. path names it in
// the error, which says what to do.
func CheckFile(path string, info fs.FileInfo) error {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s should be a private file but is a symbolic link: remove the link", path)
	case info.IsDir():
		return fmt.Errorf("%s should be a private file but is a folder: move it away", path)
	case !info.Mode().IsRegular():
		return fmt.Errorf("%s should be a private file but is a %s: move it away", path, kind(info.Mode()))
	}
	if uid, mine := owner(info); !mine {
		return fmt.Errorf("the private file %s belongs to another user (uid %d): remove it if you can", path, uid)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("the private file %s can be read or changed by other users (mode %04o): remove it, or run chmod 600 %s", path, perm, path)
	}
	return nil
}
