package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
)

func newServeCmd(e *env) *cobra.Command {
	var mcpFile, surface, httpAddr, token, metrics string
	var list bool
	var authf authFlags
	var wait time.Duration
	var maxScripts, scriptMemoryMiB int
	var queueWait, scriptTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the MCP servers of an mcp.json as one MCP server (the gateway)",
		Long: `serve puts toolshelf between an MCP client (Claude Code, Claude Desktop, Cursor, VS Code,
Codex, Gemini CLI, …) and the MCP servers of --mcp: one index over every server, tools loaded on
demand, and a tool list that never changes under the client's prompt cache.

Surfaces (--surface on stdio; the URL path over HTTP):
  meta    (default) tool_search and call_tool, a fixed tools/list: search returns the found
          tools' definitions, call_tool validates the arguments and runs the tool
  direct  every upstream tool, typed, for clients that defer tools themselves
  codemode tool_search and code, a fixed tools/list: code runs a JavaScript script in which the
          upstream tools are functions (tools.<name>(args), searchTools), under limits (30 s,
          256 MiB, 1 MiB of output, 1,000 calls, 8 at a time); only what the script logs and
          returns goes back to the client, and a cancelled request stops the script

Standard input and output by default (the client starts the gateway); --http ADDR serves
streamable HTTP at http://ADDR/mcp (meta), /mcp/meta, /mcp/direct and /mcp/codemode, stateless,
for clients of both protocol generations. HTTP listens on loopback unless told otherwise, and an address other
machines can reach needs --auth-issuer or a --token of at least 32 bytes (openssl rand -hex 32).
With --auth-issuer the gateway is an OAuth 2.1 protected resource: it publishes its resource
metadata at /.well-known/oauth-protected-resource/mcp (and for each path), and a request needs an
access token of that authorization server whose audience is the endpoint's URL (or
--auth-audience), with every --auth-scope. Upstream servers connect in the background: the gateway
answers at once, and a search waits for servers still connecting (the direct surface's first
tools/list too, 4 s from the start at most). Tools hidden in the servers
file ("toolExposure": {"delete_*": "hidden"}) are denied on every surface. Every search and call
is appended to the metrics log (read it with toolshelf stats). Scripts of the code tool run
--max-scripts at a time over every client, each in its own VM under --script-timeout and
--script-memory; one past the bound waits up to --queue-wait, then is refused. Once it serves, serve
says so on one line of stderr (a JSON record under --log-format json); Ctrl-C stops it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := gateway.ParseSurface(surface)
			if err != nil {
				return usagef("--surface: %v", err)
			}
			if maxScripts < 0 || scriptMemoryMiB < 0 || queueWait < 0 || scriptTimeout < 0 {
				return usagef("--max-scripts, --queue-wait, --script-timeout and --script-memory take positive values, or 0 for the defaults")
			}
			path, err := requireMCPFile(mcpFile)
			if err != nil {
				return err
			}
			cfg, err := mcpclient.LoadConfig(path)
			if err != nil {
				return err
			}
			if err := authf.check(httpAddr, token); err != nil {
				return err
			}
			var ln net.Listener
			if httpAddr != "" {
				if ln, err = listenGateway(httpAddr, token, authf.issuer != ""); err != nil {
					return err
				}
				defer ln.Close()
			}
			// The MCP SDK logs its own end as an error when asked to stop;
			// a requested stop is not one.
			logger := slog.New(quietStop{e.ctx, e.logger(true).Handler()})
			gwAuth, err := authf.build(e.ctx, ln, logger)
			if err != nil {
				return err
			}
			servers, always := gateway.ShelfConfig(cfg.Servers)
			// The tools shelf suggest --apply recorded, read once: a
			// change takes effect when serve starts again.
			var alwaysTools []string
			if abs, err := filepath.Abs(path); err == nil {
				alwaysTools = learned(e, abs)
			}
			scfg := toolshelf.Config{Servers: servers, Logger: logger, ClientName: "toolshelf", ClientVersion: version()}
			if metrics != metricsOff {
				if metrics == "" {
					if metrics, err = defaultMetricsPath(); err != nil {
						printf(e.stderr, "toolshelf: warning: metrics not recorded: %v (--metrics off disables them)\n", err)
						metrics = ""
					}
				}
				scfg.Metrics = metrics
			}
			shelf, err := toolshelf.New(e.ctx, scfg)
			if err != nil {
				return err
			}
			defer shelf.Close()
			limits := codemode.Limits{Timeout: scriptTimeout, Memory: int64(scriptMemoryMiB) << 20}
			g, err := gateway.New(shelf, gateway.Config{Name: "toolshelf", Version: version(), AlwaysLoad: always, AlwaysLoadTools: alwaysTools, Logger: logger,
				Limits: limits, MaxScripts: maxScripts, QueueWait: queueWait})
			if err != nil {
				return err
			}
			defer g.Close()
			if list {
				return listSurface(e, shelf, g, s, wait)
			}
			e.ready(s, ln, len(cfg.Servers), path)
			if ln == nil {
				err = g.ServeStdio(e.ctx, s, io.NopCloser(e.stdin), nopWriteCloser{e.stdout})
				if errors.Is(err, io.EOF) {
					return nil
				}
			} else {
				hs := gateway.NewHTTPServer(g.Handler(gateway.HTTPConfig{Token: token, Auth: gwAuth}))
				err = serveUntilDone(e.ctx, hs, ln)
			}
			if e.ctx.Err() != nil && errors.Is(err, context.Canceled) {
				return nil // a requested stop (Ctrl-C, SIGTERM): a clean exit
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&mcpFile, "mcp", "", "MCP servers file in the mcpServers format (default: ./.toolshelf/mcp.json, then $XDG_CONFIG_HOME/toolshelf/mcp.json)")
	fl.StringVar(&surface, "surface", string(gateway.Meta), "what stdio clients see: meta (tool_search and call_tool), direct (every upstream tool) or codemode (tool_search and code)")
	fl.StringVar(&httpAddr, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8931) instead of standard input and output")
	fl.StringVar(&token, "token", os.Getenv("TOOLSHELF_TOKEN"), "bearer token HTTP clients must send (default $TOOLSHELF_TOKEN); beyond loopback, of at least 32 bytes")
	authf.register(fl)
	fl.StringVar(&metrics, "metrics", "", "metrics log of searches and calls, or off (default: $XDG_STATE_HOME/toolshelf/metrics.jsonl)")
	fl.BoolVar(&list, "list", false, "print the surface's tools/list with each definition's tokens (once the servers connected, at most --wait) and exit")
	fl.DurationVar(&wait, "wait", 30*time.Second, "with --list: how long to wait for the servers to connect")
	fl.IntVar(&maxScripts, "max-scripts", 0, fmt.Sprintf("scripts of the code tool that run at once, over every client (0: %d)", codemode.DefaultMaxScripts))
	fl.DurationVar(&queueWait, "queue-wait", 0, fmt.Sprintf("how long a script past --max-scripts waits for a turn before it is refused (0: %v)", codemode.DefaultQueueWait))
	fl.DurationVar(&scriptTimeout, "script-timeout", 0, fmt.Sprintf("each script's time limit (0: %v)", codemode.DefaultLimits.Timeout))
	fl.IntVar(&scriptMemoryMiB, "script-memory", 0, fmt.Sprintf("each script's memory limit in MiB (0: %d)", codemode.DefaultLimits.Memory>>20))
	return cmd
}

// listSurface prints what a client of the surface would be told: each
// tool with its definition's o200k tokens, and the total.
func listSurface(e *env, shelf *toolshelf.Shelf, g *gateway.Gateway, s gateway.Surface, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(e.ctx, wait)
	defer cancel()
	_ = shelf.MCP().WaitAll(ctx)
	total := 0
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tTOKENS")
	tools := g.Tools(s)
	for _, t := range tools {
		n, err := gateway.Tokens(t)
		if err != nil {
			return err
		}
		total += n
		printf(tw, "%s\t%d\n", t.Name, n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printf(e.stdout, "%s surface: %d tools, %d tokens of tool definitions\n", s, len(tools), total)
	for _, st := range shelf.MCP().Servers() {
		switch st.State {
		case mcpclient.Connected, mcpclient.Disabled:
		case mcpclient.NeedsLogin:
			printf(e.stderr, "toolshelf: MCP server %s needs login%s\n", st.Name, errSuffix(st.Err))
		default:
			printf(e.stderr, "toolshelf: MCP server %s is %s%s\n", st.Name, st.State, errSuffix(st.Err))
		}
	}
	return nil
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// listenGateway listens on addr, refusing a token the gateway could not
// check (gateway.CheckToken: surrounding whitespace, control characters)
// before it listens, and an address other machines can reach unless
// --auth-issuer (signedIn) or a token of at least gateway.MinTokenBytes
// guards it.
func listenGateway(addr, token string, signedIn bool) (net.Listener, error) {
	if err := gateway.CheckToken(token, false); err != nil {
		return nil, usagef("--token (or $TOOLSHELF_TOKEN): %v", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: %w", addr, err)
	}
	if beyond := gateway.BeyondLoopback(ln.Addr()); beyond && token == "" && !signedIn {
		ln.Close()
		return nil, usagef("--http %s listens beyond this machine (%s) without authentication: set --token (or $TOOLSHELF_TOKEN) so clients must send it, or --auth-issuer so they must sign in, or listen on 127.0.0.1", addr, ln.Addr())
	} else if err := gateway.CheckToken(token, beyond); err != nil {
		ln.Close()
		return nil, usagef("--token (or $TOOLSHELF_TOKEN) for --http %s, which listens beyond this machine: %v", addr, err)
	}
	return ln, nil
}

// nopWriteCloser is a writer whose Close does nothing: the gateway does
// not close the process's standard output.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// ready tells a person who started serve by hand that the gateway serves,
// on one line of stderr: where (stdio and the surface, or the HTTP URL),
// how many servers of which file, and how to stop it. With --log-format
// json it is a JSON log record instead ("gateway ready"), so that stderr
// stays JSON lines. Over stdio, stdout is the protocol's and stays
// untouched.
func (e *env) ready(s gateway.Surface, ln net.Listener, servers int, path string) {
	if e.logs.format == logJSON {
		attrs := []any{"servers", servers, "mcp", path}
		if ln != nil {
			attrs = append(attrs, "url", "http://"+ln.Addr().String()+"/mcp")
		} else {
			attrs = append(attrs, "transport", "stdio", "surface", string(s))
		}
		slog.New(newLogHandler(e.stderr, logJSON, false, slog.LevelInfo)).Info("gateway ready", attrs...)
		return
	}
	of := fmt.Sprintf("%d servers of %s", servers, path)
	if servers == 1 {
		of = "1 server of " + path
	}
	if ln != nil {
		printf(e.stderr, "toolshelf gateway on http://%s/mcp (and /direct, /codemode): %s; Ctrl-C stops it\n", ln.Addr(), of)
		return
	}
	printf(e.stderr, "toolshelf gateway on stdio (%s surface): %s; waiting for a client on stdin, Ctrl-C stops it\n", s, of)
}

// quietStop is a log handler that drops the records of a requested stop:
// once ctx is done, a record whose error is context.Canceled (the MCP SDK
// logs "server run cancelled" as an error) says nothing went wrong.
type quietStop struct {
	ctx context.Context
	slog.Handler
}

// Handle drops a record of the stop and passes on every other.
func (q quietStop) Handle(ctx context.Context, r slog.Record) error {
	if q.ctx.Err() != nil {
		stop := false
		r.Attrs(func(a slog.Attr) bool {
			if err, ok := a.Value.Resolve().Any().(error); ok && errors.Is(err, context.Canceled) {
				stop = true
			}
			return !stop
		})
		if stop {
			return nil
		}
	}
	return q.Handler.Handle(ctx, r)
}

// WithAttrs returns the handler with attrs, still quiet on a stop.
func (q quietStop) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietStop{q.ctx, q.Handler.WithAttrs(attrs)}
}

// WithGroup returns the handler with a group, still quiet on a stop.
func (q quietStop) WithGroup(name string) slog.Handler {
	return quietStop{q.ctx, q.Handler.WithGroup(name)}
}
