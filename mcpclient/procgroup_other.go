//go:build !unix

package mcpclient

import "os/exec"

// ownProcessGroup leaves cmd as it is: process groups are a unix notion.
func ownProcessGroup(*exec.Cmd) {}
