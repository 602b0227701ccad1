package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/selection"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// selectionEntry is the session entry type that records a selection lock.
const selectionEntry session.EntryType = "selection"

// selectState is two-phase selection in the agent CLI: the selector, the
// task's lock and the pattern cache.
type selectState struct {
	sel       *selection.Selector
	lock      *selection.Lock
	cache     *selection.Cache
	cachePath string
}

// setupSelection prepares two-phase selection (--select): the selector
// over the registry, answered by the same model; the lock a resumed
// session recorded; the pattern cache in the user's cache folder.
func (r *agentRun) setupSelection(model llm.Model, ask func(context.Context, string) (string, error)) error {
	fallbacks := selection.DefaultFallbacks
	if r.flags.selectFallback != "" {
		var err error
		if fallbacks, err = selection.ParseFallbacks(r.flags.selectFallback); err != nil {
			return usagef("--select-fallback: %v", err)
		}
	}
	st := &selectState{cache: selection.NewCache(0, nil)}
	if dir, err := os.UserCacheDir(); err == nil {
		st.cachePath = filepath.Join(dir, "toolshelf", "selections.json")
		if err := st.cache.Load(st.cachePath); err != nil {
			printf(r.e.stderr, "toolshelf: %v\n", err)
		}
	}
	// The most used tools (by the metrics log) come first in the catalog.
	sel, err := selection.New(selection.Config{
		Model:        model,
		ModelID:      r.modelID,
		Tools:        r.reg,
		Catalog:      selection.CatalogOptions{Uses: r.toolUses()},
		Fallbacks:    fallbacks,
		Ask:          ask,
		Cache:        st.cache,
		SystemPrompt: r.flags.system,
	})
	if err != nil {
		return err
	}
	st.sel = sel
	if r.session != nil {
		branch := r.session.Branch()
		for i := len(branch) - 1; i >= 0; i-- {
			if branch[i].Type == selectionEntry {
				var l selection.Lock
				if err := json.Unmarshal(branch[i].Data, &l); err == nil {
					st.lock = &l
				}
				break
			}
		}
	}
	r.selection = st
	return nil
}

// selectFor runs before a prompt: the first prompt of a task selects its
// tools (after every MCP server has connected) and locks them; later
// prompts keep them unless they switch task. A selection that fails falls
// back to tool_search.
func (r *agentRun) selectFor(ctx context.Context, text string) error {
	st := r.selection
	if st.lock != nil {
		again, why := st.lock.Reselect(text, nil)
		if !again {
			return nil
		}
		r.note("selecting again: " + why)
	}
	if err := r.mcp.WaitAll(ctx); err != nil {
		return err
	}
	res, err := st.sel.Select(ctx, text)
	if res != nil {
		r.observeSelection(res.Requests, res.Usage)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.note(fmt.Sprintf("selection failed (%v); the model can load tools with tool_search", err))
		r.reg.Activate(toolsearch.Name)
		return nil
	}
	if st.lock != nil {
		var drop []string
		for _, n := range st.lock.Names {
			if !slices.Contains(res.Names, n) {
				drop = append(drop, n)
			}
		}
		r.reg.Deactivate(drop...)
	}
	r.reg.Activate(res.Names...)
	if res.Search {
		r.reg.Activate(toolsearch.Name)
	}
	what := "nothing"
	if len(res.Names) > 0 {
		what = strings.Join(res.Names, " ")
	}
	r.note(fmt.Sprintf("selected %s (%s, %d selection requests)", what, res.Source, res.Requests))
	st.lock = &selection.Lock{Task: text, Names: res.Names, Groups: res.Groups}
	if r.session != nil {
		if _, err := r.session.AppendData(selectionEntry, st.lock); err != nil {
			return err
		}
	}
	if st.cachePath != "" {
		if err := st.cache.Save(st.cachePath); err != nil {
			r.note(fmt.Sprintf("the selection cache was not saved: %v", err))
		}
	}
	return nil
}

// note prints a line about the run: on stderr in text mode, as a JSON
// event in --json mode.
func (r *agentRun) note(text string) {
	if r.flags.asJSON {
		r.out.json0(map[string]string{"type": "note", "text": text})
		return
	}
	printLine(r.e.stderr, "· "+text)
}
