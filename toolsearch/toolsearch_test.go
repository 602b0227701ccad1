package toolsearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

func newShelf(t *testing.T, mode string) (*tool.Registry, *toolsearch.Searcher) {
	t.Helper()
	reg := tool.NewRegistry()
	ns := &tool.Namespace{Name: "mcp__tracker", Description: "Issue tracker"}
	err := reg.Register(
		tool.Tool{Name: "read", Description: "Read a file."},
		tool.Tool{Name: "mcp__tracker__create_issue", Description: "Create an issue.\nSecond line.", Exposure: tool.Deferred,
			Namespace: ns, Origin: tool.Origin{Server: "tracker", Tool: "create_issue"}},
		tool.Tool{Name: "mcp__tracker__list_issues", Description: "List issues.", Exposure: tool.Codemode,
			Namespace: ns, Origin: tool.Origin{Server: "tracker", Tool: "list_issues"}},
		tool.Tool{Name: "mcp__tracker__delete_issue", Description: "Delete an issue.", Exposure: tool.Hidden,
			Namespace: ns, Origin: tool.Origin{Server: "tracker", Tool: "delete_issue"}},
		tool.Tool{Name: "issue_helper", Description: "Direct issue helper.", Exposure: tool.Direct},
	)
	if err != nil {
		t.Fatal(err)
	}
	r, err := search.New(mode, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := toolsearch.New(reg, r)
	if err := reg.Register(s.Tool()); err != nil {
		t.Fatal(err)
	}
	return reg, s
}

func call(t *testing.T, reg *tool.Registry, args string) *tool.Result {
	t.Helper()
	ts, ok := reg.Get(toolsearch.Name)
	if !ok {
		t.Fatal("tool_search is not registered")
	}
	res, err := ts.Handler.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("Call(%s): %v", args, err)
	}
	return res
}

func text(r *tool.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func TestToolDeclaration(t *testing.T) {
	reg, s := newShelf(t, search.ModeToolshelf)
	ts := s.Tool()
	if ts.Name != "tool_search" || ts.Exposure != tool.ModelOnly || ts.StartInactive || !ts.Reaches.All {
		t.Errorf("tool = %+v, want model-only, active on registration, reaching every tool", ts)
	}
	if !toolsearch.Is(ts) {
		t.Error("Is(Tool()) = false")
	}
	if toolsearch.Is(tool.Tool{Name: "tool_search", Handler: tool.HandlerFunc(nil)}) {
		t.Error("a same-named tool with another handler counts as tool_search")
	}
	if !reg.IsActive(toolsearch.Name) {
		t.Error("tool_search registered by a library user is not active: the model would be told it is unavailable")
	}
	want := "# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\n" +
		"Some of the tools, such as tools of MCP servers, may not have been provided to you upfront, and you should use this tool (`tool_search`) to search for the required tools. For MCP tool discovery, always use `tool_search`."
	if ts.Description != want {
		t.Errorf("description:\n%s", ts.Description)
	}
	var schema struct {
		Type       string
		Properties map[string]struct{ Type, Description string }
		Required   []string
	}
	if err := json.Unmarshal(ts.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Properties["query"].Type != "string" || schema.Properties["limit"].Type != "number" ||
		schema.Properties["limit"].Description != "Maximum number of tools to return. Defaults to 8." ||
		!cmp.Equal(schema.Required, []string{"query"}) {
		t.Errorf("schema = %+v", schema)
	}
}

func TestArgumentErrors(t *testing.T) {
	reg, _ := newShelf(t, search.ModeToolshelf)
	for args, want := range map[string]string{
		`{"query": ""}`:                "query must not be empty",
		`{"query": "  \n"}`:            "query must not be empty",
		`{}`:                           "query must not be empty",
		`{"query": "x", "limit": 0}`:   "limit must be a positive integer",
		`{"query": "x", "limit": -1}`:  "limit must be a positive integer",
		`{"query": "x", "limit": 2.5}`: "limit must be a positive integer",
		`{"query": "x", "limit": "3"}`: "limit must be a positive integer",
		`{"query": 7}`:                 `arguments must be a JSON object with a string "query"`,
		`{"query": "  ", "limit": 0}`:  "query must not be empty", // the query is checked first
		`{"query": "\ufeff"}`:          "query must not be empty", // trimmed as JavaScript does
		`[]`:                           `arguments must be a JSON object with a string "query"`,
	} {
		res := call(t, reg, args)
		if !res.IsError || text(res) != want {
			t.Errorf("%s: got %q (error %v), want error %q", args, text(res), res.IsError, want)
		}
	}
}

func TestSearchLoadsAdditively(t *testing.T) {
	for _, mode := range search.Modes() {
		t.Run(mode, func(t *testing.T) {
			reg, _ := newShelf(t, mode)
			before := reg.ActiveNames()
			res := call(t, reg, `{"query": "issue", "limit": 5}`)
			if res.IsError {
				t.Fatal(text(res))
			}
			got := text(res)
			for _, line := range []string{
				"Loaded 2 tools. They are available from your next call:",
				"- mcp__tracker__create_issue: Create an issue.",
				"- mcp__tracker__list_issues: List issues.",
			} {
				if !strings.Contains(got, line) {
					t.Errorf("result %q lacks %q", got, line)
				}
			}
			if strings.Contains(got, "delete_issue") || strings.Contains(got, "issue_helper") {
				t.Errorf("hidden or direct tools offered: %q", got)
			}
			loaded := res.Details.(toolsearch.Details).Loaded
			if diff := cmp.Diff(append(before, loaded...), reg.ActiveNames()); diff != "" {
				t.Errorf("active set (-want +got):\n%s", diff)
			}
			// Loaded tools are never offered again.
			if again := call(t, reg, `{"query": "issue"}`); text(again) != toolsearch.NoMatches && !strings.HasPrefix(text(again), toolsearch.NoMatches+"\n") {
				t.Errorf("second search: %q", text(again))
			}
		})
	}
}

func TestSingularAndLimit(t *testing.T) {
	reg, _ := newShelf(t, search.ModePI)
	got := text(call(t, reg, `{"query": "issue", "limit": 1}`))
	if !strings.HasPrefix(got, "Loaded 1 tool. They are available from your next call:\n- ") || strings.Count(got, "\n- ") != 1 {
		t.Errorf("result %q", got)
	}
}

func TestNoMatchesHint(t *testing.T) {
	reg, _ := newShelf(t, search.ModePI)
	if got := text(call(t, reg, `{"query": "kubernetes"}`)); got != "No matching tools found." {
		t.Errorf("pi: %q", got)
	}
	reg, _ = newShelf(t, search.ModeToolshelf)
	got := text(call(t, reg, `{"query": "kubernetes"}`))
	if got != "No matching tools found.\nNo tool mentions \"kubernetes\"." {
		t.Errorf("toolshelf: %q", got)
	}
}

func TestIndexFollowsRegistry(t *testing.T) {
	reg, s := newShelf(t, search.ModeToolshelf)
	find := func(q string) []string {
		out, err := s.Find(q, 8)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, h := range out.Hits {
			names = append(names, h.Name)
		}
		return names
	}
	if got := find("weather"); len(got) != 0 {
		t.Fatalf("weather before registration: %v", got)
	}
	reg.Register(tool.Tool{Name: "wx_tool", Description: "Get the weather.", Exposure: tool.Deferred})
	if got := find("weather"); !cmp.Equal(got, []string{"wx_tool"}) {
		t.Errorf("after registration: %v", got)
	}
	reg.Register(tool.Tool{Name: "wx_tool", Description: "Get the forecast.", Exposure: tool.Deferred})
	if got := find("weather"); len(got) != 0 {
		t.Errorf("old text still indexed: %v", got)
	}
	if got := find("forecast"); !cmp.Equal(got, []string{"wx_tool"}) {
		t.Errorf("new text not indexed: %v", got)
	}
	reg.Register(tool.Tool{Name: "wx_tool", Description: "Get the forecast.", Exposure: tool.Hidden})
	if got := find("forecast"); len(got) != 0 {
		t.Errorf("hidden tool offered: %v", got)
	}
	if s.Ranker().Len() != 2 {
		t.Errorf("index holds %d documents, want the 2 loadable tools", s.Ranker().Len())
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"  one\r\ntwo": "one", "one\ntwo": "one", "one\rtwo": "one\rtwo", "": "", "\n\nfirst\nsecond": "first",
	} {
		if got := toolsearch.FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDocument(t *testing.T) {
	d := toolsearch.Document(tool.Tool{Name: "mcp__a__b_c", Description: "d", Origin: tool.Origin{Server: "a", Tool: "b-c"},
		Namespace: &tool.Namespace{Name: "mcp__a", Description: "A", Instructions: "I"}})
	want := search.Document{Name: "mcp__a__b_c", OriginalName: "b-c", Description: "d",
		Namespace: search.Namespace{Name: "mcp__a", Description: "A", Instructions: "I"}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestHugeLimitIsClamped(t *testing.T) {
	reg, _ := newShelf(t, search.ModeToolshelf)
	res := call(t, reg, `{"query": "issue", "limit": 3000000000}`)
	if res.IsError || !strings.HasPrefix(text(res), "Loaded 2 tools.") {
		t.Errorf("result %q", text(res))
	}
}

func TestDetailsLoadedIsNeverNull(t *testing.T) {
	reg, _ := newShelf(t, search.ModePI)
	res := call(t, reg, `{"query": "kubernetes"}`)
	b, err := json.Marshal(res.Details)
	if err != nil || string(b) != `{"loaded":[]}` {
		t.Errorf("details = %s, %v", b, err)
	}
}

// TestTiesFollowRegistrationOrder checks that the index breaks ties by the
// registry's order even when a tool was re-registered before the first
// search, as the reference ranks getAllTools() in order.
func TestTiesFollowRegistrationOrder(t *testing.T) {
	reg := tool.NewRegistry()
	mk := func(name string) tool.Tool {
		return tool.Tool{Name: name, Description: "Widget helper.", Exposure: tool.Deferred}
	}
	reg.Register(mk("alpha_tool"), mk("bravo_tool"))
	reg.Register(mk("alpha_tool")) // a refresh re-registers alpha
	s := toolsearch.New(reg, search.NewPI())
	out, err := s.Find("widget", 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Hits) != 2 || out.Hits[0].Name != "alpha_tool" || out.Hits[0].Score != out.Hits[1].Score {
		t.Errorf("hits %+v, want alpha then bravo with equal scores", out.Hits)
	}
}

// TestConcurrentSearches runs searches, registrations and withdrawals at
// once, for the race detector.
func TestConcurrentSearches(t *testing.T) {
	reg, s := newShelf(t, search.ModeToolshelf)
	ts, _ := reg.Get(toolsearch.Name)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				name := fmt.Sprintf("mcp__tracker__extra_%d_%d", g, i%5)
				exp := tool.Deferred
				if i%3 == 0 {
					exp = tool.Hidden
				}
				reg.Register(tool.Tool{Name: name, Description: "Extra issue tool.", Exposure: exp})
				res, err := ts.Handler.Call(context.Background(), json.RawMessage(`{"query": "extra issue", "limit": 2}`))
				if err != nil {
					t.Error(err)
					return
				}
				// Other goroutines may withdraw a tool at any moment, so
				// only check that loaded tools exist; the race detector
				// checks the rest.
				for _, n := range res.Details.(toolsearch.Details).Loaded {
					if _, ok := reg.Get(n); !ok {
						t.Errorf("%s reported loaded but not registered", n)
					}
				}
				s.Find("issue", 3)
			}
		}()
	}
	wg.Wait()
}

func TestLoadPolicy(t *testing.T) {
	shelf := func() (*tool.Registry, *toolsearch.Searcher) {
		reg := tool.NewRegistry()
		for _, d := range []struct{ name, desc string }{
			{"issue_create", "Create an issue in the tracker."},
			{"issue_update", "Update an issue in the tracker."},
			{"issue_list", "List issues in the tracker."},
			{"page_create", "Create a wiki page."},
		} {
			if err := reg.Register(tool.Tool{Name: d.name, Description: d.desc, Exposure: tool.Deferred}); err != nil {
				t.Fatal(err)
			}
		}
		r, err := search.NewBM25F(nil)
		if err != nil {
			t.Fatal(err)
		}
		return reg, toolsearch.New(reg, r)
	}
	cases := []struct {
		name   string
		policy toolsearch.LoadPolicy
		query  string
		loaded int
	}{
		{"zero policy loads every hit", toolsearch.LoadPolicy{}, "issue tracker", 3},
		{"max bounds ranked hits", toolsearch.LoadPolicy{Max: 1}, "issue tracker", 1},
		{"relative cut-off", toolsearch.LoadPolicy{Relative: 1.01}, "issue tracker", 1},
		{"exact names always load", toolsearch.LoadPolicy{Max: 1}, "select:issue_list,page_create", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg, s := shelf()
			s.SetLoadPolicy(c.policy)
			out, err := s.FindAndLoad(c.query, 8)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Loaded) != c.loaded {
				t.Errorf("loaded %v, want %d", out.Loaded, c.loaded)
			}
			if len(out.Loaded)+len(out.Others) != len(out.Hits) {
				t.Errorf("loaded %v + others %v != hits %v", out.Loaded, out.Others, out.Hits)
			}
			if got := len(reg.ActiveNames()); got != c.loaded {
				t.Errorf("%d active, want %d", got, c.loaded)
			}
			text := toolsearch.ResultText(reg, out)
			if (len(out.Others) > 0) != strings.Contains(text, "Also matched, not loaded") {
				t.Errorf("result text:\n%s", text)
			}
		})
	}
}

// TestFindInScope: Find leaves loaded tools out, FindIn with Active
// ranks them too, and a namespace narrows the candidates to its tools
// (and a withdrawn tool is never a candidate).
func TestFindInScope(t *testing.T) {
	reg, s := newShelf(t, search.ModeToolshelf)
	if err := reg.Register(tool.Tool{Name: "mcp__files__list_files", Description: "List issues of files.", Exposure: tool.Deferred,
		Namespace: &tool.Namespace{Name: "mcp__files"}}); err != nil {
		t.Fatal(err)
	}
	reg.Activate("mcp__tracker__list_issues")
	names := func(out toolsearch.Outcome, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, h := range out.Hits {
			n = append(n, h.Name)
		}
		return n
	}
	if got := names(s.Find("list issues", 8)); strings.Contains(strings.Join(got, " "), "mcp__tracker__list_issues") {
		t.Errorf("Find ranked a loaded tool: %v", got)
	}
	got := names(s.FindIn("list issues", 8, toolsearch.Scope{Active: true}))
	if len(got) == 0 || got[0] != "mcp__tracker__list_issues" || !strings.Contains(strings.Join(got, " "), "mcp__files__list_files") {
		t.Errorf("FindIn Active: %v", got)
	}
	got = names(s.FindIn("list issues", 8, toolsearch.Scope{Active: true, Namespace: "mcp__files"}))
	if diff := cmp.Diff([]string{"mcp__files__list_files"}, got); diff != "" {
		t.Errorf("FindIn namespace mcp__files (-want +got):\n%s", diff)
	}
	got = names(s.FindIn("issue", 8, toolsearch.Scope{Namespace: "mcp__tracker"}))
	if diff := cmp.Diff([]string{"mcp__tracker__create_issue"}, got); diff != "" {
		t.Errorf("FindIn namespace mcp__tracker without loaded tools (-want +got):\n%s", diff)
	}
}
