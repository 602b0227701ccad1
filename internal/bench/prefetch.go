package bench

import (
	"fmt"
	"slices"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// measurePrefetch counts the tools a prefetching task's first request
// declared in the update between the head and the prompt, and those of
// them that a step calls.
func measurePrefetch(tr *TaskResult, p *plan, msgs []llm.Message) {
	for _, m := range msgs[min(1, len(msgs)):] {
		if m.Role != llm.RoleSystem {
			break
		}
		for _, t := range m.ToolsAdded {
			tr.Prefetched++
			if slices.Contains(p.names, t.Name) {
				tr.PrefetchedNeeded++
			}
		}
	}
}

// PrefetchComparison is search against search+prefetch in one class, task
// by task.
type PrefetchComparison struct {
	Class llm.ToolSupport `json:"class"`
	// Tasks counts the tasks both ran; Named those whose first request
	// the prefetch gave a tool a step calls (the prompt named it, by the
	// prefetch's confidence cut); Saved the named tasks that took at
	// least one request fewer; Worse the tasks that took more.
	Tasks, Named, Saved, Worse int
	// Requests and Input are the runs' totals, search first.
	Requests, Input [2]int
	// Preservation is each run's prefix preservation, search first.
	Preservation [2]float64
	// Loaded is the tools the prefetch loaded, Needed those a step calls.
	Loaded, Needed int
}

// RequestsPerTask returns the requests per task of search (0) or
// search+prefetch (1).
func (c PrefetchComparison) RequestsPerTask(i int) float64 {
	if c.Tasks == 0 {
		return 0
	}
	return float64(c.Requests[i]) / float64(c.Tasks)
}

// ComparePrefetch compares search with search+prefetch in class c; ok is
// false when either did not run.
func (rep *Report) ComparePrefetch(c llm.ToolSupport) (PrefetchComparison, bool) {
	s, p := rep.Run(Search, c), rep.Run(SearchPrefetch, c)
	if s == nil || p == nil {
		return PrefetchComparison{}, false
	}
	cmp := PrefetchComparison{Class: c, Preservation: [2]float64{s.Preservation(), p.Preservation()}}
	for i, pt := range p.Tasks {
		if i >= len(s.Tasks) || pt.Skipped != "" || s.Tasks[i].Skipped != "" {
			continue
		}
		st := s.Tasks[i]
		cmp.Tasks++
		cmp.Requests[0] += st.Requests
		cmp.Requests[1] += pt.Requests
		cmp.Input[0] += st.Input
		cmp.Input[1] += pt.Input
		cmp.Loaded += pt.Prefetched
		cmp.Needed += pt.PrefetchedNeeded
		if pt.PrefetchedNeeded > 0 {
			cmp.Named++
			if pt.Requests <= st.Requests-1 {
				cmp.Saved++
			}
		}
		if pt.Requests > st.Requests {
			cmp.Worse++
		}
	}
	return cmp, true
}

// prefetchClass returns the comparison of the changes class, or of the
// first class both ran in.
func (rep *Report) prefetchClass() (PrefetchComparison, bool) {
	for _, c := range Classes {
		if cmp, ok := rep.ComparePrefetch(c); ok {
			return cmp, true
		}
	}
	return PrefetchComparison{}, false
}

// prefetchNote explains search+prefetch's figures when it ran.
func (rep *Report) prefetchNote() string {
	cmp, ok := rep.prefetchClass()
	if !ok {
		return ""
	}
	d := toolsearch.DefaultPrefetch
	return fmt.Sprintf("search+prefetch: search, and before each task's first request the prompt is searched and what it asks "+
		"for with confidence is loaded (the tools it names exactly or, naming none, at most %d ranked hits scoring at least %.1f times the %dth "+
		"or, when the best does, %.1f times the best, within %s definition tokens), so the first request declares them. %s class, search → search+prefetch: requests per "+
		"task %.2f → %.2f, input %s → %s, preservation %.3f → %.3f; the prefetch loaded %d tools, %d of them needed; %d of %d "+
		"tasks got a needed tool with the first request, %d of them took at least one request fewer; %d tasks took more.",
		d.Max, d.Cut, toolsearch.PrefetchBackground, d.Near, num(d.Budget), cmp.Class, cmp.RequestsPerTask(0), cmp.RequestsPerTask(1),
		num(cmp.Input[0]), num(cmp.Input[1]), cmp.Preservation[0], cmp.Preservation[1], cmp.Loaded, cmp.Needed,
		cmp.Named, cmp.Tasks, cmp.Saved, cmp.Worse)
}

// prefetchSummary is the summary line's part for search+prefetch, "" when
// it did not run.
func (rep *Report) prefetchSummary() string {
	cmp, ok := rep.prefetchClass()
	if !ok {
		return ""
	}
	return fmt.Sprintf(" | prefetch(%s): requests/task search=%.2f prefetch=%.2f; input search=%d prefetch=%d; named=%d saved=%d worse=%d; preservation search=%.3f prefetch=%.3f",
		cmp.Class, cmp.RequestsPerTask(0), cmp.RequestsPerTask(1), cmp.Input[0], cmp.Input[1], cmp.Named, cmp.Saved, cmp.Worse,
		cmp.Preservation[0], cmp.Preservation[1])
}
