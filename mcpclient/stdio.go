package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// commandTransport is mcp.CommandTransport with the server's output read
// through a listReader (which the SDK's transport gives no way to do): it
// starts the command and speaks newline-delimited JSON over its standard
// input and output. Closing it closes the server's input, waits for it to
// exit, then sends SIGTERM and at last SIGKILL, each after terminate, as
// the SDK's does.
type commandTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	lists     *listBytes
}

// defaultTerminate is how long a server gets to exit at each step of a
// close when commandTransport.terminate is not set (the SDK's default).
const defaultTerminate = 5 * time.Second

// Connect starts the command.
func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	td := t.terminate
	if td <= 0 {
		td = defaultTerminate
	}
	p := &process{cmd: t.cmd, terminate: td, stdin: stdin}
	// The connection is closed by closing the server's input, not its
	// output.
	r := newListReader(io.NopCloser(stdout), t.lists)
	return (&mcp.IOTransport{Reader: r, Writer: listWriter{p, t.lists}}).Connect(ctx)
}

// process is a started server's input; closing it ends the server.
type process struct {
	cmd       *exec.Cmd
	terminate time.Duration
	stdin     io.WriteCloser
}

// Write writes to the server's input.
func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close closes the server's input and waits for it to exit, terminating and
// at last killing it when it does not.
func (p *process) Close() error {
	if err := p.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(p.terminate)
		defer t.Stop()
		select {
		case err := <-done:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server did not exit after SIGKILL")
}
