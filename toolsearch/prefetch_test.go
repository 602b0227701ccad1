package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// builtinShelf returns a searcher over the built-in catalog, every tool
// deferred.
func builtinShelf(t *testing.T) (*tool.Registry, *toolsearch.Searcher) {
	t.Helper()
	reg := tool.NewRegistry()
	if err := builtin.Load(reg, tool.NewNamer()); err != nil {
		t.Fatal(err)
	}
	r, err := search.New(search.ModeToolshelf, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg, toolsearch.New(reg, r)
}

func TestPrefetchLoadsWhatThePromptAsksFor(t *testing.T) {
	reg, s := builtinShelf(t)
	out, err := s.Prefetch("Maintenance on db-replica-2 is finished; unmute it in Datadog.", toolsearch.Prefetch{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(out.Loaded, "mcp__datadog__unmute_host") {
		t.Errorf("Loaded = %v, want mcp__datadog__unmute_host among them (hits %v)", out.Loaded, out.Hits)
	}
	for _, n := range out.Loaded {
		if !reg.IsActive(n) {
			t.Errorf("%s is reported loaded but is not active", n)
		}
	}
}

func TestPrefetchLoadsAToolThePromptNames(t *testing.T) {
	reg, s := builtinShelf(t)
	out, err := s.Prefetch("Please call `mcp__github__merge_pull_request` on #7, then tell me.", toolsearch.Prefetch{})
	if err != nil {
		t.Fatal(err)
	}
	// The prompt says what it wants: nothing ranked joins it.
	if !slices.Equal(out.Loaded, []string{"mcp__github__merge_pull_request"}) || !reg.IsActive(out.Loaded[0]) {
		t.Errorf("Loaded = %v, want mcp__github__merge_pull_request alone", out.Loaded)
	}
	// The server's own name for a tool names it too.
	reg, s = builtinShelf(t)
	out, err = s.Prefetch("use list_dependabot_alerts for acme/api", toolsearch.Prefetch{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Loaded, []string{"mcp__github__list_dependabot_alerts"}) || !reg.IsActive(out.Loaded[0]) {
		t.Errorf("Loaded = %v, want mcp__github__list_dependabot_alerts alone", out.Loaded)
	}
}

func TestPrefetchOfAVaguePromptLoadsNothing(t *testing.T) {
	for _, prompt := range []string{
		"Can you help me with something today? Thanks a lot.",
		"What should I work on next? Take a look and tell me what you think.",
		"   ",
	} {
		reg, s := builtinShelf(t)
		out, err := s.Prefetch(prompt, toolsearch.Prefetch{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Loaded) != 0 || len(reg.ActiveNames()) != 0 {
			t.Errorf("Prefetch(%q) loaded %v (active %v), want nothing", prompt, out.Loaded, reg.ActiveNames())
		}
		if prompt != "   " && len(out.Hits) < toolsearch.PrefetchBackground {
			t.Errorf("Prefetch(%q) ranked %d hits: the prompt is not vague but unmatched, which tests nothing", prompt, len(out.Hits))
		}
	}
}

func TestPrefetchKeepsToTheBudget(t *testing.T) {
	counter, err := tokens.Default()
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "The nightly e2e workflow in acme/storefront failed again. Find the latest run, show me the logs of the jobs that failed, and rerun just those jobs."
	reg, s := builtinShelf(t)
	all, err := s.Prefetch(prompt, toolsearch.Prefetch{Budget: 1 << 20, Cut: 1.2})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Loaded) < 2 {
		t.Fatalf("without a budget, Loaded = %v: want at least two tools to test the budget with", all.Loaded)
	}
	cost := func(names []string) int {
		n := 0
		for _, name := range names {
			tl, _ := reg.Get(name)
			n += counter.Tool(tl.Declaration())
		}
		return n
	}
	for _, budget := range []int{cost(all.Loaded), cost(all.Loaded[:1]), cost(all.Loaded) - 1, cost(all.Loaded[:1]) - 1} {
		reg, s := builtinShelf(t)
		out, err := s.Prefetch(prompt, toolsearch.Prefetch{Budget: budget, Cut: 1.2})
		if err != nil {
			t.Fatal(err)
		}
		if got := cost(out.Loaded); got > budget {
			t.Errorf("budget %d: loaded %v, %d tokens", budget, out.Loaded, got)
		}
		if budget == cost(all.Loaded) && !slices.Equal(out.Loaded, all.Loaded) {
			t.Errorf("budget %d, what they cost: loaded %v, want %v", budget, out.Loaded, all.Loaded)
		}
		if budget < cost(all.Loaded) && len(out.Others) == 0 {
			t.Errorf("budget %d: loaded %v and left nothing out", budget, out.Loaded)
		}
		if budget == cost(all.Loaded[:1]) && (len(out.Loaded) == 0 || out.Loaded[0] != all.Loaded[0]) {
			t.Errorf("budget %d: loaded %v, want %s first", budget, out.Loaded, all.Loaded[0])
		}
		if !slices.Equal(reg.ActiveNames(), out.Loaded) {
			t.Errorf("budget %d: active %v, loaded %v", budget, reg.ActiveNames(), out.Loaded)
		}
	}
}
