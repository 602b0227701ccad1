package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/lint"
	"github.com/toolshelf/toolshelf/tool"
)

// lintFailNever is the --fail-on value that never fails.
const lintFailNever = "never"

// lintShown is how many findings lint prints without --all, the most
// severe first.
const lintShown = 20

func newLintCmd(e *env) *cobra.Command {
	var (
		catalogs []string
		asJSON   bool
		fix      bool
		k        int
		failOn   string
		disable  []string
		all      bool
	)
	cmd := &cobra.Command{
		Use:   "lint [flags]",
		Short: "Check tool definitions: size, clarity, names, and whether search finds them",
		Long: `Lint checks the tools of the catalogs (by default the built-in catalog of 1,564
real MCP tools) the way a model and tool_search see them: descriptions of at most
three sentences that start with a verb, parameter schemas without text that tells
the model nothing, consistent and collision-free names, and whether each tool ranks
in the top k of the default ranker for a query made from its own name or
description. docs/authoring-tools.md explains every rule.

Output: the summary first (findings per rule that found any, unreachable tools,
the tokens --fix would save), then the 20 most severe findings grouped by server
and tool; --all prints every finding, every unreachable tool and the savings per
server. --fix prints the slimmed parameter schemas instead of the findings:
restating parameter descriptions, examples and defaults repeated in prose
removed, nothing else changed.

Exit status: 0 when no finding is at or above --fail-on (default error, so
warnings and info, which only a server's author can fix, do not fail); 1 when
one is (--fail-on warning gates your own servers in CI); 2 for a usage error.`,
		Example: `  toolshelf lint
  toolshelf lint --catalog ./my-server.json --fail-on warning
  toolshelf lint --catalog ./servers --fix
  toolshelf lint --json --disable unreachable`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if k <= 0 {
				return usagef("--k must be a positive rank, got %d", k)
			}
			var threshold lint.Severity
			if failOn != lintFailNever {
				s, err := lint.ParseSeverity(failOn)
				if err != nil {
					return usagef("--fail-on %q: use error, warning, info or never", failOn)
				}
				threshold = s
			}
			servers, err := loadLintServers(e, catalogs)
			if err != nil {
				return err
			}
			rep, err := lint.Run(servers, &lint.Options{K: k, Disable: disable})
			if err != nil {
				return usageError{err}
			}
			switch {
			case asJSON:
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(rep); err != nil {
					return err
				}
			case fix:
				writeLintFixes(e, rep)
				writeLintSavings(e, rep)
			default:
				writeLintSummary(e, rep, all)
				writeLintFindings(e, rep, all)
			}
			if threshold == 0 {
				return nil
			}
			if n := lintCountAtLeast(rep, threshold); n > 0 {
				return fmt.Errorf("lint: %d %s at or above %s (--fail-on %s)", n, lintPlural(n, "finding"), threshold, failOn)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&catalogs, "catalog", nil, "catalog file or folder of *.json files (repeatable; default: the built-in catalog)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole report as JSON (it holds the slimmed schemas too)")
	cmd.Flags().BoolVar(&fix, "fix", false, "print the slimmed parameter schemas, one per tool that changes, with their tokens before and after")
	cmd.Flags().IntVar(&k, "k", lint.DefaultK, "rank a tool must reach for a query made from its name or description")
	cmd.Flags().StringVar(&failOn, "fail-on", lint.Error.String(), "exit with status 1 when a finding of this severity or worse exists: error, warning, info or never")
	cmd.Flags().BoolVar(&all, "all", false, fmt.Sprintf("print every finding (not only the %d most severe), every unreachable tool and the savings per server", lintShown))
	cmd.Flags().StringArrayVar(&disable, "disable", nil, "rule id not to run (repeatable), e.g. unreachable")
	return cmd
}

// loadLintServers reads the given catalog files and folders, or the built-in
// catalog when there are none. As in loadShelf, an unreadable path is an
// error, problems inside readable paths are warnings (but for the tools the
// check refused, which the report lists as errors), and a server name
// loaded twice keeps its first copy.
func loadLintServers(e *env, paths []string) ([]*catalog.Server, error) {
	if len(paths) == 0 {
		return builtin.Servers()
	}
	servers, problems, err := readCatalogs(paths)
	if err != nil {
		return nil, err
	}
	for _, p := range catalog.Problems(problems) {
		if errors.Is(p, tool.ErrSchema) || errors.Is(p, tool.ErrTooLarge) {
			continue // a refused tool: the report has it as an error finding
		}
		printf(e.stderr, "toolshelf: warning: %v\n", p)
	}
	seen := map[string]string{}
	kept := servers[:0]
	tools := 0
	for _, s := range servers {
		if first, dup := seen[s.Name]; dup {
			printf(e.stderr, "toolshelf: warning: catalog %s: server %q is already loaded from %s; the second copy was skipped\n", s.File, s.Name, first)
			continue
		}
		seen[s.Name] = s.File
		kept = append(kept, s)
		tools += len(s.Tools) + len(s.Refused)
	}
	if tools == 0 {
		return nil, fmt.Errorf("no tools loaded from --catalog %s: fix the problems above", strings.Join(paths, ", "))
	}
	return kept, nil
}

// lintCountAtLeast counts the findings at or above a severity.
func lintCountAtLeast(rep *lint.Report, s lint.Severity) int {
	n := 0
	for _, f := range rep.Findings {
		if f.Severity >= s {
			n++
		}
	}
	return n
}

func lintPlural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// writeLintFindings prints the findings grouped by server and tool, each
// wrapped to the output's width: every one with all, else the lintShown
// most severe (the first of a severity first) and a line saying how many
// more --all prints.
func writeLintFindings(e *env, rep *lint.Report, all bool) {
	width := outputWidth(e.stdout)
	shown := make([]int, len(rep.Findings))
	for i := range shown {
		shown[i] = i
	}
	if !all && len(shown) > lintShown {
		slices.SortStableFunc(shown, func(a, b int) int { return cmp.Compare(rep.Findings[b].Severity, rep.Findings[a].Severity) })
		shown = shown[:lintShown]
		slices.Sort(shown)
	}
	if len(shown) > 0 {
		fmt.Fprintln(e.stdout)
	}
	server, tool := "\x00", "\x00"
	for _, i := range shown {
		f := rep.Findings[i]
		if f.Server != server {
			if server != "\x00" {
				fmt.Fprintln(e.stdout)
			}
			printf(e.stdout, "== %s\n", f.Server)
			server, tool = f.Server, "\x00"
		}
		if f.Tool != tool {
			name := f.Tool
			if name == "" {
				name = "(server)"
			}
			printLine(e.stdout, name)
			tool = f.Tool
		}
		where := ""
		if f.Path != "" {
			where = " [" + f.Path + "]"
		}
		printf(e.stdout, "%s", wrapIndented(fmt.Sprintf("%s%s: %s", f.Rule, where, f.Message), fmt.Sprintf("  %-7s ", f.Severity), "          ", width))
		printf(e.stdout, "%s", wrapIndented(f.Fix, "          fix: ", "               ", width))
	}
	if n := len(rep.Findings) - len(shown); n > 0 {
		printf(e.stdout, "\n%d more %s not shown: --all prints every one, --json the whole report\n", n, lintPlural(n, "finding"))
	}
}

// writeLintSummary prints the counts per rule that found anything, the
// unreachable tools (at most lintShown without all) and the savings (per
// server with all, else the total).
func writeLintSummary(e *env, rep *lint.Report, all bool) {
	bySev := map[lint.Severity]int{}
	for _, f := range rep.Findings {
		bySev[f.Severity]++
	}
	fmt.Fprintf(e.stdout, "Summary: %d tools of %d %s, %d %s (%d %s, %d %s, %d info)\n",
		rep.Tools, rep.Servers, lintPlural(rep.Servers, "server"), len(rep.Findings), lintPlural(len(rep.Findings), "finding"),
		bySev[lint.Error], lintPlural(bySev[lint.Error], "error"), bySev[lint.Warning], lintPlural(bySev[lint.Warning], "warning"), bySev[lint.Info])
	sev := map[string]lint.Severity{}
	for _, r := range lint.Rules() {
		sev[r.ID] = r.Severity
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, c := range rep.Counts {
		if c.Count > 0 {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", c.Rule, sev[c.Rule], c.Count)
		}
	}
	tw.Flush()
	switch {
	case rep.Unreachable == nil: // the rule did not run
	case len(rep.Unreachable) == 0:
		fmt.Fprintf(e.stdout, "Unreachable: none; every tool ranks in the top %d for a query made from its name or description\n", rep.K)
	default:
		fmt.Fprintf(e.stdout, "Unreachable: %d %s outside the top %d for every query made from their name and description\n",
			len(rep.Unreachable), lintPlural(len(rep.Unreachable), "tool"), rep.K)
		tw = tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		unreachable := rep.Unreachable
		if !all {
			unreachable = unreachable[:min(lintShown, len(unreachable))]
		}
		for _, u := range unreachable {
			rank := fmt.Sprintf(">%d", lint.SearchDepth)
			if u.BestRank > 0 {
				rank = fmt.Sprint(u.BestRank)
			}
			printf(tw, "  %s/%s\tbest rank %s\tfor %q\tbelow %s\n", u.Server, u.Tool, rank, u.BestQuery, strings.Join(lintFirst(u.Outranked, 3), ", "))
		}
		tw.Flush()
		if n := len(rep.Unreachable) - len(unreachable); n > 0 {
			printf(e.stdout, "  and %d more (--all)\n", n)
		}
	}
	if all {
		writeLintSavings(e, rep)
	} else {
		writeLintTotal(e, rep)
	}
}

// writeLintSavings prints what --fix saves per server and in total.
func writeLintSavings(e *env, rep *lint.Report) {
	if len(rep.Savings) > 0 {
		width := len("server")
		for _, s := range rep.Savings {
			width = max(width, len(show(s.Server)))
		}
		fmt.Fprintln(e.stdout, "Tokens --fix saves: tools slimmed, and tokens of all the server's declarations")
		fmt.Fprintf(e.stdout, "%-*s  %6s  %8s  %8s  %6s\n", width, "server", "tools", "before", "after", "saved")
		for _, s := range rep.Savings {
			fmt.Fprintf(e.stdout, "%-*s  %6d  %8d  %8d  %6d\n", width, show(s.Server), s.Tools, s.Before, s.After, s.Before-s.After)
		}
	}
	writeLintTotal(e, rep)
}

// writeLintTotal prints what --fix saves in all.
func writeLintTotal(e *env, rep *lint.Report) {
	saved := rep.TokensBefore - rep.TokensAfter
	pct := 0.0
	if rep.TokensBefore > 0 {
		pct = 100 * float64(saved) / float64(rep.TokensBefore)
	}
	fmt.Fprintf(e.stdout, "--fix saves %d of %d tokens (%.1f%%) in %d of %d tools\n",
		saved, rep.TokensBefore, pct, len(rep.Slimmed), rep.Tools)
}

// writeLintFixes prints each slimmed schema: a line naming the tool, its
// tokens and the removals, then the schema as one line of JSON.
func writeLintFixes(e *env, rep *lint.Report) {
	for _, s := range rep.Slimmed {
		var removed []string
		for _, c := range s.Changes {
			what := c.Removed
			if c.Path != "" {
				what = c.Path + ": " + what
			}
			removed = append(removed, what)
		}
		printf(e.stdout, "%s/%s: %d -> %d tokens; removed %s\n", s.Server, s.Tool, s.Before, s.After, strings.Join(removed, "; "))
		// The schema is JSON: its bidi and C1 characters (the only
		// unsafe ones JSON keeps raw) become \u escapes, which read the
		// same in JSON.
		printf(e.stdout, "%s\n\n", s.Schema)
	}
}

// lintFirst returns at most n elements of xs.
func lintFirst(xs []string, n int) []string {
	return xs[:min(n, len(xs))]
}
