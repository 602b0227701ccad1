//go:build unix

package session

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockFile takes the exclusive advisory lock of an open session file
// without waiting (flock(2): the lock belongs to the open file, so two
// Sessions of one process exclude each other too, and the system
// releases it when the holder exits, however it ends). A file another
// writer holds is a *LockedError naming the holder when the system says.
func lockFile(f *os.File, path string) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			le := &LockedError{Path: path}
			le.PID, le.Command = lockHolder(f)
			return le
		}
		return fmt.Errorf("locking session %s: %w", path, err)
	}
}

// lockHolder returns the process that holds the flock(2) lock of f and its
// program's name, from /proc/locks where the system has it (Linux); 0 and
// "" otherwise.
func lockHolder(f *os.File) (pid int, command string) {
	fi, err := f.Stat()
	if err != nil {
		return 0, ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, ""
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0, ""
	}
	defer locks.Close()
	pid = holderOf(bufio.NewScanner(locks), uint64(st.Dev), uint64(st.Ino))
	if pid > 0 {
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			command = strings.TrimSpace(string(comm))
		}
	}
	return pid, command
}

// holderOf reads /proc/locks lines ("1: FLOCK  ADVISORY  WRITE 4242
// fe:00:9978618 0 EOF": the device's major and minor numbers in hex, then
// the inode) and returns the pid of the write flock on the file dev, ino
// (dev as Linux's stat encodes it), 0 when there is none. Lines of
// blocked waiters ("1: -> FLOCK ...") are skipped.
func holderOf(sc *bufio.Scanner, dev, ino uint64) int {
	major := (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)
	minor := dev&0xff | (dev>>12)&^uint64(0xff)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || f[3] != "WRITE" {
			continue
		}
		parts := strings.Split(f[5], ":")
		if len(parts) != 3 {
			continue
		}
		maj, err1 := strconv.ParseUint(parts[0], 16, 64)
		mnr, err2 := strconv.ParseUint(parts[1], 16, 64)
		n, err3 := strconv.ParseUint(parts[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || maj != major || mnr != minor || n != ino {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}
