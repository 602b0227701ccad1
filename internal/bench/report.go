package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// TaskResult is what one task cost and achieved in one run.
type TaskResult struct {
	ID string `json:"id"`
	// Skipped says why the task did not run (its tools are not in the
	// profile); empty when it ran.
	Skipped string `json:"skipped,omitempty"`
	// Error is how the run ended when it failed (a provider error).
	Error string `json:"error,omitempty"`
	// DoesNotFit reports a request over the model's context window.
	DoesNotFit bool `json:"doesNotFit,omitempty"`
	// ProjectedToolTokens, for a task that does not fit, is the tool
	// tokens its requests would have carried: the rejected request's
	// times the steps plus the final answer.
	ProjectedToolTokens int `json:"projectedToolTokens,omitempty"`

	Requests   int `json:"requests"`
	Input      int `json:"input"`
	ToolTokens int `json:"toolTokens"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Uncached   int `json:"uncached"`
	// Ideal is what a cache that kept every earlier prompt could have
	// served; Misses counts requests that read less than that; Removals
	// counts the system updates that withdrew tools.
	Ideal    int `json:"ideal"`
	Misses   int `json:"misses"`
	Removals int `json:"removals"`

	Steps int `json:"steps"`
	Done  int `json:"done"`
	// Failed counts steps whose tool was never called.
	Failed int `json:"failed"`
	// Searches counts tool_search calls and codemode scripts'
	// searchTools calls; LaterQuery the steps found only by a query after
	// the first (tool_search's).
	Searches   int `json:"searches"`
	LaterQuery int `json:"laterQuery"`

	// Loaded counts the tools declared beyond the head (search) or in it
	// (full), with their definition tokens; Needed the distinct tools
	// the steps call.
	Loaded       int `json:"loaded"`
	LoadedTokens int `json:"loadedTokens"`
	Needed       int `json:"needed"`
	NeededTokens int `json:"neededTokens"`

	// Scripts counts the codemode calls (the codemode strategy) and
	// ScriptErrors those whose script failed; InnerCalls counts the tool
	// calls the scripts made, InnerFailed those that failed, and
	// InnerTokens the o200k tokens of their results, which stayed in the
	// scripts instead of reaching the model.
	Scripts      int `json:"scripts,omitempty"`
	ScriptErrors int `json:"scriptErrors,omitempty"`
	InnerCalls   int `json:"innerCalls,omitempty"`
	InnerFailed  int `json:"innerFailed,omitempty"`
	InnerTokens  int `json:"innerTokens,omitempty"`

	// SelectRequests counts the selection requests (select strategies),
	// with their input tokens (cache reads included) and cache reads;
	// they are not part of Requests or Input.
	SelectRequests  int `json:"selectRequests,omitempty"`
	SelectInput     int `json:"selectInput,omitempty"`
	SelectCacheRead int `json:"selectCacheRead,omitempty"`

	// Prefetched counts the tools the prompt prefetch declared with the
	// first request (search+prefetch), PrefetchedNeeded those of them a
	// step calls.
	Prefetched       int `json:"prefetched,omitempty"`
	PrefetchedNeeded int `json:"prefetchedNeeded,omitempty"`
	// Unloads counts the unload points of a run with a budget
	// (Config.Budget), Unloaded the tools they put back, and
	// UnloadRewrite the prompt tokens the agent estimates they made the
	// provider write again (toolshelf.Unload.Rewrite).
	Unloads       int `json:"unloads,omitempty"`
	Unloaded      int `json:"unloaded,omitempty"`
	UnloadRewrite int `json:"unloadRewrite,omitempty"`

	// PerRequest lists each request's figures, in order.
	PerRequest []RequestFigures `json:"perRequest,omitempty"`
}

// RequestFigures are one request's tokens as the emulator counted them.
type RequestFigures struct {
	Status     int `json:"status"`
	Input      int `json:"input"`
	ToolTokens int `json:"toolTokens"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Ideal      int `json:"ideal"`
}

// RunResult is one strategy and class over the suite.
type RunResult struct {
	Strategy Strategy        `json:"strategy"`
	Class    llm.ToolSupport `json:"class"`
	API      provider.API    `json:"api"`
	Model    string          `json:"model"`
	Tasks    []TaskResult    `json:"tasks"`
	Total    TaskResult      `json:"total"`
	// Ran counts the tasks that ran (not skipped); NotFit those with a
	// request over the context window.
	Ran    int `json:"ran"`
	NotFit int `json:"notFit"`
}

// Report is a whole benchmark run.
type Report struct {
	Profile     string `json:"profile"`
	Description string `json:"description"`
	Tasks       int    `json:"tasks"`
	Load        string `json:"load"`
	// Budget is the run's budget of declared tool tokens, zero without
	// one (Config.Budget).
	Budget int          `json:"budget,omitempty"`
	Runs   []*RunResult `json:"runs"`
	// Learned is what a learning run's first pass taught, per class
	// (Config.Learn); empty otherwise.
	Learned []Learned `json:"learned,omitempty"`
}

func newReport(cfg Config, runs []*RunResult) *Report {
	for _, r := range runs {
		for _, t := range r.Tasks {
			if t.Skipped != "" {
				continue
			}
			r.Ran++
			if t.DoesNotFit {
				r.NotFit++
			}
			r.Total.add(t)
		}
		r.Total.ID = "total"
	}
	return &Report{Profile: cfg.Profile.Name, Description: cfg.Profile.Description, Tasks: len(cfg.Tasks),
		Load: loadString(cfg), Budget: cfg.Budget, Runs: runs}
}

func loadString(cfg Config) string {
	l := cfg.Load
	if l.Max == 0 && l.Relative == 0 {
		return fmt.Sprintf("every match up to the limit (%d)", toolsearch.DefaultLimit)
	}
	parts := []string{}
	if l.Max > 0 {
		parts = append(parts, fmt.Sprintf("at most %d ranked", l.Max))
	}
	if l.Relative > 0 {
		parts = append(parts, fmt.Sprintf("score ≥ %.2f × best", l.Relative))
	}
	return strings.Join(parts, ", ") + " (exact names always)"
}

func (t *TaskResult) add(u TaskResult) {
	t.Requests += u.Requests
	t.Input += u.Input
	t.ToolTokens += u.ToolTokens
	t.ProjectedToolTokens += u.ProjectedToolTokens
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.Uncached += u.Uncached
	t.Ideal += u.Ideal
	t.Misses += u.Misses
	t.Removals += u.Removals
	t.Steps += u.Steps
	t.Done += u.Done
	t.Failed += u.Failed
	t.Searches += u.Searches
	t.LaterQuery += u.LaterQuery
	t.Loaded += u.Loaded
	t.LoadedTokens += u.LoadedTokens
	t.Needed += u.Needed
	t.NeededTokens += u.NeededTokens
	t.Scripts += u.Scripts
	t.ScriptErrors += u.ScriptErrors
	t.InnerCalls += u.InnerCalls
	t.InnerFailed += u.InnerFailed
	t.InnerTokens += u.InnerTokens
	t.SelectRequests += u.SelectRequests
	t.SelectInput += u.SelectInput
	t.SelectCacheRead += u.SelectCacheRead
	t.Prefetched += u.Prefetched
	t.PrefetchedNeeded += u.PrefetchedNeeded
	t.Unloads += u.Unloads
	t.Unloaded += u.Unloaded
	t.UnloadRewrite += u.UnloadRewrite
}

// Preservation is cache reads over what an ideal cache could have served;
// 1 when there was nothing to serve.
func (r *RunResult) Preservation() float64 {
	if r.Total.Ideal == 0 {
		return 1
	}
	return float64(r.Total.CacheRead) / float64(r.Total.Ideal)
}

// Overhead is the tool-definition tokens loaded per token of the tools the
// tasks needed.
func (r *RunResult) Overhead() float64 {
	if r.Total.NeededTokens == 0 {
		return 0
	}
	return float64(r.Total.LoadedTokens) / float64(r.Total.NeededTokens)
}

// MultiStepToolTokens is the mean tool-definition tokens per request over
// the tasks with more than one step that ran; ok is false when there are
// none.
func (r *RunResult) MultiStepToolTokens() (perRequest float64, ok bool) {
	tokens, requests := 0, 0
	for _, t := range r.Tasks {
		if t.Skipped == "" && t.Steps > 1 {
			tokens += t.ToolTokens
			requests += t.Requests
		}
	}
	if requests == 0 {
		return 0, false
	}
	return float64(tokens) / float64(requests), true
}

// toolTokens returns the run's tool-definition tokens and whether they
// include projections for tasks that did not fit.
func (r *RunResult) toolTokens() (int, bool) {
	return r.Total.ToolTokens + r.Total.ProjectedToolTokens, r.NotFit > 0
}

// Run returns the result of a strategy and class, or nil.
func (rep *Report) Run(s Strategy, c llm.ToolSupport) *RunResult {
	for _, r := range rep.Runs {
		if r.Strategy == s && r.Class == c {
			return r
		}
	}
	return nil
}

// share returns a run's tool tokens as a fraction of full's, same class.
func (rep *Report) share(r *RunResult) (float64, bool) {
	full := rep.Run(Full, r.Class)
	if full == nil {
		return 0, false
	}
	ft, _ := full.toolTokens()
	rt, _ := r.toolTokens()
	if ft == 0 {
		return 0, false
	}
	return float64(rt) / float64(ft), true
}

// cells returns the columns every table shows the same way: tasks (with
// how many do not fit), tool tokens (marked when projected) and the share
// of full. Numbers group thousands with commas.
func (rep *Report) cells(r *RunResult, projectedMark string) (tasks, tool, share string) {
	tt, projected := r.toolTokens()
	tool = num(tt)
	if projected {
		tool += projectedMark
	}
	share = "—"
	if s, ok := rep.share(r); ok {
		share = fmt.Sprintf("%.1f%%", 100*s)
	}
	tasks = num(r.Ran)
	if r.NotFit > 0 {
		tasks = fmt.Sprintf("%s (%s do not fit)", num(r.Ran), num(r.NotFit))
	}
	return tasks, tool, share
}

// preservationCell is a run's preservation as a cell: "—" when an ideal
// cache could have served nothing (no request was answered).
func preservationCell(r *RunResult) string {
	if r.Total.Ideal == 0 && r.Total.CacheRead == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f", r.Preservation())
}

// selectionCells are a run's selection requests and their input, "—"
// for a strategy that does not select.
func selectionCells(r *RunResult) (requests, input string) {
	if !r.Strategy.selects() {
		return "—", "—"
	}
	return num(r.Total.SelectRequests), num(r.Total.SelectInput)
}

// textWidth is the width the text report's prose is wrapped to; its
// tables stay within 120 columns.
const textWidth = 100

// WriteTable writes the report as two aligned tables, tokens and cache
// and steps, each within 120 columns, with notes on what needs saying,
// then the summary line.
func (rep *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s\n", wrap(fmt.Sprintf("profile %s: %s; %d tasks; search loads %s", rep.Profile, rep.Description, rep.Tasks, rep.Load), textWidth))
	removals := slices.ContainsFunc(rep.Runs, func(r *RunResult) bool { return r.Total.Removals > 0 })

	fmt.Fprintln(w, "\nTokens")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tclass\trequests\tinput\ttool tokens\tof full\tper request\tsel. requests\tsel. input\t")
	for _, r := range rep.Runs {
		_, toolCol, shareCol := rep.cells(r, "*")
		selReq, selIn := selectionCells(r)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Strategy, r.Class, num(r.Total.Requests), num(r.Total.Input),
			toolCol, shareCol, perRequest(r), selReq, selIn)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nCache and steps")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	header := "strategy\tclass\tcache read\tcache write\tuncached\tpreservation\tmisses\t"
	if removals {
		header += "removals\t"
	}
	fmt.Fprintln(tw, header+"loaded/needed\toverhead\tfailed\t")
	for _, r := range rep.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t", r.Strategy, r.Class, num(r.Total.CacheRead), num(r.Total.CacheWrite),
			num(r.Total.Uncached), preservationCell(r), num(r.Total.Misses))
		if removals {
			fmt.Fprintf(tw, "%s\t", num(r.Total.Removals))
		}
		fmt.Fprintf(tw, "%s/%s\t%.1f\t%s\t\n", num(r.Total.Loaded), num(r.Total.Needed), r.Overhead(), num(r.Total.Failed))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	notes := rep.notFitNotes()
	if skipped := rep.skipped(); skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d tasks skipped: their tools are not in the profile.", skipped))
	}
	if lengths := rep.lengthRuns(); len(lengths) > 0 {
		fmt.Fprintf(w, "\nBy task length (input: the task's own requests; sel. input: select+lock's selection requests)\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "strategy\tclass\ttask steps\ttasks\trequests\tinput\tsel. input\tfailed\t")
		for _, r := range lengths {
			for _, multi := range []bool{true, false} {
				l, steps := r.ByLength(multi), "1"
				if multi {
					steps = "2+"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Strategy, r.Class, steps, num(l.Tasks),
					num(l.Requests), num(l.Input), num(l.SelectInput), num(l.Failed))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	notes = append(notes, rep.referenceNote(), rep.selectNote(), rep.codemodeNote(), rep.prefetchNote(), rep.learnNote(), rep.budgetNote(), columnsNote(removals))
	for _, note := range notes {
		if note != "" {
			fmt.Fprintf(w, "\n%s\n", wrap(note, textWidth))
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", rep.Summary())
	return err
}

// Length is what the tasks of one length (one step, or more) cost in a
// run.
type Length struct {
	// Tasks counts the tasks that ran; Steps and Failed their steps and
	// the failed ones.
	Tasks, Steps, Failed int
	// Requests and Input are the tasks' own requests and their input
	// tokens; SelectInput the input of their selection requests.
	Requests, Input, SelectInput int
}

// ByLength sums the run's tasks that ran with more than one step (multi)
// or exactly one.
func (r *RunResult) ByLength(multi bool) Length {
	var l Length
	for _, t := range r.Tasks {
		if t.Skipped != "" || (t.Steps > 1) != multi {
			continue
		}
		l.Tasks++
		l.Steps += t.Steps
		l.Failed += t.Failed
		l.Requests += t.Requests
		l.Input += t.Input
		l.SelectInput += t.SelectInput
	}
	return l
}

// lengthRuns returns, when codemode ran, the runs the by-length table
// compares it with: search, select+lock and codemode, class by class.
func (rep *Report) lengthRuns() []*RunResult {
	ran := false
	for _, r := range rep.Runs {
		ran = ran || r.Strategy == Codemode
	}
	if !ran {
		return nil
	}
	var out []*RunResult
	for _, c := range Classes {
		for _, st := range []Strategy{Search, SelectLock, Codemode} {
			if r := rep.Run(st, c); r != nil {
				out = append(out, r)
			}
		}
	}
	return out
}

// codemodeNote explains the codemode strategy's figures when it ran.
func (rep *Report) codemodeNote() string {
	for _, r := range rep.Runs {
		if r.Strategy == Codemode {
			return fmt.Sprintf("codemode: the tools have codemode exposure, so every request declares the codemode tool alone "+
				"(its description lists tools within its budget); the oracle writes one script per task that searches for each step's "+
				"tool with searchTools (the step's queries in order; found when in the top %d) and calls it, passing the previous "+
				"result along, then answers. %s/%s: scripts %s (failed %s), searches in them %s, tool calls in them %s (failed %s), "+
				"tokens of their results %s, which stayed in the scripts.", toolsearch.DefaultLimit, r.Strategy, r.Class, num(r.Total.Scripts), num(r.Total.ScriptErrors),
				num(r.Total.Searches), num(r.Total.InnerCalls), num(r.Total.InnerFailed), num(r.Total.InnerTokens))
		}
	}
	return ""
}

// budgetNote gives, with a budget of declared tool tokens, what the
// unloads of each run that loads with tool_search cost.
func (rep *Report) budgetNote() string {
	if rep.Budget <= 0 {
		return ""
	}
	var parts []string
	for _, r := range rep.Runs {
		if !r.Strategy.searches() {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s/%s: %s unload points, %s tools unloaded, %s prompt tokens rewritten (estimate), "+
			"cache writes %s, preservation %s", r.Strategy, r.Class, num(r.Total.Unloads), num(r.Total.Unloaded),
			num(r.Total.UnloadRewrite), num(r.Total.CacheWrite), strings.TrimSpace(preservationCell(r))))
	}
	return fmt.Sprintf("budget %s declared tool tokens: past it, search and reference unload the least recently used "+
		"loaded tools where the class pays least: changes and bridge at once; additions and none once the cache has "+
		"lapsed, after a compaction, or once carrying the tokens over the budget has cost what the rewrite does "+
		"(a benchmark task's cache never lapses). %s.",
		num(rep.Budget), strings.Join(parts, "; "))
}

// columnsNote says what the text tables' columns are.
func columnsNote(removals bool) string {
	s := "input counts every prompt token (cache read + cache write + uncached); tool tokens are the part " +
		"that declared tools, \"of full\" their share of full's in the same class, \"per request\" their mean " +
		"per request over the multi-step tasks. Preservation is cache reads ÷ what an ideal cache could have " +
		"served; misses are the requests that read less. Loaded/needed: tools loaded against tools the tasks " +
		"called; overhead: the definition tokens of the first ÷ the second; failed: steps whose tool was never called."
	if removals {
		s += " Removals: the updates that withdrew tools."
	}
	return s
}

// notFitNotes explains, per strategy, the runs with tasks over the
// context window: what was refused, why cache reads are 0 and steps
// failed, and that their tool tokens are projected.
func (rep *Report) notFitNotes() []string {
	var notes []string
	for _, s := range append(slices.Clone(Strategies), SearchPrefetch, SearchLearned) {
		var classes []string
		all, some := true, false
		for _, r := range rep.Runs {
			if r.Strategy != s || r.NotFit == 0 {
				continue
			}
			some = true
			all = all && r.NotFit == r.Ran
			c := string(r.Class)
			if r.NotFit < r.Ran {
				c += fmt.Sprintf(": %d of %d tasks", r.NotFit, r.Ran)
			}
			classes = append(classes, c)
		}
		if !some {
			continue
		}
		which := fmt.Sprintf("* %s (%s): ", s, strings.Join(classes, ", "))
		if all {
			notes = append(notes, which+"no task fits the model's context window. The emulator refused each task's "+
				"first request with the provider's context-length error, as the real API would, so nothing was cached "+
				"(cache read 0, no preservation to show) and every step failed; the input is that of the refused "+
				"requests, and the tool tokens are projected (the refused request's tool tokens × the requests the task "+
				"needs), so they exceed the input.")
			continue
		}
		notes = append(notes, which+"those tasks do not fit the model's context window: the emulator refused their "+
			"first request with the provider's context-length error, so their steps failed and nothing of them was "+
			"cached; their tool tokens are projected (the refused request's tool tokens × the requests the task needs).")
	}
	return notes
}

// wrap breaks text into lines of at most width columns at spaces (a
// longer word stays whole).
func wrap(text string, width int) string {
	var b strings.Builder
	col := 0
	for i, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case col+1+n > width:
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}

// numbers prints integers with thousands separators, for people: the
// text and Markdown reports. The JSON report and the summary line keep
// plain numbers.
var numbers = message.NewPrinter(language.English)

// num returns n with thousands separators: 12,370,001.
func num(n int) string { return numbers.Sprintf("%d", n) }

// perRequest is a run's tool tokens per request on multi-step tasks, as
// a cell.
func perRequest(r *RunResult) string {
	v, ok := r.MultiStepToolTokens()
	if !ok {
		return "—"
	}
	return num(int(math.Round(v)))
}

// LoadedPerTask is the tools a run loaded per task that ran.
func (r *RunResult) LoadedPerTask() float64 {
	if r.Ran == 0 {
		return 0
	}
	return float64(r.Total.Loaded) / float64(r.Ran)
}

// Found is the share of steps whose tool the model could call: declared
// up front, loaded earlier, or loaded by one of the step's queries.
func (r *RunResult) Found() float64 {
	if r.Total.Steps == 0 {
		return 0
	}
	return float64(r.Total.Done) / float64(r.Total.Steps)
}

// comparedRuns returns the search and reference runs of one class, the
// changes class when it ran: nil when either is missing.
func (rep *Report) comparedRuns() (s, ref *RunResult) {
	for _, c := range Classes {
		if s, ref = rep.Run(Search, c), rep.Run(Reference, c); s != nil && ref != nil {
			return s, ref
		}
	}
	return nil, nil
}

// referenceNote compares search with the reference's tool_search when
// both ran.
func (rep *Report) referenceNote() string {
	s, ref := rep.comparedRuns()
	if s == nil {
		return ""
	}
	return fmt.Sprintf("search against the reference's tool_search (pi BM25, loading every match up to %d), %s class: "+
		"tools loaded per task %.1f vs %.1f, steps found with the step's queries %.1f%% vs %.1f%% (%d vs %d failed of %d), "+
		"tool-definition tokens %s vs %s.",
		toolsearch.DefaultLimit, s.Class, s.LoadedPerTask(), ref.LoadedPerTask(), 100*s.Found(), 100*ref.Found(), s.Total.Failed, ref.Total.Failed,
		s.Total.Steps, num(s.Total.ToolTokens), num(ref.Total.ToolTokens))
}

// selectNote explains the select strategies' figures when they ran.
func (rep *Report) selectNote() string {
	for _, r := range rep.Runs {
		if r.Strategy.selects() {
			return "select, select+lock: the oracle answers each selection request with the task's own tools (or their groups), " +
				"so these figures measure what two-phase selection costs in tokens, not how well a model selects. Selection " +
				"requests are counted apart (sel. requests, sel. input) and not in requests or input."
		}
	}
	return ""
}

func (rep *Report) skipped() int {
	if len(rep.Runs) == 0 {
		return 0
	}
	n := 0
	for _, t := range rep.Runs[0].Tasks {
		if t.Skipped != "" {
			n++
		}
	}
	return n
}

// Summary is the report's last line: search against full (tool tokens,
// overhead, failed steps) on the changes class, or the first class search
// ran in, and search's prefix preservation under changes and bridge; then,
// when they ran, search against the reference (tools loaded per task,
// steps found), search against select+lock (multi-step tool tokens per
// request on changes, select+lock's preservation) and codemode against
// search (input tokens and requests on multi-step and one-step tasks on
// changes, codemode's failed steps), and search against search+prefetch
// (requests per task, input, the tasks whose first request got a needed
// tool and those that took a request fewer, preservation).
func (rep *Report) Summary() string {
	s := rep.Run(Search, llm.ToolsChanges)
	for _, r := range rep.Runs {
		if s != nil {
			break
		}
		if r.Strategy == Search {
			s = r
		}
	}
	tokens, overhead, failed := "n/a", "n/a", "n/a"
	if s != nil {
		if share, ok := rep.share(s); ok {
			tokens = fmt.Sprintf("%.1f%%", 100*share)
		}
		overhead = fmt.Sprintf("%.2f", s.Overhead())
		failed = fmt.Sprint(s.Total.Failed)
	}
	// pres is a run's preservation as printed, n/a when it did not run.
	pres := func(st Strategy, c llm.ToolSupport) string {
		if r := rep.Run(st, c); r != nil {
			return fmt.Sprintf("%.3f", r.Preservation())
		}
		return "n/a"
	}
	line := fmt.Sprintf("search/full tool-tokens=%s overhead=%s preservation(changes)=%s preservation(bridge)=%s failed-steps=%s",
		tokens, overhead, pres(Search, llm.ToolsChanges), pres(Search, llm.ToolsBridge), failed)
	if s, ref := rep.comparedRuns(); s != nil {
		line += fmt.Sprintf(" | loaded/task search=%.1f reference=%.1f; steps found search=%.1f%% reference=%.1f%%",
			s.LoadedPerTask(), ref.LoadedPerTask(), 100*s.Found(), 100*ref.Found())
	}
	if lock := rep.Run(SelectLock, llm.ToolsChanges); lock != nil {
		lockPR, _ := lock.MultiStepToolTokens()
		searchPR := "n/a"
		if s := rep.Run(Search, llm.ToolsChanges); s != nil {
			if v, ok := s.MultiStepToolTokens(); ok {
				searchPR = fmt.Sprintf("%.0f", v)
			}
		}
		line += fmt.Sprintf(" | multi-step tool-tokens/request(changes): search=%s select+lock=%.0f; select+lock preservation(changes)=%s preservation(bridge)=%s",
			searchPR, lockPR, pres(SelectLock, llm.ToolsChanges), pres(SelectLock, llm.ToolsBridge))
	}
	if cm := rep.Run(Codemode, llm.ToolsChanges); cm != nil {
		// figures is a run's input and requests on tasks of one length,
		// n/a when it did not run.
		figures := func(r *RunResult, multi bool) string {
			if r == nil {
				return "n/a"
			}
			l := r.ByLength(multi)
			return fmt.Sprintf("%d/%d", l.Input, l.Requests)
		}
		s := rep.Run(Search, llm.ToolsChanges)
		line += fmt.Sprintf(" | input/requests(changes) multi-step: codemode=%s search=%s, one-step: codemode=%s search=%s; codemode failed-steps=%d",
			figures(cm, true), figures(s, true), figures(cm, false), figures(s, false), cm.Total.Failed)
	}
	return line + rep.prefetchSummary() + rep.learnSummary()
}
