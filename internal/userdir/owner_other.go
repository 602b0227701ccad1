//go:build !unix

package userdir

import "io/fs"

// owner reports every file as the user's: this system has no Unix owner to
// compare (its permissions are ACLs, which the mode check approximates).
func owner(fs.FileInfo) (uid int, mine bool) { return -1, true }
