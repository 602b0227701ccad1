//go:build !unix

package session

import "os"

// lockFile does nothing where flock(2) is missing: on these systems a
// session file is not protected from a second writer.
func lockFile(*os.File, string) error { return nil }
