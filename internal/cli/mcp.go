package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tool"
)

func newMCPCmd(e *env) *cobra.Command {
	var file string
	var wait time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Check the MCP servers of an mcp.json",
		Long: `mcp connects to the servers of --mcp (default: ./.toolshelf/mcp.json, then
$XDG_CONFIG_HOME/toolshelf/mcp.json), waits for them (at most --wait) and reports.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&file, "mcp", "", "MCP servers file (mcpServers format)")
	cmd.PersistentFlags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for servers to connect")
	connect := func() (*toolshelf.Shelf, error) {
		path, err := findMCPFile(file)
		if err != nil {
			return nil, err
		}
		shelf, err := toolshelf.New(e.ctx, toolshelf.Config{MCPFile: path,
			Logger: e.logger(false), ClientName: "toolshelf", ClientVersion: version()})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(e.ctx, wait)
		defer cancel()
		_ = shelf.MCP().WaitAll(ctx)
		return shelf, nil
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the servers: state, exposure, tool count and why a server failed",
		Long: `list connects to every enabled server, waits for them (at most --wait) and prints a line per
server: its state, exposure, tool count and, for a server that failed, the whole error. The exit
status is 1 when a server failed, was disconnected or was still connecting after --wait, so a
script can check a configuration.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			shelf, err := connect()
			if err != nil {
				return err
			}
			defer shelf.Close()
			m := shelf.MCP()
			servers := m.Servers()
			if asJSON {
				if err := writeServersJSON(e.stdout, servers); err != nil {
					return err
				}
			} else {
				writeServers(e.stdout, servers)
			}
			return unavailable(servers, wait)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the servers as a JSON array")
	tools := &cobra.Command{
		Use:   "tools SERVER",
		Short: "List a server's tools with their model-facing names",
		Args:  exactlyOne("tools needs a server name; toolshelf mcp list shows them"),
		RunE: func(cmd *cobra.Command, args []string) error {
			shelf, err := connect()
			if err != nil {
				return err
			}
			defer shelf.Close()
			m, reg := shelf.MCP(), shelf.Registry()
			found := false
			for _, s := range m.Servers() {
				if s.Name == args[0] {
					found = true
					if s.Err != nil {
						return fmt.Errorf("server %s is %s: %v", s.Name, s.State, s.Err)
					}
				}
			}
			if !found {
				return usagef("no server %q in the MCP configuration; toolshelf mcp list shows them", args[0])
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			for _, t := range reg.Tools() {
				if t.Origin.Server == args[0] && t.Exposure != tool.Hidden {
					printf(tw, "%s\t%s\t%s\n", t.Name, t.Exposure, oneLine(t.Description, 100))
				}
			}
			return tw.Flush()
		},
	}
	cmd.AddCommand(list, tools)
	return cmd
}

// serverJSON is a server's status as mcp list --json prints it.
type serverJSON struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	Exposure string `json:"exposure"`
	Tools    int    `json:"tools"`
	Error    string `json:"error,omitempty"`
}

// writeServersJSON prints server statuses as a JSON array.
func writeServersJSON(w io.Writer, servers []mcpclient.Status) error {
	out := make([]serverJSON, len(servers))
	for i, s := range servers {
		out[i] = serverJSON{Name: s.Name, State: string(s.State), Exposure: string(s.Exposure), Tools: s.Tools}
		if s.Err != nil {
			out[i].Error = s.Err.Error()
		}
	}
	return writeJSON(w, out)
}

// writeServers prints server statuses as a table, each error whole, on
// one line, made safe to print.
func writeServers(w io.Writer, servers []mcpclient.Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tEXPOSURE\tTOOLS\tERROR")
	for _, s := range servers {
		msg := ""
		if s.Err != nil {
			msg = oneLine(s.Err.Error(), 0)
		}
		printf(tw, "%s\t%s\t%s\t%d\t%s\n", s.Name, s.State, s.Exposure, s.Tools, msg)
	}
	tw.Flush()
}

// unavailable returns an error naming the servers that failed, were
// disconnected or were still connecting after the wait; nil when every
// enabled server is connected.
func unavailable(servers []mcpclient.Status, wait time.Duration) error {
	var bad []string
	for _, s := range servers {
		switch s.State {
		case mcpclient.Failed, mcpclient.Disconnected:
			bad = append(bad, fmt.Sprintf("%s (%s)", s.Name, s.State))
		case mcpclient.Connecting:
			bad = append(bad, fmt.Sprintf("%s (still connecting after --wait %s)", s.Name, wait))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	noun, verb := "servers", "are"
	if len(servers) == 1 {
		noun = "server"
	}
	if len(bad) == 1 {
		verb = "is"
	}
	return fmt.Errorf("%d of %d MCP %s %s not available: %s; the errors are above", len(bad), len(servers), noun, verb, strings.Join(bad, ", "))
}
