package toolsearch

import (
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/internal/cut"
	"github.com/toolshelf/toolshelf/tokens"
)

// Prefetch is how [Searcher.Prefetch] loads tools for a prompt before the
// first request. Its zero fields take the values of [DefaultPrefetch].
type Prefetch struct {
	// Budget bounds the definition tokens loaded: the o200k tokens of
	// the loaded tools' declarations, summed. A hit that would pass it is
	// skipped, and a smaller one after it may still load.
	Budget int
	// Max bounds the ranked hits loaded. Tools the prompt names exactly
	// are not counted, but they count against the budget.
	Max int
	// Cut is the confidence cut: a ranked hit loads only when its score
	// is at least Cut times the score of the hit at rank
	// [PrefetchBackground], what the prompt's common words earn any tool.
	// A prompt with fewer hits than that has no background, and loads
	// only the tools it names exactly.
	Cut float64
	// Near loads, once the best ranked hit passes the cut, the hits that
	// score at least Near times the best one's, as close to the prompt
	// as it is (within Max).
	Near float64
}

// DefaultPrefetch is the prefetch a zero [Prefetch] means: at most 3
// ranked hits, within 2,000 definition tokens, each scoring at least 2.4
// times the 8th hit or, when the best does, 0.8 times the best. Chosen
// with toolshelf bench --prefetch: on the embedded suite (team profile)
// the first request gets a needed tool for 12 of the 36 prompts, and
// loads one tool no step needs; on the public dev tasks over the whole
// built-in catalog, for 5 of the 40, and none that is not needed.
var DefaultPrefetch = Prefetch{Budget: 2000, Max: 3, Cut: 2.4, Near: 0.8}

// PrefetchBackground is the rank of the hit whose score is a prompt's
// background: the limit of a default search ([DefaultLimit]).
const PrefetchBackground = DefaultLimit

// maxPrefetchNames bounds the words of a prompt that are looked up as
// exact tool names.
const maxPrefetchNames = 16

// withDefaults fills p's zero fields from DefaultPrefetch.
func (p Prefetch) withDefaults() Prefetch {
	if p.Budget <= 0 {
		p.Budget = DefaultPrefetch.Budget
	}
	if p.Max <= 0 {
		p.Max = DefaultPrefetch.Max
	}
	if p.Cut <= 0 {
		p.Cut = DefaultPrefetch.Cut
	}
	if p.Near <= 0 {
		p.Near = DefaultPrefetch.Near
	}
	return p
}

// Prefetch searches the shelf for a user's prompt and loads (activates)
// what the prompt asks for with confidence, additively, as FindAndLoad
// does: the tools the prompt names exactly (a word such as
// mcp__github__merge_pull_request or merge_pull_request), or, when it
// names none, the ranked hits that pass p's confidence cut, best first,
// up to p.Max, all within p.Budget definition tokens. A vague prompt loads nothing. Outcome.Hits
// are the ranked hits, Loaded the tools activated, Others the confident
// hits the budget or Max left on the shelf. A prompt longer than
// [MaxQueryBytes] is searched by its start.
func (s *Searcher) Prefetch(prompt string, p Prefetch) (Outcome, error) {
	p = p.withDefaults()
	prompt = prompt[:cut.Before(prompt, MaxQueryBytes)]
	var out Outcome
	if strings.TrimSpace(prompt) == "" {
		return out, nil
	}
	counter, err := tokens.Default()
	if err != nil {
		return out, err
	}
	var names []string
	spent := 0
	take := func(name string) bool {
		if slices.Contains(names, name) {
			return false
		}
		t, ok := s.reg.Get(name)
		if !ok {
			return false
		}
		cost := counter.Tool(t.Declaration())
		if spent+cost > p.Budget {
			out.Others = append(out.Others, name)
			return false
		}
		spent += cost
		names = append(names, name)
		return true
	}
	for _, w := range nameWords(prompt) {
		found, err := s.Find(w, 1)
		if err == nil && len(found.Hits) > 0 && found.Hits[0].Exact {
			take(found.Hits[0].Name)
		}
	}
	found, err := s.Find(prompt, PrefetchBackground)
	if err != nil {
		return out, err
	}
	out.Hits, out.Hint = found.Hits, found.Hint
	// A prompt that names tools says what it wants: the ranked hits are
	// left to tool_search.
	if len(names) == 0 && len(out.Others) == 0 && len(found.Hits) >= PrefetchBackground {
		floor := p.Cut * found.Hits[PrefetchBackground-1].Score
		if top := found.Hits[0].Score; top >= floor {
			// The best hit is confident: its near ties are too.
			floor = min(floor, p.Near*top)
		}
		ranked := 0
		for _, h := range found.Hits {
			if ranked >= p.Max || h.Score < floor || h.Score <= 0 {
				break
			}
			if take(h.Name) {
				ranked++
			}
		}
	}
	s.reg.Activate(names...)
	for _, n := range names {
		if s.reg.IsActive(n) {
			out.Loaded = append(out.Loaded, n)
		}
	}
	return out, nil
}

// nameWords returns the words of a prompt that could be tool names: those
// with an underscore or a hyphen between letters or digits, trimmed of the
// punctuation around them (quotes, backticks, a final full stop), at most
// maxPrefetchNames of them, each once.
func nameWords(prompt string) []string {
	var out []string
	for _, f := range strings.Fields(prompt) {
		w := strings.TrimFunc(f, func(r rune) bool { return !isNameRune(r) })
		if len(w) < 3 || !strings.ContainsAny(w, "_-") || strings.IndexFunc(w, func(r rune) bool { return !isNameRune(r) }) >= 0 {
			continue
		}
		if slices.Contains(out, w) {
			continue
		}
		if out = append(out, w); len(out) == maxPrefetchNames {
			break
		}
	}
	return out
}

// isNameRune reports whether r may be part of a model-facing tool name.
func isNameRune(r rune) bool {
	return r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
