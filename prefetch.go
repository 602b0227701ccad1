package toolshelf

import (
	"fmt"
	"strings"
)

// NotePrefetch: the first prompt's prefetch (AgentConfig.Prefetch) loaded
// tools, which the first request declares; the text names them.
const NotePrefetch NoteKind = "prefetch"

// prefetch runs a new conversation's prompt prefetch, once, before its
// first request: the shelf's searcher loads what the prompt asks for with
// confidence (toolsearch.Searcher.Prefetch). The declaration step then
// records the loaded tools as it records a tool_search load, in an update
// after the head, so every class renders them and a resumed session
// replays them. Later prompts are not prefetched.
func (a *Agent) prefetch(prompt string) error {
	if !a.fresh {
		return nil
	}
	a.fresh = false
	out, err := a.shelf.searcher.Prefetch(prompt, *a.cfg.Prefetch)
	if err != nil {
		return fmt.Errorf("toolshelf: prefetch: %w", err)
	}
	if len(out.Loaded) == 0 {
		return nil
	}
	a.prefetched = make(map[string]bool, len(out.Loaded))
	for _, n := range out.Loaded {
		a.prefetched[n] = true
	}
	a.notify(NotePrefetch, "prefetched for the prompt: "+strings.Join(out.Loaded, ", "))
	return nil
}
