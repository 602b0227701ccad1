package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/toolshelf/toolshelf/internal/lexicon"
	"github.com/toolshelf/toolshelf/internal/usage"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
)

// SearchLearned is Search with what a first pass of Search over the same
// suite learned: the aliases its transcripts taught (package
// internal/lexicon), the always-load tools its metrics log suggests
// (package internal/usage), declared from each task's first request,
// and prompt prefetch. It runs with Config.Learn, after Search, and is
// not among Strategies.
const SearchLearned Strategy = "search+learned"

// Learned is what the first pass of a learning run (Config.Learn) taught,
// in one class: what the second pass ran with.
type Learned struct {
	Class llm.ToolSupport `json:"class"`
	// Aliases counts the learned aliases.
	Aliases int `json:"aliases"`
	// AlwaysLoad names the tools the usage suggestion loads always.
	AlwaysLoad []string `json:"alwaysLoad"`
	// Prefetched counts the tools the second pass's prompt prefetch
	// loaded, over every task.
	Prefetched int `json:"prefetched"`
	// From counts the tasks of the suite the first pass learned from
	// (Config.LearnFrom); zero when it was the report's own.
	From int `json:"learnedFromTasks,omitempty"`
}

// learning is a learning run's private state, in a temporary folder: what
// pass 1 records (each class's metrics log and transcripts) and what pass
// 2 reads (each class's lexicon and always-load tools).
type learning struct {
	dir string

	mu      sync.Mutex
	pass1   map[llm.ToolSupport]*recording
	learned map[llm.ToolSupport]*learnedState
}

// recording is what one class's first pass recorded, task by task.
type recording struct {
	transcripts [][]llm.Message
	sessions    []string // per task, its session id in the metrics log
	marks       []int    // per task, the log's records when it ended
}

// learnedState is what a class's second pass runs with.
type learnedState struct {
	aliases *lexicon.Lexicon
	always  []string
}

// classDir is the class's folder of the private state.
func (l *learning) classDir(c llm.ToolSupport) string { return filepath.Join(l.dir, string(c)) }

// metricsPath is the class's metrics log of the first pass.
func (l *learning) metricsPath(c llm.ToolSupport) string {
	return filepath.Join(l.classDir(c), "metrics.jsonl")
}

// record keeps a first-pass task's transcript and where its records end
// in the metrics log.
func (l *learning) record(c llm.ToolSupport, id string, msgs []llm.Message) error {
	records, err := readLog(l.metricsPath(c))
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	rec := l.pass1[c]
	if rec == nil {
		rec = &recording{}
		l.pass1[c] = rec
	}
	rec.transcripts = append(rec.transcripts, slices.Clone(msgs))
	rec.sessions = append(rec.sessions, "bench-"+id)
	rec.marks = append(rec.marks, len(records))
	return nil
}

// readLog reads a metrics log; a missing file has no records.
func readLog(path string) ([]tokens.Record, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	records, _, err := tokens.ReadLog(f)
	return records, err
}

// derive turns a class's first pass into what its second pass runs with:
// the aliases the transcripts teach, learned in task order as the shelf
// learns when each conversation closes, in a lexicon file of the private
// state; and the always-load tools of the usage suggestion over the
// metrics log, each task a session, applied to a state file there.
func (l *learning) derive(c llm.ToolSupport, servers []string, tasks int) (*learnedState, error) {
	rec := l.pass1[c]
	if rec == nil {
		rec = &recording{}
	}
	now := benchTime()
	path := filepath.Join(l.classDir(c), "aliases.json")
	for _, msgs := range rec.transcripts {
		learned, used := lexicon.Pairs(msgs)
		if len(learned)+len(used) == 0 {
			continue
		}
		if _, err := lexicon.Update(path, now, func(x *lexicon.Lexicon) error {
			x.Learn(learned, now)
			x.Learn(used, now)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	aliases, err := lexicon.Open(path, now)
	if err != nil {
		return nil, err
	}
	records, err := readLog(l.metricsPath(c))
	if err != nil {
		return nil, err
	}
	start := 0
	for i, end := range rec.marks {
		for j := start; j < min(end, len(records)); j++ {
			records[j].Session = rec.sessions[i]
		}
		start = end
	}
	rep := usage.NewReport(records, "", usage.Window{Sessions: max(tasks, 1)})
	var always []string
	for _, s := range usage.Suggest(rep, servers) {
		if s.Action == usage.AlwaysLoad && len(always) < usage.MaxTools {
			always = append(always, s.Tool)
		}
	}
	var state usage.State // Apply checks the names as --apply does
	if err := state.Apply("", always, now); err != nil {
		return nil, err
	}
	return &learnedState{aliases: aliases, always: state.AlwaysLoad("")}, nil
}

// runLearn runs the suite twice in the selected classes: search, recording
// what the learners need in a private temporary folder, then search with
// what that taught (SearchLearned). The report holds both runs of each
// class and what was learned.
func runLearn(ctx context.Context, cfg Config) (*Report, error) {
	dir, err := os.MkdirTemp("", "toolshelf-bench-learn-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // made 0700 by MkdirTemp
	l := &learning{dir: dir, pass1: map[llm.ToolSupport]*recording{}, learned: map[llm.ToolSupport]*learnedState{}}
	cfg = cfg.withDefaults()
	progress := cfg.Progress
	passes := 2
	if len(cfg.LearnFrom) > 0 {
		passes = 3
	}
	var last Progress
	pass := func(s Strategy, tasks []Task, rec *learning, offset Progress) Config {
		p := cfg
		p.Learn, p.Prefetch, p.Strategies, p.Tasks, p.learning = false, false, []Strategy{s}, tasks, rec
		if progress != nil {
			p.Progress = func(pr Progress) {
				// Each pass counts its own tasks; the total is the passes'.
				scale := float64(passes) * float64(len(cfg.Tasks)) / float64(max(len(tasks), 1))
				pr.Total, pr.Work = int(float64(pr.Total)*scale), pr.Work*scale
				pr.Done += offset.Done
				pr.WorkDone += offset.WorkDone
				pr.Total, pr.Work = max(pr.Total, pr.Done), max(pr.Work, pr.WorkDone)
				last = pr
				progress(pr)
			}
		}
		return p
	}
	learnFrom := cfg.Tasks
	if len(cfg.LearnFrom) > 0 {
		learnFrom = cfg.LearnFrom
	}
	first, err := Run(ctx, pass(Search, learnFrom, l, Progress{}))
	if err != nil {
		return nil, err
	}
	if len(cfg.LearnFrom) > 0 {
		// The comparison is with search over the same tasks, unlearned.
		if first, err = Run(ctx, pass(Search, cfg.Tasks, nil, last)); err != nil {
			return nil, err
		}
	}
	servers, err := profileServers(cfg.Profile)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	for _, c := range cfg.Classes {
		st, err := l.derive(c, names, len(learnFrom))
		if err != nil {
			return nil, fmt.Errorf("bench --learn: %w", err)
		}
		l.learned[c] = st
	}
	second, err := Run(ctx, pass(SearchLearned, cfg.Tasks, l, last))
	if err != nil {
		return nil, err
	}
	rep := first
	for _, c := range cfg.Classes {
		r := second.Run(SearchLearned, c)
		if r != nil {
			rep.Runs = append(rep.Runs, r)
		}
		st := l.learned[c]
		ld := Learned{Class: c, Aliases: st.aliases.Len(), AlwaysLoad: slices.Clone(st.always), From: len(cfg.LearnFrom)}
		if ld.AlwaysLoad == nil {
			ld.AlwaysLoad = []string{}
		}
		if r != nil {
			for _, t := range r.Tasks {
				ld.Prefetched += t.Prefetched
			}
		}
		rep.Learned = append(rep.Learned, ld)
	}
	return rep, nil
}

// learnedFor returns what the second pass of class c runs with, nil
// outside one.
func (cfg *Config) learnedFor(s Strategy, c llm.ToolSupport) *learnedState {
	if cfg.learning == nil || s != SearchLearned {
		return nil
	}
	cfg.learning.mu.Lock()
	defer cfg.learning.mu.Unlock()
	return cfg.learning.learned[c]
}

// alwaysOnce returns an Adjust step that activates names at a
// conversation's first prompt, as a session does with the applied
// suggestions.
func alwaysOnce(names []string) func(*tool.Registry) error {
	return func(reg *tool.Registry) error {
		if len(names) > 0 {
			reg.Activate(names...)
			names = nil
		}
		return nil
	}
}

// LearnComparison is a learning run's two passes in one class: search,
// then search with what it learned.
type LearnComparison struct {
	Learned
	// Requests, Input and Failed are the passes' totals, first pass
	// first; Overhead and Preservation their factors.
	Requests, Input, Failed [2]int
	Overhead, Preservation  [2]float64
}

// CompareLearn compares the two passes of a learning run in class c; ok
// is false when either did not run.
func (rep *Report) CompareLearn(c llm.ToolSupport) (LearnComparison, bool) {
	a, b := rep.Run(Search, c), rep.Run(SearchLearned, c)
	if a == nil || b == nil {
		return LearnComparison{}, false
	}
	cmp := LearnComparison{}
	for _, l := range rep.Learned {
		if l.Class == c {
			cmp.Learned = l
		}
	}
	for i, r := range []*RunResult{a, b} {
		cmp.Requests[i], cmp.Input[i], cmp.Failed[i] = r.Total.Requests, r.Total.Input, r.Total.Failed
		cmp.Overhead[i], cmp.Preservation[i] = r.Overhead(), r.Preservation()
	}
	return cmp, true
}

// learnNote explains a learning run, class by class.
func (rep *Report) learnNote() string {
	var parts []string
	for _, c := range Classes {
		cmp, ok := rep.CompareLearn(c)
		if !ok {
			continue
		}
		always := "none"
		if len(cmp.AlwaysLoad) > 0 {
			always = strings.Join(cmp.AlwaysLoad, ", ")
		}
		parts = append(parts, fmt.Sprintf("%s: requests %s → %s, input %s → %s, failed steps %d → %d, overhead %.2f → %.2f, "+
			"preservation %.3f → %.3f; learned %d aliases, always-load %s, %d tools prefetched.", c,
			num(cmp.Requests[0]), num(cmp.Requests[1]), num(cmp.Input[0]), num(cmp.Input[1]), cmp.Failed[0], cmp.Failed[1],
			cmp.Overhead[0], cmp.Overhead[1], cmp.Preservation[0], cmp.Preservation[1], cmp.Aliases, always, cmp.Prefetched))
	}
	if len(parts) == 0 {
		return ""
	}
	if n := rep.Learned[0].From; n > 0 {
		return fmt.Sprintf("search+learned (--learn-from): search ran over another suite of %d tasks, recording its transcripts and "+
			"metrics log in a private temporary folder; then search and search+learned ran over these tasks, the second with the "+
			"aliases those transcripts taught, the always-load tools of the usage suggestion over that log (each task a session), "+
			"declared from each task's first request, and prompt prefetch. search → search+learned, ", n) + strings.Join(parts, " ")
	}
	return "search+learned (--learn): the suite ran twice, search first, recording its transcripts and metrics log in a private " +
		"temporary folder; the second pass ran with the aliases those transcripts taught, the always-load tools of the usage " +
		"suggestion over that log (each task a session), declared from each task's first request, and prompt prefetch. First → " +
		"second pass, " + strings.Join(parts, " ")
}

// learnSummary is the summary line's part for a learning run on changes,
// or the first class it ran in; "" without one.
func (rep *Report) learnSummary() string {
	for _, c := range Classes {
		cmp, ok := rep.CompareLearn(c)
		if !ok {
			continue
		}
		return fmt.Sprintf(" | learn(%s): requests=%d,%d input=%d,%d failed=%d,%d overhead=%.2f,%.2f preservation=%.3f,%.3f aliases=%d always=%d prefetched=%d",
			c, cmp.Requests[0], cmp.Requests[1], cmp.Input[0], cmp.Input[1], cmp.Failed[0], cmp.Failed[1], cmp.Overhead[0], cmp.Overhead[1],
			cmp.Preservation[0], cmp.Preservation[1], cmp.Aliases, len(cmp.AlwaysLoad), cmp.Prefetched)
	}
	return ""
}
