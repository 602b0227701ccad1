package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newChatCmd(e *env) *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk with the agent in a line-editing prompt",
		Long: `chat reads prompts line by line (with line editing and history on a terminal) and runs the
agent on each, in one session; the flags are run's. Ctrl-C during an answer cancels that turn
and keeps the session consistent; Ctrl-C or Ctrl-D at the prompt, or /exit, ends the chat.
Commands: /tools lists the active tools, /servers the MCP servers, /session the session file.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Ctrl-C cancels turns here, not the whole command; SIGTERM
			// and SIGHUP (e.term) end both.
			e2 := *e
			e2.ctx = e.term
			read, closeInput := lineReader(e.stdin, e.stdout)
			defer closeInput()
			read = stoppable(e.term, read)
			ask := func(_ context.Context, question string) (string, error) {
				printLine(e.stderr, question)
				return read("? ")
			}
			r, err := setupAgent(&e2, &f, ask)
			if err != nil {
				return err
			}
			defer r.close()
			for {
				line, err := read("> ")
				if err != nil {
					if e.term.Err() != nil {
						return stoppedError(e.term, r)
					}
					if errors.Is(err, io.EOF) {
						if r.session != nil {
							fmt.Fprintf(e.stderr, "session %s\n", r.session.ID())
						}
						return nil
					}
					return err
				}
				line = strings.TrimSpace(line)
				switch {
				case line == "":
					continue
				case line == "/exit" || line == "/quit":
					return nil
				case line == "/tools":
					for _, n := range r.reg.ActiveNames() {
						printLine(e.stdout, n)
					}
					continue
				case line == "/servers":
					writeServers(e.stdout, r.mcp.Servers())
					continue
				case line == "/session":
					if r.session != nil {
						fmt.Fprintln(e.stdout, r.session.Path())
					} else {
						fmt.Fprintln(e.stdout, "not saved (--no-session)")
					}
					continue
				case strings.HasPrefix(line, "/"):
					fmt.Fprintln(e.stderr, "unknown command; /tools, /servers, /session or /exit")
					continue
				}
				if err := turn(e2.ctx, r, line); err != nil {
					if e.term.Err() != nil {
						return stoppedError(e.term, r)
					}
					if errors.Is(err, context.Canceled) {
						fmt.Fprintln(e.stderr, "(cancelled)")
						continue
					}
					if xe := (exitError{}); !errors.As(r.out.printed(err), &xe) || !xe.shown {
						printf(e.stderr, "toolshelf: %v\n", err)
					}
				}
			}
		},
	}
	f.register(cmd)
	return cmd
}

// stoppedError is chat's error when SIGTERM or SIGHUP ended it.
func stoppedError(term context.Context, r *agentRun) error {
	why := "stopped"
	if sig, ok := stoppedBySignal(term); ok {
		why = fmt.Sprintf("stopped by %v", sig)
	}
	if r.session != nil {
		return fmt.Errorf("%s; session %s keeps everything up to the stop", why, r.session.ID())
	}
	return errors.New(why)
}

// stoppable makes read return ctx's cause once ctx is done, without
// waiting for the line being read.
func stoppable(ctx context.Context, read func(string) (string, error)) func(string) (string, error) {
	return func(prompt string) (string, error) {
		type line struct {
			text string
			err  error
		}
		ch := make(chan line, 1)
		go func() {
			text, err := read(prompt)
			ch <- line{text, err}
		}()
		select {
		case l := <-ch:
			return l.text, l.err
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	}
}

// turn runs one prompt; an interrupt cancels it.
func turn(ctx context.Context, r *agentRun, text string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	return r.prompt(ctx, text)
}

// lineReader returns a prompt reader: a line editor with history on a
// terminal, plain lines otherwise. closeFn puts the terminal back in its
// normal mode if a read that never returned left it raw.
func lineReader(in io.Reader, out io.Writer) (read func(prompt string) (string, error), closeFn func()) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fd := int(f.Fd())
		t := term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{f, out}, "")
		var mu sync.Mutex
		var raw *term.State // the state to restore while a read is raw
		restore := func() {
			mu.Lock()
			defer mu.Unlock()
			if raw != nil {
				term.Restore(fd, raw)
				raw = nil
			}
		}
		return func(prompt string) (string, error) {
			state, err := term.MakeRaw(fd)
			if err != nil {
				return "", err
			}
			mu.Lock()
			raw = state
			mu.Unlock()
			defer restore()
			t.SetPrompt(prompt)
			return t.ReadLine()
		}, restore
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	return func(string) (string, error) {
		if sc.Scan() {
			return sc.Text(), nil
		}
		if err := sc.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}, func() {}
}
