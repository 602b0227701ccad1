//go:build unix

package userdir

import (
	"io/fs"
	"os"
	"syscall"
)

// owner returns the uid of a file's owner and whether it is this process's
// effective user.
func owner(info fs.FileInfo) (uid int, mine bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, true // no owner to compare
	}
	return int(st.Uid), int(st.Uid) == os.Geteuid()
}
