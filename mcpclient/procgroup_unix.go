//go:build unix

package mcpclient

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a process group of its own, so that the
// signals a terminal sends to its foreground group — Ctrl-C's SIGINT, for
// one — reach toolshelf, which cancels what it is doing, and not its MCP
// servers, which it keeps or closes itself.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
