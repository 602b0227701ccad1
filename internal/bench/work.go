package bench

import (
	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
)

// Progress is what [Config.Progress] is told after every task a run
// finishes.
type Progress struct {
	// Done and Total count task runs: each task once per strategy and
	// class.
	Done, Total int
	// WorkDone and Work are the same weighted by each task run's
	// estimated cost ([Estimate]): a progress bar's share done and its
	// estimate of the time left come from them.
	WorkDone, Work float64
}

// The cost model of [Estimate], in token-equivalents: what a request
// costs besides its prompt (the agent loop, the adapter, HTTP, the
// emulator's checks), the prompt of a request without the profile's
// definitions (the system prompt, tool_search, a few loaded tools), and
// the share of that cost a refused request (over the context window)
// takes, having no answer to stream. They were fitted to the CPU time of
// the embedded suite's runs per strategy, measured twice under different
// loads: on the team profile full took 8.4 to 9 times search's time,
// reference 1.2 to 1.4, select 1.2 to 1.4, select+lock 0.64 to 1.0,
// codemode 0.67; full over the corpus, refused, 6 to 7 times the corpus's
// search.
const (
	requestCost  = 5_000
	promptBase   = 3_000
	refusedShare = 0.55
)

// Estimate returns the estimated cost of a benchmark run, in the units of
// [Progress.Work], without running it: per task and for each strategy
// and class, the requests it will send times what they carry. Full
// requests carry the profile's definitions (estimated at 4 bytes a
// token), so that a progress bar over several profiles weighs each by
// its size instead of assuming that every task costs the same.
func Estimate(cfg Config) (float64, error) {
	cfg = cfg.withDefaults()
	servers, err := profileServers(cfg.Profile)
	if err != nil {
		return 0, err
	}
	return newWorkModel(cfg, servers).total(cfg), nil
}

// total is the estimated cost of every task run of cfg.
func (w workModel) total(cfg Config) float64 {
	total := 0.0
	for _, s := range cfg.Strategies {
		for _, c := range cfg.Classes {
			for _, t := range cfg.Tasks {
				total += w.task(s, c, t)
			}
		}
	}
	return total
}

// workModel weighs task runs.
type workModel struct {
	defTokens int // the profile's definitions, estimated
	window    int // the context window override, as Config.ContextWindow
}

func newWorkModel(cfg Config, servers []*catalog.Server) workModel {
	bytes := 0
	for _, s := range servers {
		for _, t := range s.Tools {
			bytes += len(s.Name) + len(t.Name) + len(t.Description) + len(t.InputSchema) + 16
		}
	}
	return workModel{defTokens: bytes / 4, window: cfg.ContextWindow}
}

// task is the estimated cost of one task under a strategy and class.
func (w workModel) task(s Strategy, c llm.ToolSupport, t Task) float64 {
	steps := float64(len(t.Steps))
	small := requestCost + promptBase
	switch s {
	case Full: // a call per step, then the answer; or one refused request
		if w.refused(c) {
			return refusedShare * float64(requestCost+w.defTokens)
		}
		return (steps + 1) * float64(small+w.defTokens)
	case Search, SearchPrefetch, SearchLearned: // a search and a call per step, then the answer
		return (2*steps + 1) * float64(small)
	case Reference: // the same, with every match loaded
		return 1.35 * (2*steps + 1) * float64(small)
	case SelectLock: // the task, and its two selection requests, mostly cached
		return (steps + 2.5) * float64(small)
	case Select: // selection requests before every request
		return 2 * (steps + 1) * float64(small)
	case Codemode: // one script per task, the steps' calls inside it, then the answer
		return (steps + 1) * float64(small)
	}
	return (steps + 1) * float64(small)
}

// refused reports whether full's first request exceeds the class's
// context window.
func (w workModel) refused(c llm.ToolSupport) bool {
	t, err := targetFor(c)
	if err != nil {
		return false
	}
	window := w.window
	if window == 0 {
		window = emulator.DefaultContextWindow(emulator.API(t.api), t.model)
	}
	return window > 0 && w.defTokens+promptBase > window
}
