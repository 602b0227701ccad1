package userdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/toolshelf/toolshelf/internal/atomicfile"
)

// ErrTooLarge is wrapped by [ReadFile]'s error for a file over its limit.
// The caller's message says how to start the file again.
var ErrTooLarge = errors.New("the file is larger than toolshelf ever writes it")

// ReadFile reads the file name of the private folder dir: at most limit
// bytes, or an error wrapping [ErrTooLarge]. found is false, with no
// error, when the folder or the file does not exist; nothing is created.
// The folder is checked as [OpenPrivate] checks it and the file as
// [CheckFile] does, and the file read must be the one examined, so the
// errors name the problem and its fix.
func ReadFile(dir, name string, limit int64) (data []byte, found bool, err error) {
	dir = filepath.Clean(dir)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	root, err := OpenPrivate(dir)
	if err != nil {
		return nil, false, err
	}
	defer root.Close()
	path := filepath.Join(dir, name)
	info, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := CheckFile(path, info); err != nil {
		return nil, false, err
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if opened, err := f.Stat(); err != nil || !os.SameFile(info, opened) {
		return nil, false, fmt.Errorf("%s changed while it was being opened: try again", path)
	}
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return nil, true, fmt.Errorf("%s is over %d bytes: %w", path, limit, ErrTooLarge)
	}
	return data, true, nil
}

// WriteFile writes data to the file name of the private folder dir,
// which it creates (mode 0700) if needed, through a temporary file
// renamed into place with mode 0600: a failed write leaves the old file
// as it was. An existing file that [CheckFile] refuses is not replaced.
func WriteFile(dir, name string, data []byte) error {
	dir = filepath.Clean(dir)
	root, err := OpenPrivate(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if info, err := root.Lstat(name); err == nil {
		if err := CheckFile(filepath.Join(dir, name), info); err != nil {
			return err
		}
	}
	return atomicfile.WriteIn(root, name, data, 0o600)
}

// RemoveFile removes the file name of the private folder dir and reports
// whether there was one; a missing folder or file is no error.
func RemoveFile(dir, name string) (bool, error) {
	dir = filepath.Clean(dir)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	root, err := OpenPrivate(dir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	err = root.Remove(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
