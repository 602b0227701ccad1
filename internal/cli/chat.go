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
	"text/tabwriter"

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
Commands: /help lists them, /tools the active tools, /servers the MCP servers, /session the
session file; with --select, /reselect TASK selects the tools again. A line naming them is
printed at the start.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Ctrl-C cancels turns here, not the whole command; SIGTERM
			// and SIGHUP (e.term) end both.
			e2 := *e
			e2.ctx = e.term
			input := lineReader(e.stdin, e.stdout)
			defer input.close()
			if e.stderrTerminal {
				// Warnings arrive while the prompt waits for a line.
				e2.stderr = input.around(e.stderr)
			}
			read := stoppable(e.term, input.read)
			ask := func(_ context.Context, question string) (string, error) {
				printLine(e.stderr, question)
				return read("? ")
			}
			r, err := setupAgent(&e2, &f, ask)
			if err != nil {
				return err
			}
			defer r.close()
			// Always, on stderr: the answers on stdout stay the answers.
			fmt.Fprintln(e.stderr, chatBanner)
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
				case line == "/help":
					writeChatHelp(e.stdout, f.selectTools)
					continue
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
				case strings.HasPrefix(line, "/reselect") && !f.selectTools:
					fmt.Fprintln(e.stderr, "/reselect needs --select: this chat does not select tools")
					continue
				case strings.HasPrefix(line, "/reselect"):
					// A prompt: the selection lock reads it.
				case strings.HasPrefix(line, "/"):
					cmd, _, _ := strings.Cut(line, " ")
					printf(e.stderr, "unknown command %s; /help lists the commands\n", oneLine(cmd, 40))
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

// chatBanner is the line chat starts with.
const chatBanner = "toolshelf chat: type a prompt; /help lists the commands (/tools, /servers, /session, /exit). Ctrl-C cancels an answer, Ctrl-D ends."

// chatCommands are chat's slash commands, for /help.
var chatCommands = [][2]string{
	{"/tools", "the active tools: what the model is told about"},
	{"/servers", "the MCP servers: state, exposure, tool count, why one failed"},
	{"/session", "the session file (resume it with run or chat --resume)"},
	{"/exit", "end the chat (/quit and Ctrl-D too)"},
	{"/help", "this list"},
}

// writeChatHelp prints chat's commands; /reselect only when selecting.
func writeChatHelp(w io.Writer, selecting bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range chatCommands {
		fmt.Fprintf(tw, "%s\t%s\n", c[0], c[1])
	}
	if selecting {
		fmt.Fprintln(tw, "/reselect TASK\tselect the tools again, for a new task")
	}
	tw.Flush()
	fmt.Fprintln(w, "Anything else is a prompt. Ctrl-C cancels the answer in progress.")
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

// lineInput reads the prompts of chat.
type lineInput struct {
	// read shows the prompt and reads a line.
	read func(prompt string) (string, error)
	// close puts the terminal back in its normal mode if a read that
	// never returned left it raw.
	close func()
	// term is the line editor on a terminal, nil otherwise.
	term *term.Terminal

	mu      sync.Mutex
	reading bool // a prompt is on the line
}

// lineReader returns chat's input: a line editor with history on a
// terminal, plain lines otherwise.
func lineReader(in io.Reader, out io.Writer) *lineInput {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fd := int(f.Fd())
		return newTermInput(struct {
			io.Reader
			io.Writer
		}{f, out}, func() (func(), error) {
			state, err := term.MakeRaw(fd)
			if err != nil {
				return nil, err
			}
			return func() { term.Restore(fd, state) }, nil
		})
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	return &lineInput{read: func(string) (string, error) {
		if sc.Scan() {
			return sc.Text(), nil
		}
		if err := sc.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}, close: func() {}}
}

// newTermInput is the line editor over a terminal's rw; makeRaw puts the
// terminal in raw mode for a read and returns how to restore it.
func newTermInput(rw io.ReadWriter, makeRaw func() (restore func(), err error)) *lineInput {
	in := &lineInput{term: term.NewTerminal(rw, "")}
	var restore func() // while a read is raw
	done := func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		in.reading = false
		if restore != nil {
			restore()
			restore = nil
		}
	}
	in.read = func(prompt string) (string, error) {
		r, err := makeRaw()
		if err != nil {
			return "", err
		}
		in.mu.Lock()
		restore, in.reading = r, true
		in.mu.Unlock()
		defer done()
		in.term.SetPrompt(prompt)
		return in.term.ReadLine()
	}
	in.close = done
	return in
}

// around returns w for what is printed while chat waits at its prompt
// (warnings of servers connecting in the background, say): on a terminal,
// text written while the prompt is on the line goes through the line
// editor, which starts it at column 0 with its lines ended for the raw
// terminal (no staircase) and draws the prompt and the typed text again
// below it. Otherwise, and between prompts, it goes to w as it is.
func (in *lineInput) around(w io.Writer) io.Writer {
	if in.term == nil {
		return w
	}
	return promptWriter{in: in, w: w}
}

// promptWriter is lineInput.around's writer.
type promptWriter struct {
	in *lineInput
	w  io.Writer
}

func (p promptWriter) Write(b []byte) (int, error) {
	p.in.mu.Lock()
	reading := p.in.reading
	p.in.mu.Unlock()
	if reading {
		return p.in.term.Write(b)
	}
	return p.w.Write(b)
}
