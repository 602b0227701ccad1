package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/internal/usage"
	"github.com/toolshelf/toolshelf/internal/userdir"
	"github.com/toolshelf/toolshelf/mcpclient"
)

func newShelfCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "shelf",
		Short: "Learn from use which tools to load always, defer or remove",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newShelfSuggestCmd(e))
	return cmd
}

// suggestFlags are the flags of shelf suggest.
type suggestFlags struct {
	mcpFile, metrics string
	sessions, days   int
	asJSON           bool
	apply, reset     bool
}

func newShelfSuggestCmd(e *env) *cobra.Command {
	var f suggestFlags
	cmd := &cobra.Command{
		Use:   "suggest [flags]",
		Short: "Suggest tools to always load, defer or remove, from the metrics log",
		Long: `suggest reads the metrics log (--metrics; by default the one run and chat append to) and reports,
for the sessions of one servers file (--mcp, found as run finds it) within a window (the last
--sessions sessions of the last --days days), each MCP tool's share of the sessions that called it,
its definition tokens (o200k) and the tool_search round trips it cost. Then it suggests:

  - always-load: a tool called in at least half the sessions, when the round trips it costs (each
    a request of the window's mean size) outweigh its definition tokens in every request;
  - defer: a tool declared from the start of most sessions but called in fewer than half;
  - remove: a tool or a server never called in the window ("toolExposure" hidden, "enabled": false).

Each suggestion shows the tokens it saves per session. Sessions without a session file (--no-session,
the gateway) are not counted. Lines of the log that are not records are skipped with a warning.

--apply records the always-load suggestions in the state folder (shelf.json): every new run or chat
session with that servers file declares those tools from its first request. A session that started
before, or a resumed one, keeps the tools it had; the change takes effect at the next session. serve
reads it at start and marks those tools of its direct surface for clients to load up front.
--reset clears what was applied. The servers file itself is never changed: edit it to remove or defer.`,
		Example: `  toolshelf shelf suggest
  toolshelf shelf suggest --sessions 20 --json
  toolshelf shelf suggest --apply
  toolshelf shelf suggest --reset`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSuggest(e, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.mcpFile, "mcp", "", "the servers file whose sessions to read (default: ./.toolshelf/mcp.json, then $XDG_CONFIG_HOME/toolshelf/mcp.json)")
	fl.StringVar(&f.metrics, "metrics", "", "the metrics log (default: $XDG_STATE_HOME/toolshelf/metrics.jsonl)")
	fl.IntVar(&f.sessions, "sessions", usage.DefaultSessions, "read the last N sessions")
	fl.IntVar(&f.days, "days", usage.DefaultDays, "read the sessions of the last N days")
	fl.BoolVar(&f.asJSON, "json", false, "print the report and the suggestions as JSON")
	fl.BoolVar(&f.apply, "apply", false, "declare the always-load suggestions from the first request of every new session")
	fl.BoolVar(&f.reset, "reset", false, "clear what --apply recorded")
	return cmd
}

// suggestReport is what shelf suggest prints with --json.
type suggestReport struct {
	Report      usage.Report       `json:"report"`
	Suggestions []usage.Suggestion `json:"suggestions"`
	// Applied names the tools applied to the servers file, after --apply
	// when it was given.
	Applied []string `json:"applied"`
}

func runSuggest(e *env, f *suggestFlags) error {
	dir, err := userdir.State()
	if err != nil {
		return err
	}
	if f.reset {
		if f.apply {
			return usagef("--apply and --reset cannot be used together")
		}
		had, err := usage.Reset(dir)
		if err != nil {
			return err
		}
		if had {
			printLine(e.stdout, "Cleared the applied suggestions: new sessions defer their tools as the servers files say.")
		} else {
			printLine(e.stdout, "Nothing was applied.")
		}
		return nil
	}
	if f.sessions <= 0 || f.days <= 0 {
		return usagef("--sessions and --days must be at least 1")
	}
	servers, names, err := suggestServers(f.mcpFile)
	if err != nil {
		return err
	}
	path := f.metrics
	if path == "" {
		if path, err = defaultMetricsPath(); err != nil {
			return err
		}
	}
	records, err := readMetrics(e, path)
	if err != nil {
		return err
	}
	rep := usage.NewReport(records, servers, usage.Window{Sessions: f.sessions, Days: f.days, Now: time.Now()})
	out := suggestReport{Report: rep, Suggestions: usage.Suggest(rep, names)}
	state, err := usage.Load(dir)
	if err != nil {
		return err
	}
	if f.apply {
		var always []string
		for _, s := range out.Suggestions {
			if s.Action == usage.AlwaysLoad && len(always) < usage.MaxTools {
				always = append(always, s.Tool)
			}
		}
		if err := state.Apply(servers, always, time.Now()); err != nil {
			return err
		}
		if err := state.Save(dir); err != nil {
			return err
		}
	}
	out.Applied = state.AlwaysLoad(servers)
	if out.Applied == nil {
		out.Applied = []string{}
	}
	if out.Suggestions == nil {
		out.Suggestions = []usage.Suggestion{}
	}
	if f.asJSON {
		return writeJSON(e.stdout, out)
	}
	writeSuggestText(e.stdout, out, f)
	return nil
}

// suggestServers returns the servers file as the metrics log names it
// (absolute, "" for none) and its servers' names.
func suggestServers(flag string) (string, []string, error) {
	path := findMCPFile(flag)
	if path == "" {
		return "", nil, nil
	}
	cfg, err := mcpclient.LoadConfig(path)
	if err != nil {
		return "", nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	var names []string
	for _, s := range cfg.Servers {
		if !s.Disabled {
			names = append(names, s.Name)
		}
	}
	return abs, names, nil
}

func writeSuggestText(w io.Writer, out suggestReport, f *suggestFlags) {
	rep := out.Report
	file := rep.Servers
	if file == "" {
		file = "no servers file"
	}
	printf(w, "%s and %s of %s (the last %d sessions of %d days); a request sends %s tokens on average.\n",
		plural(rep.Sessions, "session"), plural(rep.Requests, "request"), file, f.sessions, f.days, num(rep.RequestTokens))
	if rep.Unsaved > 0 {
		printf(w, "%s without a session file not counted.\n", plural(rep.Unsaved, "request"))
	}
	if rep.Sessions == 0 {
		printLine(w, "No session to learn from: run or chat with this servers file first, or widen --days.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nTOOL\tSESSIONS\tSHARE\tTOKENS\tSEARCHES")
	for _, t := range rep.Tools {
		printf(tw, "%s\t%d\t%.0f%%\t%s\t%d\n", t.Name, t.Used, 100*t.Share, num(t.Tokens), t.RoundTrips)
	}
	tw.Flush()
	if len(out.Suggestions) == 0 {
		printLine(w, "\nNo suggestion: the shelf fits how these sessions used it.")
	} else {
		printLine(w, "\nSuggestions (tokens saved per session):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, s := range out.Suggestions {
			what := s.Tool
			if what == "" {
				what = "server " + s.Server
			}
			printf(tw, "  %s\t%s\t%s\t%s\n", s.Action, what, num(s.Saves), s.Why)
			if s.Action == usage.Defer && slices.Contains(out.Applied, s.Tool) {
				printf(tw, "  \t\t\tapplied by --apply: --apply again leaves it on the shelf\n")
			} else if edit := suggestEdit(s); edit != "" {
				printf(tw, "  \t\t\tin the servers file: %s\n", edit)
			}
		}
		tw.Flush()
	}
	if len(out.Applied) > 0 {
		printf(w, "\nApplied: new sessions declare %s from the first request (--reset clears).\n", strings.Join(out.Applied, ", "))
	} else {
		printLine(w, "\n--apply declares the always-load tools from the first request of every new session.")
	}
}

// suggestEdit is the servers-file change a remove or defer suggestion
// stands for, "" when there is none to write.
func suggestEdit(s usage.Suggestion) string {
	if s.Server == "" {
		return ""
	}
	if s.Tool == "" {
		return fmt.Sprintf(`"%s": {"enabled": false}`, s.Server)
	}
	name, ok := usage.ToolName(s.Tool, s.Server)
	if !ok {
		return ""
	}
	switch s.Action {
	case usage.Remove:
		return fmt.Sprintf(`"%s": {"toolExposure": {"%s": "hidden"}}`, s.Server, name)
	case usage.Defer:
		return fmt.Sprintf(`"%s": {"toolExposure": {"%s": "deferred"}}`, s.Server, name)
	}
	return ""
}
