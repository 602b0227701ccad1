package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is the module version toolshelf was built from ("dev" for a
// build from a working tree).
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// env is what a command needs from its process.
type env struct {
	// ctx ends when the command should stop: Main's context is done
	// (SIGTERM or SIGHUP, with SignalContext) or Ctrl-C was pressed.
	ctx context.Context
	// term ends only with Main's context: chat handles Ctrl-C itself, a
	// turn at a time.
	term   context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// stderrTerminal is whether the process's stderr is a terminal, as
	// Main found it: a command may wrap stderr (chat keeps warnings off
	// its prompt line), and the log format follows the terminal, not the
	// wrapper.
	stderrTerminal bool
	// logs are the root's logging flags, -v and --log-format.
	logs logFlags
}

// usageError marks errors in how a command was invoked (exit status 2).
type usageError struct{ err error }

// Error returns the underlying message.
func (e usageError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error.
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Exit statuses beyond 0 (done), 1 (failed) and 2 (invoked wrongly).
const (
	// exitNoServers: run answered, but every configured MCP server
	// failed to connect, so the answer had none of their tools.
	exitNoServers = 3
)

// exitError is an error with its own exit status; shown reports that it
// was printed already (a provider's error, in the run's output), so Main
// does not print it again.
type exitError struct {
	err   error
	code  int
	shown bool
}

// Error returns the underlying message.
func (e exitError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error.
func (e exitError) Unwrap() error { return e.err }

// Main runs the toolshelf command line with args (without the program name)
// and returns the process exit status: 0 on success, 1 when the command
// failed, 2 when it was invoked wrongly, 3 when run answered although
// every configured MCP server failed to connect.
//
// Cancelling ctx stops the command as Ctrl-C (SIGINT) does, which Main
// handles itself: a run answers its calls in flight as cancelled and
// closes its session. Programs pass [SignalContext] so that SIGTERM and
// SIGHUP stop it the same way.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ictx, stop := interruptible(ctx)
	defer stop()
	e := &env{ctx: ictx, term: ctx, stdin: stdin, stdout: stdout, stderr: stderr, stderrTerminal: isTerminal(stderr)}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ictx)
	if err == nil {
		return 0
	}
	var xe exitError
	if errors.As(err, &xe) {
		if !xe.shown {
			printf(stderr, "toolshelf: %v\n", err)
		}
		return cmp.Or(xe.code, 1)
	}
	// Errors may quote servers, models and files: shown safe.
	printf(stderr, "toolshelf: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		fmt.Fprintln(stderr, "Run 'toolshelf help' for usage.")
		return 2
	}
	return 1
}

// isCobraUsageError recognises cobra's own flag and argument errors.
func isCobraUsageError(err error) bool {
	var fe *flagError
	return errors.As(err, &fe)
}

// flagError wraps flag-parsing errors so Main can tell them apart.
type flagError struct{ err error }

// Error returns the flag parser's message.
func (e *flagError) Error() string { return e.err.Error() }

// Unwrap returns the flag parser's error.
func (e *flagError) Unwrap() error { return e.err }

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "toolshelf",
		Short: "On-demand tool loading that never breaks the prompt cache",
		Long: `toolshelf keeps tools on a shelf: registered and searchable, but not declared to
the model until it loads them. 'run' and 'chat' drive an agent whose tools are your
MCP servers (offline with --provider emulator); the other commands search and
evaluate the shelf (without --catalog, the built-in catalog of 1,564 real MCP tools),
measure tokens and cache reuse, and manage saved sessions.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
		PersistentPreRunE: func(*cobra.Command, []string) error { return e.logs.check() },
	}
	e.logs.register(root)
	// Flag lines wrap to the width (see outputWidth).
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), ".FlagUsages |", fmt.Sprintf(".FlagUsagesWrapped %d |", outputWidth(e.stdout))))
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return &flagError{withFlagSuggestion(cmd, err)} })
	root.AddCommand(newSearchCmd(e), newEvalCmd(e), newSessionsCmd(e), newCapabilitiesCmd(e), newRenderCmd(e), newBenchCmd(e), newEmulateCmd(e), newRunCmd(e), newChatCmd(e), newMCPCmd(e), newStatsCmd(e), newLintCmd(e), newServeCmd(e), newLexiconCmd(e), newShelfCmd(e))
	return root
}

// noArgs rejects positional arguments as a usage error. For a command
// with subcommands, the argument is a mistyped command: the error names
// the commands it may have meant.
func noArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		if cmd.HasAvailableSubCommands() {
			return usageError{unknownCommand(cmd, args[0])}
		}
		return usageError{err}
	}
	return nil
}
