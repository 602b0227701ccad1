package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/adapter"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/internal/bench"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/toolsearch"
)

func newBenchCmd(e *env) *cobra.Command {
	var (
		tasksFile, learnFrom, profiles, servers, strategies, classes, out, dump string
		load, window, budget                                                    int
		cutoff                                                                  float64
		quiet, evict, prefetch, learn                                           bool
		ranker                                                                  string
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

Profiles: team (11 servers, ~99k tokens of definitions) and corpus (all 53 built-in servers,
~438k tokens: more than any context window, so full does not fit: its requests are refused, as
the real APIs refuse them, and its tool tokens are projected). Without --profile both run, team
first. Each profile's report is two tables (tokens; cache and steps), notes, and a summary line:
  search/full tool-tokens=<x>% overhead=<x> preservation(changes)=<x> preservation(bridge)=<x> failed-steps=<n>
followed, when reference ran, by the tools loaded per task and the share of steps found by search
and by reference, when select+lock ran, by the multi-step tool tokens per request of search
and select+lock and select+lock's preservation on changes and bridge, and, when codemode ran, by
codemode's and search's input tokens and requests on multi-step and one-step tasks (changes) and
codemode's failed steps. When codemode ran, a table by task length (one step, more) before the
notes compares the input tokens, requests and failed steps of search, select+lock and codemode.
--prefetch adds search+prefetch after search: search, with each task's prompt searched before its first request
and what it asks for with confidence loaded (run --prefetch); a note and the summary compare the two on changes:
requests per task, input, preservation, and the tasks whose first request got a needed tool.
--learn runs search twice (other strategies and --prefetch are ignored): the first pass records its transcripts and
metrics log in a private temporary folder, the second (search+learned) runs with what they taught: the learned aliases,
the usage suggestion's always-load tools and prompt prefetch. A note gives both passes and what was learned; the
summary line ends with | learn(changes): requests=<first>,<second> input=… failed=… overhead=… preservation=….
--learn-from FILE learns from another suite's first pass and compares search and search+learned on the tasks of
--tasks: what learning does for tasks it has not seen.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := bench.Config{Load: toolsearch.LoadPolicy{Max: load, Relative: cutoff}, ContextWindow: window, Ranker: ranker, Evict: evict, Budget: budget,
				Prefetch: prefetch, Learn: learn,
				Model: func(em *emulator.Server, p toolshelf.Provider) (llm.Model, error) {
					return adapter.Config{Emulator: em}.New(p)
				}}
			if tasksFile != "" {
				tasks, err := bench.ReadTasks(tasksFile)
				if err != nil {
					return err
				}
				cfg.Tasks = tasks
			}
			if learnFrom != "" {
				tasks, err := bench.ReadTasks(learnFrom)
				if err != nil {
					return err
				}
				cfg.Learn, cfg.LearnFrom = true, tasks
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
				profs = bench.Profiles() // team, then corpus: the README's order
			default:
				for _, name := range splitList(profiles) {
					p, err := bench.ProfileNamed(name)
					if err != nil {
						return usageError{err}
					}
					profs = append(profs, p)
				}
			}
			cfg.Dump = dump
			prog, err := newBenchProgress(e.stderr, quiet, cfg, profs)
			if err != nil {
				return err
			}
			for i, p := range profs {
				cfg.Profile = p
				cfg.Progress, cfg.Step = prog.profile(i), prog.step(i)
				prog.begin(i)
				rep, err := bench.Run(e.ctx, cfg)
				if err != nil {
					prog.finish()
					return err
				}
				prog.end(i)
				prog.pause()
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
					printf(e.stderr, "wrote %s: report.json, report.md, report.svg\n", dir)
				}
			}
			prog.finish()
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tasksFile, "tasks", "", "task suite: JSON Lines, one task per line with id, prompt, lang and steps (each a server, a tool and two queries), as internal/bench/TASKS.md describes (default: the embedded suite, bench/tasks.jsonl)")
	f.StringVar(&profiles, "profile", "", "profiles to run, comma-separated: team, corpus (default: both, in that order)")
	f.StringVar(&servers, "servers", "", "a custom profile: built-in catalog servers, comma-separated")
	f.StringVar(&strategies, "strategies", "", "strategies to run, comma-separated: full, search, reference, select, select+lock, codemode (default: all)")
	f.StringVar(&classes, "classes", "", "classes to run, comma-separated: changes, additions, none, bridge (default: all)")
	f.IntVar(&load, "load", bench.DefaultLoad.Max, "ranked matches a search loads at most (0: every match up to the limit, as the reference)")
	f.Float64Var(&cutoff, "cutoff", bench.DefaultLoad.Relative, "load a ranked match only when its score is at least this fraction of the best (0: no cut-off)")
	f.IntVar(&window, "context-window", 0, "prompt token limit of every model (default: per model, 128k-400k; -1: none)")
	f.StringVar(&out, "out", "", "write report.json, report.md and report.svg (a bar chart of each run's input) here (one folder per profile when several run)")
	f.StringVar(&dump, "dump", "", "write every request body here as NNNNN-<class>-<strategy>-<task>.json (full requests over the corpus are megabytes)")
	f.BoolVar(&quiet, "quiet", false, "no progress on stderr (the bar on a terminal, the step lines elsewhere)")
	f.IntVar(&budget, "budget", 0, "a budget of declared tool tokens for search and reference: past it, unload the least recently used loaded tools where the class pays least (0: none)")
	f.BoolVar(&evict, "evict", false, "unload the tools searches loaded after each step's tool has run (search strategy), so tasks remove tools")
	f.BoolVar(&prefetch, "prefetch", false, "also run search+prefetch: search with the prompt prefetched before each task's first request")
	f.StringVar(&learnFrom, "learn-from", "", "with --learn (implied): the task suite the first pass learns from; search and search+learned then both run --tasks")
	f.BoolVar(&learn, "learn", false, "run search twice, the second pass with what the first learned (aliases, always-load, prefetch)")
	f.StringVar(&ranker, "ranker", "toolshelf", "search ranker: toolshelf or pi (the reference's BM25)")
	return cmd
}

// benchProgress is what bench tells the person on stderr while it runs
// (nothing with --quiet): a line for each step of each profile (loading,
// measuring, each strategy and class measured, the profile done), and on
// a terminal a progress bar over every profile it runs, elsewhere a line
// at every tenth of a profile's work. The share done and the estimate of
// the time left come from the estimated work of all the profiles
// (bench.Estimate), so the estimate neither starts over with each
// profile nor assumes that every task, or every profile, costs what the
// first ones did.
type benchProgress struct {
	w     io.Writer
	quiet bool
	bar   *progressbar.ProgressBar
	names []string
	works []float64 // each profile's estimated work
	total float64
	start time.Time
	now   func() time.Time

	mu      sync.Mutex
	tenths  int       // without a bar: the tenths of the current profile's work printed
	started time.Time // when the current profile started
}

// progressSteps is the bar's resolution.
const progressSteps = 1000

func newBenchProgress(w io.Writer, quiet bool, cfg bench.Config, profs []bench.Profile) (*benchProgress, error) {
	p := &benchProgress{w: w, quiet: quiet, now: time.Now}
	if quiet {
		return p, nil
	}
	for _, prof := range profs {
		cfg.Profile = prof
		work, err := bench.Estimate(cfg)
		if err != nil {
			return nil, err
		}
		p.names = append(p.names, prof.Name)
		p.works = append(p.works, work)
		p.total += work
	}
	p.start = p.now()
	if isTerminal(w) {
		p.bar = progressbar.NewOptions(progressSteps, progressbar.OptionSetWriter(w), progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetDescription(p.status(0, bench.Progress{})), progressbar.OptionClearOnFinish())
	}
	return p, nil
}

// line prints a line about the i-th profile, above the bar when there
// is one (the next update draws it again). The caller holds p.mu.
func (p *benchProgress) line(i int, s string) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	printLine(p.w, fmt.Sprintf("bench: profile %s (%d of %d): %s", p.names[i], i+1, len(p.names), s))
}

// begin notes that the i-th profile starts.
func (p *benchProgress) begin(i int) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tenths, p.started = 0, p.now()
	if p.bar == nil {
		p.line(i, "starting")
	}
}

// end notes that the i-th profile is done, with the time it took.
func (p *benchProgress) end(i int) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(i, "done in "+p.now().Sub(p.started).Round(100*time.Millisecond).String())
}

// step returns the Step callback of the i-th profile, nil with --quiet.
func (p *benchProgress) step(i int) func(string) {
	if p.quiet {
		return nil
	}
	return func(s string) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.line(i, s)
	}
}

// profile returns the Progress callback of the i-th profile, nil with
// --quiet.
func (p *benchProgress) profile(i int) func(bench.Progress) {
	if p.quiet {
		return nil
	}
	return func(pr bench.Progress) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.bar != nil {
			p.bar.Describe(p.status(i, pr))
			_ = p.bar.Set(int(progressSteps * p.done(i, pr) / p.total))
			return
		}
		if pr.Work <= 0 {
			return
		}
		if t := int(10 * pr.WorkDone / pr.Work); t > p.tenths {
			p.tenths = t
			p.line(i, p.counts(i, pr))
		}
	}
}

// done is the work done when the i-th profile reports pr: the profiles
// before it, and its share of its own estimate.
func (p *benchProgress) done(i int, pr bench.Progress) float64 {
	done := 0.0
	for _, w := range p.works[:i] {
		done += w
	}
	if pr.Work > 0 {
		done += p.works[i] * pr.WorkDone / pr.Work
	}
	return done
}

// status is the bar's description: the profile, its tasks done, and the
// time left, once there is enough done to tell.
func (p *benchProgress) status(i int, pr bench.Progress) string {
	return fmt.Sprintf("profile %s (%d of %d), %s", p.names[i], i+1, len(p.names), p.counts(i, pr))
}

// counts is the task runs of the i-th profile done and the time left,
// once there is enough done to tell.
func (p *benchProgress) counts(i int, pr bench.Progress) string {
	s := fmt.Sprintf("%d/%d tasks", pr.Done, pr.Total)
	if left, ok := timeLeft(p.now().Sub(p.start), p.done(i, pr), p.total); ok {
		s += ", about " + left.String() + " left"
	}
	return s
}

// pause clears the bar from its line, so that a report can be printed;
// the next update draws it again.
func (p *benchProgress) pause() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}

// finish fills the bar and clears it (OptionClearOnFinish).
func (p *benchProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// timeLeft estimates the time the rest of the work takes from the time
// the work done took; ok is false until 2% of it is done. Estimates are
// rounded to 5 seconds (a second below 10).
func timeLeft(elapsed time.Duration, done, total float64) (time.Duration, bool) {
	if total <= 0 || done < 0.02*total || elapsed <= 0 {
		return 0, false
	}
	left := time.Duration(float64(elapsed) * (total - done) / done)
	if left >= 10*time.Second {
		return left.Round(5 * time.Second), true
	}
	return left.Round(time.Second), true
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
