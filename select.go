package toolshelf

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/selection"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// SelectionEntry is the session entry type that records a selection lock,
// so a resumed conversation keeps its task's tools.
const SelectionEntry session.EntryType = "selection"

// SelectConfig configures two-phase selection. The zero value selects once
// per task with the conversation's model, falling back to asking (when Ask
// is set), the catalog's groups, then tool_search.
type SelectConfig struct {
	// Model answers the selection requests; nil means the conversation's.
	Model llm.Model
	// ModelID names the model in the pattern cache's key; empty means the
	// Provider's model id.
	ModelID string
	// Fallbacks is the ladder when nothing is picked; nil means
	// [selection.DefaultFallbacks].
	Fallbacks []selection.Fallback
	// Ask, when set, asks the user a question (interactive use).
	Ask func(ctx context.Context, question string) (string, error)
	// CachePath is the pattern cache's file, loaded at the start and saved
	// after each selection; empty means no cache.
	CachePath string
	// EveryCall selects again after every tool call, without the task's
	// lock: the costly baseline the benchmark's select strategy measures.
	EveryCall bool
}

// selector is two-phase selection in a conversation: the selector, the
// task's lock and the pattern cache.
type selector struct {
	a     *Agent
	sel   *selection.Selector
	lock  *selection.Lock
	cache *selection.Cache
	task  string
}

// newSelector prepares selection over the shelf's registry: the most used
// tools (by the metrics log) first in the catalog, the lock a resumed
// session recorded, the pattern cache.
func newSelector(a *Agent, model llm.Model) (*selector, error) {
	cfg := a.cfg.Select
	st := &selector{a: a}
	if cfg.CachePath != "" {
		st.cache = selection.NewCache(0, nil)
		if err := st.cache.Load(cfg.CachePath); err != nil {
			a.notify(NoteSelection, err.Error())
		}
	}
	if cfg.Model != nil {
		model = cfg.Model
	}
	id := cfg.ModelID
	if id == "" {
		id = a.model
	}
	scfg := selection.Config{
		Model:        model,
		ModelID:      id,
		Tools:        a.shelf.reg,
		Catalog:      selection.CatalogOptions{Uses: a.shelf.metrics.uses()},
		Fallbacks:    cfg.Fallbacks,
		Ask:          cfg.Ask,
		SystemPrompt: a.cfg.SystemPrompt,
	}
	if st.cache != nil {
		scfg.Cache = st.cache
	}
	sel, err := selection.New(scfg)
	if err != nil {
		return nil, err
	}
	st.sel = sel
	if a.session != nil {
		branch := a.session.Branch()
		for i := len(branch) - 1; i >= 0; i-- {
			if branch[i].Type == SelectionEntry {
				var l selection.Lock
				if err := json.Unmarshal(branch[i].Data, &l); err == nil {
					st.lock = &l
				}
				break
			}
		}
	}
	return st, nil
}

// forTask runs before a prompt: the first prompt of a task selects its
// tools (after every MCP server has connected) and locks them; later
// prompts keep them unless they switch task.
func (st *selector) forTask(ctx context.Context, prompt string) error {
	if st.lock != nil {
		again, why := st.lock.Reselect(prompt, nil)
		if !again {
			return nil
		}
		st.a.notify(NoteSelection, "selecting again: "+why)
	}
	st.task = prompt
	return st.run(ctx)
}

// again selects once more for the current task (SelectConfig.EveryCall).
func (st *selector) again(ctx context.Context) {
	if err := st.run(ctx); err != nil && ctx.Err() == nil {
		st.a.notify(NoteSelectionFailed, err.Error())
	}
}

// run selects for the task and declares the result: the previous
// selection's tools that are not chosen again are withdrawn. A selection
// that fails falls back to tool_search.
func (st *selector) run(ctx context.Context) error {
	a, reg := st.a, st.a.shelf.reg
	if err := a.shelf.mcp.WaitAll(ctx); err != nil {
		return err
	}
	res, err := st.sel.Select(ctx, st.task)
	if res != nil {
		a.observeSelection(res.Requests, res.Usage)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.notify(NoteSelectionFailed, fmt.Sprintf("selection failed (%v); the model can load tools with tool_search", err))
		reg.Activate(toolsearch.Name)
		return nil
	}
	if st.lock != nil {
		var drop []string
		for _, n := range st.lock.Names {
			if !slices.Contains(res.Names, n) {
				drop = append(drop, n)
			}
		}
		reg.Deactivate(drop...)
	}
	reg.Activate(res.Names...)
	if res.Search {
		reg.Activate(toolsearch.Name)
	}
	what := "nothing"
	if len(res.Names) > 0 {
		what = strings.Join(res.Names, " ")
	}
	requests := "selection requests"
	if res.Requests == 1 {
		requests = "selection request"
	}
	a.notify(NoteSelection, fmt.Sprintf("selected %s (%s, %d %s)", what, res.Source, res.Requests, requests))
	st.lock = &selection.Lock{Task: st.task, Names: res.Names, Groups: res.Groups}
	if a.session != nil {
		if _, err := a.session.AppendData(SelectionEntry, st.lock); err != nil {
			return err
		}
	}
	if st.cache != nil {
		if err := st.cache.Save(a.cfg.Select.CachePath); err != nil {
			a.notify(NoteSelection, fmt.Sprintf("the selection cache was not saved: %v", err))
		}
	}
	return nil
}
