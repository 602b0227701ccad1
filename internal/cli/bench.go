package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/toolshelf/toolshelf/bench"
	"github.com/toolshelf/toolshelf/toolsearch"
)

func newBenchCmd(e *env) *cobra.Command {
	var (
		tasksFile, profiles, servers, strategies, classes, out, dump string
		load, window                                                 int
		cutoff                                                       float64
		quiet, evict                                                 bool
		ranker                                                       string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure tokens and prompt-cache reuse of each strategy and tool class, offline",
		Long: `bench runs a task suite through the agent loop and the real provider adapters against the
built-in emulator, whose oracle plays the model from what each request declares, and reports
per strategy and tool class: requests, input and tool-definition tokens, cache read / write /
uncached tokens, prefix preservation (cache reads ÷ what an ideal cache could have served),
misses, removals, tools loaded against tools needed (overhead factor) and failed steps.

Strategies: full (every tool of the profile declared up front), search (deferred, loaded with
tool_search), reference (the reference system's tool_search on the same tasks: its BM25 ranker
and loading every match; the baseline search is compared with), select (two-phase: a selection
request with the catalog before every request), select+lock (one selection per task, kept for
its turns) and codemode (the tools have codemode exposure: the oracle writes one script per task
that finds each step's tool with searchTools and calls it, and only the script's output reaches
the model); the oracle answers selection requests with the task's own tools, so the select
figures measure token cost, not selection accuracy. --ranker, --load and --cutoff apply to
search and the select strategies' fallback, --ranker to codemode's searchTools, none to
reference.
Classes: changes (Anthropic claude-opus-5-5), additions (OpenAI Responses
gpt-5.6-sol), none and bridge (Chat Completions, llama-3.3-70b).

Profiles: corpus (all 53 built-in servers, ~438k tokens of definitions: more than any context
window, so full does not fit) and team (11 servers, ~99k tokens). Without --profile both run,
corpus first. The last line summarises the last profile:
  search/full tool-tokens=<x>% overhead=<x> preservation(changes)=<x> preservation(bridge)=<x> failed-steps=<n>
followed, when reference ran, by the tools loaded per task and the share of steps found by search
and by reference, when select+lock ran, by the multi-step tool tokens per request of search
and select+lock and select+lock's preservation on changes and bridge, and, when codemode ran, by
codemode's and search's input tokens and requests on multi-step and one-step tasks (changes) and
codemode's failed steps. When codemode ran, a table by task length (one step, more) before the
notes compares the input tokens, requests and failed steps of search, select+lock and codemode.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := bench.Config{Load: toolsearch.LoadPolicy{Max: load, Relative: cutoff}, ContextWindow: window, Ranker: ranker, Evict: evict}
			if tasksFile != "" {
				tasks, err := bench.ReadTasks(tasksFile)
				if err != nil {
					return err
				}
				cfg.Tasks = tasks
			}
			var err error
			if cfg.Strategies, err = parseList(strategies, bench.Strategies, "--strategies"); err != nil {
				return err
			}
			if cfg.Classes, err = parseList(classes, bench.Classes, "--classes"); err != nil {
				return err
			}
			var profs []bench.Profile
			switch {
			case servers != "" && profiles != "":
				return usagef("give --profile or --servers, not both")
			case servers != "":
				profs = []bench.Profile{{Name: "custom", Description: "servers " + servers, Servers: splitList(servers)}}
			case profiles == "":
				profs = []bench.Profile{bench.Profiles()[1], bench.Profiles()[0]}
			default:
				for _, name := range splitList(profiles) {
					p, err := bench.ProfileNamed(name)
					if err != nil {
						return usageError{err}
					}
					profs = append(profs, p)
				}
			}
			for i, p := range profs {
				cfg.Profile = p
				cfg.Progress = nil
				cfg.Dump = dump
				bar := newProgress(e.stderr, quiet, "profile "+p.Name)
				if bar != nil {
					cfg.Progress = func(done, total int) {
						bar.ChangeMax(total)
						_ = bar.Set(done)
					}
				}
				rep, err := bench.Run(e.ctx, cfg)
				if bar != nil {
					_ = bar.Finish()
					fmt.Fprintln(e.stderr)
				}
				if err != nil {
					return err
				}
				if i > 0 {
					fmt.Fprintln(e.stdout)
				}
				if err := rep.WriteTable(e.stdout); err != nil {
					return err
				}
				if out != "" {
					dir := out
					if len(profs) > 1 {
						dir = out + string(os.PathSeparator) + p.Name
					}
					if err := rep.WriteFiles(dir); err != nil {
						return fmt.Errorf("--out: %w", err)
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tasksFile, "tasks", "", "task suite (JSON Lines, DESIGN §5), e.g. ../shared/eval/dev-tasks.jsonl (default: the embedded suite)")
	f.StringVar(&profiles, "profile", "", "profiles to run, comma-separated: corpus, team (default: both)")
	f.StringVar(&servers, "servers", "", "a custom profile: built-in catalog servers, comma-separated")
	f.StringVar(&strategies, "strategies", "", "strategies to run, comma-separated: full, search, reference, select, select+lock, codemode (default: all)")
	f.StringVar(&classes, "classes", "", "classes to run, comma-separated: changes, additions, none, bridge (default: all)")
	f.IntVar(&load, "load", bench.DefaultLoad.Max, "ranked matches a search loads at most (0: every match up to the limit, as the reference)")
	f.Float64Var(&cutoff, "cutoff", bench.DefaultLoad.Relative, "load a ranked match only when its score is at least this fraction of the best (0: no cut-off)")
	f.IntVar(&window, "context-window", 0, "prompt token limit of every model (default: per model, 128k-400k; -1: none)")
	f.StringVar(&out, "out", "", "write report.json, report.md and report.svg here (one folder per profile when several run)")
	f.StringVar(&dump, "dump", "", "write every request body here as NNNNN-<class>-<strategy>-<task>.json (full requests over the corpus are megabytes)")
	f.BoolVar(&quiet, "quiet", false, "no progress bar")
	f.BoolVar(&evict, "evict", false, "unload the tools searches loaded after each step's tool has run (search strategy), so tasks remove tools")
	f.StringVar(&ranker, "ranker", "toolshelf", "search ranker: toolshelf or pi (the reference's BM25)")
	return cmd
}

// newProgress returns a progress bar on a terminal, else nil.
func newProgress(w io.Writer, quiet bool, label string) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return progressbar.NewOptions(1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseList reads a comma-separated subset of known values; empty means
// all.
func parseList[T ~string](s string, known []T, flag string) ([]T, error) {
	if s == "" {
		return nil, nil
	}
	var out []T
	for _, p := range splitList(s) {
		if !slices.Contains(known, T(p)) {
			q := make([]string, len(known))
			for i, k := range known {
				q[i] = string(k)
			}
			return nil, usagef("%s: unknown %q; use %s", flag, p, strings.Join(q, ", "))
		}
		out = append(out, T(p))
	}
	return out, nil
}
