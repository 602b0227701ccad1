package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/tool"
)

// loadShelf registers the tools of the given catalog files and folders, or
// of the built-in catalog when there are none, as deferred tools. A path
// that cannot be read is an error; problems with single tools or files
// inside readable paths are reported on stderr as warnings, and loading
// fails only when no tool could be loaded.
func loadShelf(e *env, paths []string) (*tool.Registry, error) {
	reg := tool.NewRegistry()
	namer := tool.NewNamer()
	var err error
	if len(paths) == 0 {
		err = builtin.Load(reg, namer)
	} else {
		servers, problems, readErr := readCatalogs(paths)
		if readErr != nil {
			return nil, readErr
		}
		err = errors.Join(problems, catalog.Register(reg, namer, tool.Deferred, servers...))
	}
	for _, p := range catalog.Problems(err) {
		printf(e.stderr, "toolshelf: warning: %v\n", p)
	}
	if reg.Len() == 0 {
		return nil, fmt.Errorf("no tools loaded from --catalog %s: fix the problems above", strings.Join(paths, ", "))
	}
	return reg, nil
}

// readCatalogs reads the --catalog files and folders: the servers read and
// the problems of the files (as catalog.Problems lists them). A path that
// does not exist is err, and nothing is read.
func readCatalogs(paths []string) (servers []*catalog.Server, problems, err error) {
	var errs []error
	for _, p := range paths {
		if _, statErr := os.Stat(p); errors.Is(statErr, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("--catalog %s: no such file or folder", p)
		}
		ss, err := catalog.ReadPath(p)
		servers = append(servers, ss...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return servers, errors.Join(errs...), nil
}
