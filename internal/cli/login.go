package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tool"
)

// newLoginCmds returns mcp login and mcp logout; file is the --mcp flag.
func newLoginCmds(e *env, file *string) []*cobra.Command {
	var noBrowser bool
	var timeout time.Duration
	login := &cobra.Command{
		Use:   "login SERVER",
		Short: "Sign in to an HTTP server that asks for authorization (OAuth)",
		Long: `login signs in to SERVER: it prints the address where you sign in, opens it in a browser
when there is one ($BROWSER, else xdg-open; never under CI or with --no-browser), waits for the
authorization server to send the browser back to toolshelf (at most --timeout), and keeps the
tokens in a private file of the state folder. run, chat, serve and mcp list then use them, and
refresh them when they expire. A stored sign-in is replaced. mcp logout deletes it.`,
		Args: exactlyOne("login needs a server name; toolshelf mcp list shows them"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := oneServerManager(e, *file, args[0])
			if err != nil {
				return err
			}
			defer m.Close()
			ctx, cancel := context.WithTimeout(e.ctx, timeout)
			defer cancel()
			signedIn, err := m.Login(ctx, args[0], func(ctx context.Context, url string) error {
				printf(e.stderr, "Sign in to %s at this address (toolshelf waits for %s):\n\n  %s\n\n", args[0], timeout, url)
				if !noBrowser {
					openBrowser(e, url)
				}
				return nil
			})
			// The SDK does not always wrap the context's error: the
			// context says whether the time ran out.
			if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && e.ctx.Err() == nil {
				return fmt.Errorf("no sign-in to %s within --timeout %s; run toolshelf mcp login %s again", args[0], timeout, args[0])
			}
			if err != nil {
				return err
			}
			if !signedIn {
				printf(e.stdout, "%s accepted the connection without sign-in; nothing was stored\n", args[0])
				return nil
			}
			printf(e.stdout, "signed in to %s; the tokens are stored (toolshelf mcp logout %s deletes them)\n", args[0], args[0])
			return nil
		},
	}
	login.Flags().BoolVar(&noBrowser, "no-browser", false, "print the address only, do not open a browser")
	login.Flags().DurationVar(&timeout, "timeout", mcpclient.LoginTimeout, "how long to wait for the sign-in")
	logout := &cobra.Command{
		Use:   "logout SERVER",
		Short: "Delete the stored sign-in (OAuth tokens) of a server",
		Args:  exactlyOne("logout needs a server name; toolshelf mcp list shows them"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := oneServerManager(e, *file, args[0])
			if err != nil {
				return err
			}
			defer m.Close()
			removed, err := m.Logout(args[0])
			if err != nil {
				return err
			}
			if !removed {
				printf(e.stdout, "no sign-in of %s is stored\n", args[0])
				return nil
			}
			printf(e.stdout, "signed out of %s: its stored tokens are deleted\n", args[0])
			return nil
		},
	}
	return []*cobra.Command{login, logout}
}

// oneServerManager returns a Manager, not started, for the server named
// name of the servers file.
func oneServerManager(e *env, file, name string) (*mcpclient.Manager, error) {
	path, err := requireMCPFile(file)
	if err != nil {
		return nil, err
	}
	cfg, err := mcpclient.LoadConfig(path)
	sc, ok := cfg.Server(name)
	if !ok {
		if err != nil {
			return nil, err
		}
		return nil, usagef("no server %q in %s; toolshelf mcp list shows them", name, path)
	}
	return mcpclient.NewManager(&mcpclient.Config{Servers: []mcpclient.ServerConfig{sc}, Files: cfg.Files}, tool.NewRegistry(), nil,
		mcpclient.Options{Logger: e.logger(false), ClientName: "toolshelf", ClientVersion: version()})
}

// openBrowser opens url with $BROWSER, else xdg-open, when there is a
// display and the run is not under CI; it says so, or says nothing when it
// cannot (the address is printed anyway).
func openBrowser(e *env, url string) {
	if os.Getenv("CI") != "" || (os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" && os.Getenv("BROWSER") == "") {
		return
	}
	prog := os.Getenv("BROWSER")
	if prog == "" {
		prog = "xdg-open"
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		return
	}
	cmd := exec.Command(path, url)
	if err := cmd.Start(); err != nil {
		return
	}
	go func() { _ = cmd.Wait() }()
	printf(e.stderr, "(opened it with %s)\n", prog)
}
