package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/internal/atomicfile"
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
		// Nothing to check is a failure of the check.
		path, err := requireMCPFile(file)
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
server: its state, exposure, tool count and, for a server that failed, the whole error. A server
that asks for sign-in is "needs login", with the command that signs in. The exit status is 1 when
a server failed, was disconnected, needs login or was still connecting after --wait, or when there
is no servers file (it says where it looked), so a script can check a configuration.`,
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
	var out string
	dump := &cobra.Command{
		Use:   "dump [SERVER...] --out DIR",
		Short: "Write servers' tool lists as catalog files, for lint --catalog and search --catalog",
		Long: `dump connects to the servers (every enabled one, or those named), waits for them (at most
--wait) and writes each one's tools/list answer to DIR/SERVER.json, in the format of the built-in
catalog's files: the server's name, version, title and instructions, its capabilities, and the
tools as toolshelf receives them. The command that starts a server and its environment are not
written. Then lint and search work on your own servers:

  toolshelf mcp dump --out servers
  toolshelf lint --catalog servers
  toolshelf search --catalog servers "what the tool should do"

The exit status is 1 when a server could not be dumped (the others are written).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("mcp dump needs --out DIR, the folder to write the catalog files to")
			}
			shelf, err := connect()
			if err != nil {
				return err
			}
			defer shelf.Close()
			return dumpServers(e, shelf.MCP(), args, out)
		},
	}
	dump.Flags().StringVar(&out, "out", "", "folder to write the SERVER.json files to (made when missing; files of the same name are replaced)")
	cmd.AddCommand(list, tools, dump)
	cmd.AddCommand(newLoginCmds(e, &file)...)
	cmd.AddCommand(newConformanceClientCmd(e))
	return cmd
}

// dumpServers writes the catalog file of each named server (every enabled
// one when none is named) to dir, saying what it wrote.
func dumpServers(e *env, m *mcpclient.Manager, names []string, dir string) error {
	servers := m.Servers()
	for _, n := range names {
		if !slices.ContainsFunc(servers, func(s mcpclient.Status) bool { return s.Name == n }) {
			return usagef("no server %q in the MCP configuration; toolshelf mcp list shows them", n)
		}
	}
	if len(names) == 0 {
		for _, s := range servers {
			if s.State != mcpclient.Disabled {
				names = append(names, s.Name)
			}
		}
	}
	if len(names) == 0 {
		return errors.New("no enabled MCP server to dump: the servers file has none")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("mcp dump --out: %w", err)
	}
	var failed []string
	for _, name := range names {
		data, err := m.CatalogFile(e.ctx, name)
		if err == nil {
			err = atomicfile.Write(filepath.Join(dir, name+".json"), data, 0o644)
		}
		if err != nil {
			printf(e.stderr, "toolshelf: %v\n", err)
			failed = append(failed, name)
			continue
		}
		var doc struct{ Tools []json.RawMessage }
		_ = json.Unmarshal(data, &doc)
		printf(e.stdout, "wrote %s (%s)\n", filepath.Join(dir, name+".json"), plural(len(doc.Tools), "tool"))
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d MCP servers not dumped: %s; the errors are above", len(failed), len(names), strings.Join(failed, ", "))
	}
	return nil
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
		case mcpclient.NeedsLogin:
			bad = append(bad, fmt.Sprintf("%s (needs login: run toolshelf mcp login %s)", s.Name, s.Name))
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
