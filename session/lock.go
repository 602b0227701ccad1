package session

import (
	"errors"
	"fmt"
)

// ErrLocked is the error, wrapped in a [*LockedError], of opening for
// writing a session that another writer holds.
var ErrLocked = errors.New("session is in use")

// LockedError reports a session file that another writer holds: another
// process (or another [Session] of this one) opened it for appending and
// has not closed it.
type LockedError struct {
	// Path is the session file.
	Path string
	// PID is the process holding the lock, 0 when the system does not
	// say.
	PID int
	// Command is the name of the holder's program, when known.
	Command string
}

// Error names the file, the holder and what to do.
func (e *LockedError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = fmt.Sprintf("process %d", e.PID)
		if e.Command != "" {
			holder += fmt.Sprintf(" (%s)", e.Command)
		}
	}
	return fmt.Sprintf("session %s is in use by %s: a session has one writer at a time; "+
		"wait for it to end, or fork the session to continue in a copy", e.Path, holder)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }
