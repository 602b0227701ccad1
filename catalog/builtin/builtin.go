package builtin

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/tool"
)

//go:embed mcp/*.json
var files embed.FS

// FS returns the catalog files, one per server, at the root of the file
// system.
func FS() fs.FS {
	sub, err := fs.Sub(files, "mcp")
	if err != nil {
		panic(err) // the embedded folder always exists
	}
	return sub
}

var parsed = sync.OnceValues(func() ([]*catalog.Server, error) {
	return catalog.ReadFS(FS(), ".")
})

// Servers returns the parsed catalog, one server per file in file-name
// order. The result is shared: callers must not modify it.
func Servers() ([]*catalog.Server, error) {
	return parsed()
}

// Load registers every built-in tool in reg as a deferred tool named by
// namer.
func Load(reg *tool.Registry, namer *tool.Namer) error {
	servers, err := Servers()
	if err != nil {
		return err
	}
	return catalog.Register(reg, namer, tool.Deferred, servers...)
}
