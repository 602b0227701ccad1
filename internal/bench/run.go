package bench

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/selection"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// Strategy is how tools reach the model.
type Strategy string

// The strategies.
const (
	// Full declares every tool of the profile up front.
	Full Strategy = "full"
	// Search keeps tools deferred and lets the model load them with
	// tool_search.
	Search Strategy = "search"
	// Reference is the reference system's tool_search, measured on the
	// same tasks as a baseline for Search: deferred tools, its BM25 ranker
	// (pi) and its load policy (every match up to the limit).
	Reference Strategy = "reference"
	// Select is two-phase selection before every request: a selection
	// request (the catalog and the task) chooses the tools, which are
	// declared before the next request.
	Select Strategy = "select"
	// SelectLock selects once per task and keeps the set for the task's
	// turns (the task-level lock).
	SelectLock Strategy = "select+lock"
	// Codemode gives the profile's tools codemode exposure: the model sees
	// the codemode tool alone, whose description lists some of them, and writes one script per task that searches for each step's
	// tool with searchTools and calls it.
	Codemode Strategy = "codemode"
	// SearchPrefetch is Search with prompt prefetch: before each task's
	// first request the shelf searches the task's prompt and loads what
	// it asks for with confidence (toolsearch.DefaultPrefetch), so the
	// first request declares it. It runs with Config.Prefetch, after
	// Search, and is not among Strategies.
	SearchPrefetch Strategy = "search+prefetch"
)

// Strategies lists the strategies in report order.
var Strategies = []Strategy{Full, Search, Reference, Select, SelectLock, Codemode}

// selects reports whether a strategy uses two-phase selection.
func (s Strategy) selects() bool { return s == Select || s == SelectLock }

// searches reports whether a strategy loads tools with tool_search alone.
func (s Strategy) searches() bool {
	return s == Search || s == Reference || s == SearchPrefetch || s == SearchLearned
}

// Classes lists the tool classes the benchmark runs, in report order.
var Classes = []llm.ToolSupport{llm.ToolsChanges, llm.ToolsAdditions, llm.ToolsNone, llm.ToolsBridge}

// target is the adapter and model a class is measured on.
type target struct {
	api   provider.API
	model string
	caps  provider.Capabilities
}

// targetFor returns where a class is measured: changes on Anthropic
// Messages and additions on OpenAI Responses (client tool_search pairs),
// each with its provider's default model, none and bridge on Chat
// Completions with an open-weights model (llama-3.3-70b), so none and
// bridge compare on the same model. The emulator answers them all.
func targetFor(class llm.ToolSupport) (target, error) {
	on := func(name string) target {
		p, _ := toolshelf.LookupProvider(name)
		return target{p.API, p.DefaultModel, provider.DefaultTable().Lookup(p.API, p.DefaultModel)}
	}
	open := target{provider.OpenAIChat, "llama-3.3-70b", provider.DefaultTable().Lookup(provider.OpenAIChat, "llama-3.3-70b")}
	switch class {
	case llm.ToolsChanges:
		return on(toolshelf.Anthropic), nil
	case llm.ToolsAdditions:
		return on(toolshelf.OpenAI), nil
	case llm.ToolsNone:
		return open, nil
	case llm.ToolsBridge:
		open.caps.Tools = llm.ToolsBridge
		return open, nil
	}
	return target{}, fmt.Errorf("the benchmark has no target for class %q: use changes, additions, none or bridge", class)
}

// DefaultLoad is how many matches a search loads unless a run says
// otherwise: tool_search's own default.
var DefaultLoad = toolsearch.DefaultLoad

// Config configures a benchmark run.
type Config struct {
	// Tasks is the suite; nil means DefaultTasks.
	Tasks []Task
	// Profile is the set of servers; zero means the team profile.
	Profile Profile
	// Strategies and Classes select the runs; nil means all.
	Strategies []Strategy
	Classes    []llm.ToolSupport
	// Load is how many matches a search loads.
	Load toolsearch.LoadPolicy
	// Ranker names the search ranker: "toolshelf" (default) or "pi".
	Ranker string
	// Evict makes the runtime unload, after each step's tool has run, the
	// tools searches loaded (search and reference): every task then removes
	// tools, which the additions class pays for with one prefix rewrite
	// per removal.
	Evict bool
	// Prefetch adds the search+prefetch strategy (SearchPrefetch) to the
	// runs, after search, so the report compares search with and without
	// prompt prefetch.
	Prefetch bool
	// Budget, when positive, is a budget of declared tool tokens for the
	// strategies that load with tool_search (search and reference): past
	// it the agent unloads the least recently used loaded tools at the
	// class's cheapest point (toolshelf.UnloadConfig).
	Budget int
	// Learn runs search twice over the suite in each class: the first
	// pass records what the learners need in a private temporary folder,
	// the second (SearchLearned) runs with what it taught; Strategies and
	// Prefetch are then ignored.
	Learn bool
	// LearnFrom, with Learn, is the suite the first pass learns from in
	// place of Tasks; a third run, search over Tasks without learning, is
	// then what the second pass is compared with: what learning does for
	// tasks it has not seen.
	LearnFrom []Task
	// ContextWindow overrides the emulator's per-model prompt limit.
	ContextWindow int
	// Dump, when set, is a directory that receives every request body as
	// NNNNN-<class>-<strategy>-<task>.json.
	Dump string
	// Progress, when set, is called after every task run, with the task
	// runs done and their estimated cost ([Estimate]).
	Progress func(Progress)
	// Step, when set, is told what Run is doing, in a few words, as it
	// starts each step (loading the tokenizer, the profile's servers,
	// the task runs) and as each strategy and class finishes; calls are
	// not concurrent.
	Step func(string)
	// Parallel bounds the runs executed at once; zero means GOMAXPROCS.
	Parallel int
	// Model builds a class's model on the benchmark's emulator; the
	// command line gives adapter.Config{Emulator: em}.New (package
	// github.com/toolshelf/toolshelf/adapter). Run needs it.
	Model func(em *emulator.Server, p toolshelf.Provider) (llm.Model, error)

	// learning is a learning run's private state, set by runLearn.
	learning *learning
}

// SystemPrompt is the benchmark agent's system prompt: guidance of the
// size real agents send (about 1,000 tokens), written for the benchmark,
// so prompts pass the providers' minimum cacheable lengths as they do in
// practice.
//
//go:embed system_prompt.md
var SystemPrompt string

// Run runs the benchmark: every selected strategy and class over the
// suite, through the agent loop and the real adapters against an
// in-process emulator whose oracle plays the model.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Model == nil {
		return nil, errors.New("bench: Config.Model is nil: give the adapters' constructor on the emulator, adapter.Config{Emulator: em}.New of package github.com/toolshelf/toolshelf/adapter")
	}
	if cfg.Learn {
		return runLearn(ctx, cfg)
	}
	cfg = cfg.withDefaults()
	if cfg.Dump != "" {
		if err := os.MkdirAll(cfg.Dump, 0o755); err != nil {
			return nil, fmt.Errorf("--dump: %w", err)
		}
	}
	var stepMu sync.Mutex
	step := func(format string, args ...any) {
		if cfg.Step == nil {
			return
		}
		stepMu.Lock()
		defer stepMu.Unlock()
		cfg.Step(fmt.Sprintf(format, args...))
	}
	step("loading the tokenizer")
	counter, err := tokens.Default()
	if err != nil {
		return nil, err
	}
	step("loading profile %s from the built-in catalog", cfg.Profile.Name)
	servers, err := profileServers(cfg.Profile)
	if err != nil {
		return nil, err
	}
	orc := newOracle()
	rec := &recorder{}
	em, err := emulator.New(emulator.Config{Responder: orc, ContextWindow: cfg.ContextWindow,
		Observe: rec.add, Counter: counter, KeepBodies: cfg.Dump != "", MaxBodyBytes: 64 << 20})
	if err != nil {
		return nil, err
	}

	type job struct {
		strategy Strategy
		class    llm.ToolSupport
	}
	var jobs []job
	for _, s := range cfg.Strategies {
		for _, c := range cfg.Classes {
			jobs = append(jobs, job{s, c})
		}
	}
	work := newWorkModel(cfg, servers)
	progress := Progress{Total: len(jobs) * len(cfg.Tasks), Work: work.total(cfg)}
	var progressMu sync.Mutex
	tick := func(s Strategy, c llm.ToolSupport, t Task) {
		if cfg.Progress == nil {
			return
		}
		progressMu.Lock()
		defer progressMu.Unlock()
		progress.Done++
		progress.WorkDone += work.task(s, c, t)
		cfg.Progress(progress)
	}
	step("measuring %d servers, %d tools: %d task runs (%d tasks × %d strategies × %d classes), %d at once",
		len(servers), toolCount(servers), progress.Total, len(cfg.Tasks), len(cfg.Strategies), len(cfg.Classes), cfg.Parallel)
	results := make([]*RunResult, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, cfg.Parallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r := &runner{cfg: &cfg, counter: counter, servers: servers, oracle: orc, rec: rec, em: em,
				strategy: j.strategy, class: j.class, tick: tick}
			start := time.Now()
			results[i], errs[i] = r.run(ctx)
			if errs[i] == nil {
				step("measured %s on %s: %d tasks in %s", j.strategy, j.class, len(cfg.Tasks), time.Since(start).Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return newReport(cfg, results), nil
}

// withDefaults returns the configuration with its defaults filled in.
func (cfg Config) withDefaults() Config {
	if cfg.Tasks == nil {
		cfg.Tasks = DefaultTasks()
	}
	if cfg.Profile.Name == "" {
		cfg.Profile = Profiles()[0]
	}
	if cfg.Strategies == nil {
		cfg.Strategies = Strategies
	}
	if cfg.Prefetch && !slices.Contains(cfg.Strategies, SearchPrefetch) {
		at := len(cfg.Strategies)
		if i := slices.Index(cfg.Strategies, Search); i >= 0 {
			at = i + 1
		}
		cfg.Strategies = slices.Insert(slices.Clone(cfg.Strategies), at, SearchPrefetch)
	}
	if cfg.Classes == nil {
		cfg.Classes = Classes
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.GOMAXPROCS(0)
	}
	return cfg
}

// toolCount is the number of tools of the servers.
func toolCount(servers []*catalog.Server) int {
	n := 0
	for _, s := range servers {
		n += len(s.Tools)
	}
	return n
}

// profileServers returns the built-in catalog's servers of a profile.
func profileServers(p Profile) ([]*catalog.Server, error) {
	all, err := builtin.Servers()
	if err != nil {
		return nil, err
	}
	var out []*catalog.Server
	for _, s := range all {
		if p.includes(s.Name) {
			out = append(out, s)
		}
	}
	for _, name := range p.Servers {
		if !slices.ContainsFunc(out, func(s *catalog.Server) bool { return s.Name == name }) {
			return nil, fmt.Errorf("profile %s: no server %q in the built-in catalog", p.Name, name)
		}
	}
	return out, nil
}

// recorder keeps the emulator's records.
type recorder struct {
	mu      sync.Mutex
	records []emulator.Record
}

func (r *recorder) add(rec emulator.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
}

// take removes and returns the records of an API key.
func (r *recorder) take(key string) []emulator.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var mine, rest []emulator.Record
	for _, rec := range r.records {
		if rec.Key == key {
			mine = append(mine, rec)
		} else {
			rest = append(rest, rec)
		}
	}
	r.records = rest
	return mine
}

// runner runs one strategy and class over the suite.
type runner struct {
	cfg      *Config
	counter  *tokens.Counter
	servers  []*catalog.Server
	oracle   *oracle
	rec      *recorder
	em       *emulator.Server // answers every run's requests, in process
	strategy Strategy
	class    llm.ToolSupport
	tick     func(Strategy, llm.ToolSupport, Task)

	shelf    *toolshelf.Shelf
	reg      *tool.Registry
	initial  []string
	names    map[[2]string]string // (server, tool) → model-facing name
	selModel llm.Model            // answers selection requests (select strategies)
}

func (r *runner) key() string {
	return fmt.Sprintf("bench-%s-%s-%s", r.cfg.Profile.Name, r.strategy, r.class)
}

// selectKey is the API key of the run's selection requests, so their
// records are told apart from the task's own requests.
func (r *runner) selectKey() string { return r.key() + "-selection" }

// setup builds the shelf of the run through the front door, as run and
// chat do: the profile's tools (direct for full, codemode for codemode,
// deferred otherwise, with synthetic handlers), the ranker and the load
// policy.
func (r *runner) setup(ctx context.Context) error {
	r.names = map[[2]string]string{}
	exposure := tool.Deferred
	switch r.strategy {
	case Full:
		exposure = tool.Direct
	case Codemode:
		exposure = tool.Codemode
	}
	namer := tool.NewNamer()
	var tools []tool.Tool
	for _, s := range r.servers {
		for _, t := range s.AsTools(namer, exposure) {
			t.Handler = syntheticHandler(t.Name)
			tools = append(tools, t)
			r.names[[2]string{t.Origin.Server, t.Origin.Tool}] = t.Name
		}
	}
	mode, load := r.cfg.Ranker, r.cfg.Load
	if r.strategy == Reference {
		mode, load = search.ModePI, toolsearch.ReferenceLoad
	}
	// Codemode runs with the default limits: each script's memory cap is
	// its own VM's, whatever the parallel runs do.
	scfg := toolshelf.Config{Tools: tools, Ranker: mode, Load: &load}
	if r.cfg.learning != nil && r.strategy == Search {
		scfg.Metrics = r.cfg.learning.metricsPath(r.class)
	}
	shelf, err := toolshelf.New(ctx, scfg)
	if err != nil {
		return err
	}
	if st := r.cfg.learnedFor(r.strategy, r.class); st != nil {
		shelf.Searcher().SetAliases(st.aliases)
	}
	r.shelf, r.reg = shelf, shelf.Registry()
	return nil
}

// model returns the class's adapter, authenticating with key.
func (r *runner) model(key string) (llm.Model, error) {
	t, err := targetFor(r.class)
	if err != nil {
		return nil, err
	}
	noRetries := 0
	return r.cfg.Model(r.em, toolshelf.Provider{Name: toolshelf.Emulator, API: t.api, Model: t.model,
		APIKey: key, Capabilities: &t.caps, MaxRetries: &noRetries})
}

func (r *runner) run(ctx context.Context) (*RunResult, error) {
	if err := r.setup(ctx); err != nil {
		return nil, err
	}
	defer r.shelf.Close()
	model, err := r.model(r.key())
	if err != nil {
		return nil, err
	}
	if r.strategy.selects() {
		if r.selModel, err = r.model(r.selectKey()); err != nil {
			return nil, err
		}
	}
	t, _ := targetFor(r.class)
	res := &RunResult{Strategy: r.strategy, Class: r.class, API: t.api, Model: t.model}
	for _, task := range r.cfg.Tasks {
		tr, err := r.task(ctx, model, task)
		if err != nil {
			return nil, err
		}
		res.Tasks = append(res.Tasks, tr)
		r.tick(r.strategy, r.class, task)
	}
	return res, nil
}

// benchTime is the time of every message of a benchmark task, so that
// transcripts are the same from run to run.
func benchTime() time.Time { return time.UnixMilli(1) }

// task runs one task and measures it.
func (r *runner) task(ctx context.Context, model llm.Model, task Task) (TaskResult, error) {
	tr := TaskResult{ID: task.ID, Steps: len(task.Steps)}
	p := &plan{task: task}
	var missing []string
	for _, s := range task.Steps {
		name, ok := r.names[[2]string{s.Server, s.Tool}]
		if !ok {
			missing = append(missing, s.Server+"/"+s.Tool)
		}
		p.names = append(p.names, name)
	}
	if len(missing) > 0 {
		tr.Skipped = "not in the profile: " + strings.Join(missing, ", ")
		return tr, nil
	}
	if r.strategy == Codemode {
		tools := make([]tool.Tool, len(p.names))
		for i, n := range p.names {
			tools[i], _ = r.reg.Get(n)
		}
		p.script = codemodeScript(task.Steps, tools)
	}
	r.oracle.set(r.key(), p)
	t, _ := targetFor(r.class)
	acfg := toolshelf.AgentConfig{Model: model, SystemPrompt: SystemPrompt, MaxTurns: 4*len(task.Steps) + 4, Now: benchTime,
		Notify: func(n toolshelf.Note) {
			if n.Kind == toolshelf.NoteSelectionFailed {
				tr.Error = n.Text
			}
		}}
	if r.strategy.selects() {
		// The selection is declared after a head every task shares, so the
		// head stays cached across tasks; without the lock (select), every
		// later request is preceded by a selection.
		r.oracle.set(r.selectKey(), p)
		acfg.Select = &toolshelf.SelectConfig{Model: r.selModel, ModelID: t.model,
			Fallbacks: []selection.Fallback{selection.FallbackSearch}, EveryCall: r.strategy == Select}
	}
	if r.strategy == SearchPrefetch || r.strategy == SearchLearned {
		acfg.Prefetch = &toolsearch.Prefetch{}
	}
	if st := r.cfg.learnedFor(r.strategy, r.class); st != nil {
		acfg.Adjust = alwaysOnce(st.always)
	}
	if r.cfg.Evict && r.strategy.searches() {
		acfg.AfterToolCall = []agent.AfterHook{func(_ context.Context, c *agent.Call, _ *tool.Result) {
			if slices.Contains(p.names, c.Name) {
				var loaded []string
				for _, n := range r.reg.ActiveNames() {
					if !slices.Contains(r.initial, n) {
						loaded = append(loaded, n)
					}
				}
				r.reg.Deactivate(loaded...)
			}
		}}
	}
	if r.cfg.Budget > 0 && r.strategy.searches() {
		acfg.Unload = &toolshelf.UnloadConfig{Budget: r.cfg.Budget, Class: r.class}
	}
	a, err := r.shelf.Agent(ctx, acfg)
	if err != nil {
		return tr, err
	}
	defer a.Close()
	// What every task starts from: the same each time.
	r.initial = r.reg.ActiveNames()
	var runErr error
	for _, err := range a.Run(ctx, task.Prompt) {
		if err != nil {
			runErr = err
		}
	}
	if ctx.Err() != nil {
		return tr, ctx.Err()
	}
	records := r.rec.take(r.key())
	r.measure(&tr, p, a.Messages(), records)
	if r.strategy == SearchPrefetch || r.strategy == SearchLearned {
		measurePrefetch(&tr, p, a.Messages())
	}
	if r.cfg.learning != nil && r.strategy == Search {
		if err := r.cfg.learning.record(r.class, task.ID, a.Messages()); err != nil {
			return tr, fmt.Errorf("bench --learn: %w", err)
		}
	}
	un := a.Unloads()
	tr.Unloads, tr.Unloaded, tr.UnloadRewrite = len(un.Points), un.Tools, un.Rewrite
	if r.strategy.selects() {
		for _, rec := range r.rec.take(r.selectKey()) {
			tr.SelectRequests++
			tr.SelectInput += rec.Input
			tr.SelectCacheRead += rec.CacheRead
		}
	}
	if runErr != nil {
		tr.Error = runErr.Error()
		for _, rec := range records {
			if rec.OverWindow {
				tr.DoesNotFit = true
				tr.ProjectedToolTokens = rec.ToolTokens * (len(task.Steps) + 1)
			}
		}
	}
	if r.cfg.Dump != "" {
		for _, rec := range records {
			name := fmt.Sprintf("%05d-%s-%s-%s.json", rec.Seq, r.class, r.strategy, safeName(task.ID))
			if err := os.WriteFile(filepath.Join(r.cfg.Dump, name), rec.Body, 0o644); err != nil {
				return tr, fmt.Errorf("--dump: %w", err)
			}
		}
	}
	return tr, nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == 0 {
			return '_'
		}
		return r
	}, s)
}

// measure fills a task's figures from its transcript and the emulator's
// records.
func (r *runner) measure(tr *TaskResult, p *plan, msgs []llm.Message, records []emulator.Record) {
	for i, rec := range records {
		tr.Requests++
		tr.Input += rec.Input
		tr.ToolTokens += rec.ToolTokens
		tr.CacheRead += rec.CacheRead
		tr.CacheWrite += rec.CacheWrite
		tr.Uncached += rec.Uncached
		// What an ideal cache could serve: everything the previous request
		// of the task sent (an adapter that never rewrites its prefix only
		// appends), or, for the first request, what earlier tasks sent
		// that this one repeats (the emulator's figure).
		ideal := rec.Ideal
		if i > 0 && records[i-1].Status == 200 {
			ideal = max(ideal, emulator.Cacheable(rec.API, rec.Model, records[i-1].Input))
		}
		tr.Ideal += ideal
		if rec.CacheRead < ideal {
			tr.Misses++
		}
		tr.PerRequest = append(tr.PerRequest, RequestFigures{Status: rec.Status, Input: rec.Input, ToolTokens: rec.ToolTokens,
			CacheRead: rec.CacheRead, CacheWrite: rec.CacheWrite, Ideal: ideal})
	}
	// Steps: each step's tool called after the previous step's call;
	// searches counted between them. A codemode script's calls count as
	// the model's own, in the order the script made them.
	k, searches := 0, 0
	for _, name := range r.calls(tr, msgs) {
		switch {
		case name == toolsearch.Name:
			tr.Searches++
			searches++
		case k < len(p.names) && name == p.names[k]:
			if searches > 1 {
				tr.LaterQuery++
			}
			k, searches = k+1, 0
			tr.Done++
		default:
			if j := slices.Index(p.names[min(k+1, len(p.names)):], name); j >= 0 {
				k, searches = k+1+j+1, 0
				tr.Done++
			}
		}
	}
	tr.Failed = tr.Steps - tr.Done
	// Tools loaded and needed.
	loaded := map[string]llm.Tool{}
	for i, m := range msgs {
		if m.Role != llm.RoleSystem {
			continue
		}
		for _, t := range m.ToolsAdded {
			if t.Name == toolsearch.Name || t.Name == codemode.Name || (i == 0 && r.strategy.searches()) {
				continue
			}
			loaded[t.Name] = t
		}
	}
	for _, t := range loaded {
		tr.Loaded++
		tr.LoadedTokens += r.counter.Tool(t)
	}
	needed := map[string]bool{}
	for _, n := range p.names {
		if needed[n] {
			continue
		}
		needed[n] = true
		if t, ok := r.reg.Get(n); ok {
			tr.Needed++
			tr.NeededTokens += r.counter.Tool(t.Declaration())
		}
	}
	if r.strategy == Full && len(loaded) == 0 {
		// A run that failed before its first answer still declared
		// everything: count it from the registry.
		for _, n := range r.initial {
			if t, ok := r.reg.Get(n); ok {
				tr.Loaded++
				tr.LoadedTokens += r.counter.Tool(t.Declaration())
			}
		}
	}
}

// calls returns the tools a task's transcript called, in order: the
// model's calls, each codemode call replaced by the calls its script made
// (read from the result's details), which it counts into tr with their
// result tokens and failures; a script's searchTools calls count in
// tr.Searches as tool_search calls do (the details keep them apart from
// the calls, so they are not in the order and LaterQuery does not see
// them); it counts the removals too.
func (r *runner) calls(tr *TaskResult, msgs []llm.Message) []string {
	scripts := map[string]codemode.Details{} // tool call id → the script's calls
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult && m.ToolName == codemode.Name {
			if d, ok := codemode.ReadDetails(m.Details); ok {
				scripts[m.ToolCallID] = d
			}
		}
	}
	var out []string
	for _, m := range msgs {
		if m.Role == llm.RoleSystem && len(m.ToolsRemoved) > 0 {
			tr.Removals++
		}
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, c := range m.ToolCalls() {
			if c.Name != codemode.Name {
				out = append(out, c.Name)
				continue
			}
			tr.Scripts++
			d := scripts[c.ID]
			if d.Error != "" {
				tr.ScriptErrors++
			}
			tr.Searches += len(d.Searches)
			for _, ic := range d.Calls {
				out = append(out, ic.Tool)
				tr.InnerCalls++
				tr.InnerTokens += ic.ResultTokens
				if ic.IsError {
					tr.InnerFailed++
				}
			}
		}
	}
	return out
}

// syntheticHandler returns a handler whose results are deterministic text
// of realistic size (about 300 tokens), naming the tool and arguments.
func syntheticHandler(name string) tool.Handler {
	return tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s completed. Arguments: %s\n", name, args)
		for i := range 12 {
			fmt.Fprintf(&b, "- record %d: id=%s-%03d status=ok updated=2026-11-%02dT10:%02d:00Z owner=team-platform note=\"synthetic result line for benchmarking\"\n",
				i+1, strings.TrimPrefix(name, "mcp__"), i+1, 1+i%28, i*4%60)
		}
		return tool.TextResult(b.String()), nil
	})
}
