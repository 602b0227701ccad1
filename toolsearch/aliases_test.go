package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// fixedAliases maps a query, as written, to its learned tools; the
// tools under the key "" are the ones past sessions called.
type fixedAliases map[string][]string

func (a fixedAliases) Lookup(q string) []string {
	if q == "" {
		return nil
	}
	return a[q]
}

func (a fixedAliases) Called(tool string) bool { return slices.Contains(a[""], tool) }

func aliasShelf(t *testing.T, a toolsearch.Aliases) (*tool.Registry, *toolsearch.Searcher) {
	t.Helper()
	reg := tool.NewRegistry()
	fs := &tool.Namespace{Name: "mcp__fs"}
	notes := &tool.Namespace{Name: "mcp__notes"}
	err := reg.Register(
		tool.Tool{Name: "mcp__fs__read_file", Description: "Read a file from disk.", Exposure: tool.Deferred,
			Namespace: fs, Origin: tool.Origin{Server: "fs", Tool: "read_file"}},
		tool.Tool{Name: "mcp__fs__write_file", Description: "Write a file to disk.", Exposure: tool.Deferred,
			Namespace: fs, Origin: tool.Origin{Server: "fs", Tool: "write_file"}},
		tool.Tool{Name: "mcp__notes__note_create", Description: "Create a note.", Exposure: tool.Deferred,
			Namespace: notes, Origin: tool.Origin{Server: "notes", Tool: "note_create"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	r, err := search.New(search.ModeToolshelf, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := toolsearch.New(reg, r)
	s.SetAliases(a)
	return reg, s
}

func hitNames(out toolsearch.Outcome) []string {
	var names []string
	for _, h := range out.Hits {
		names = append(names, h.Name)
	}
	return names
}

func TestAliasRanksItsToolFirst(t *testing.T) {
	_, plain := aliasShelf(t, nil)
	out, err := plain.FindAndLoad("scribble something down", 8)
	if err != nil || len(out.Loaded) != 0 {
		t.Fatalf("without aliases: %+v, %v; want nothing loaded", out, err)
	}
	reg, s := aliasShelf(t, fixedAliases{"scribble something down": {"mcp__notes__note_create"}})
	out, err = s.FindAndLoad("scribble something down", 8)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mcp__notes__note_create"}, out.Loaded); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
	if !slices.Equal(out.Learned, []string{"mcp__notes__note_create"}) || out.Hint != nil || !reg.IsActive("mcp__notes__note_create") {
		t.Errorf("outcome %+v: want the learned tool, no hint, the tool active", out)
	}

	// Beside text matches, the learned tool comes first and the matches
	// stay, at the same score.
	_, s = aliasShelf(t, fixedAliases{"write file": {"mcp__notes__note_create"}})
	out, err = s.Find("write file", 8)
	if err != nil {
		t.Fatal(err)
	}
	if got := hitNames(out); len(got) < 2 || got[0] != "mcp__notes__note_create" || got[1] != "mcp__fs__write_file" {
		t.Errorf("hits %v: want the learned tool, then write_file", got)
	}
	if out.Hits[0].Score != out.Hits[1].Score || out.Hits[0].Score <= 0 {
		t.Errorf("scores %v: want the learned tool at the best match's score", out.Hits)
	}
	if out, _ := s.Find("write file", 1); len(out.Hits) != 1 || out.Hits[0].Name != "mcp__notes__note_create" {
		t.Errorf("limit 1: hits %v, want the learned tool alone", hitNames(out))
	}

	// The learned tool is loaded alone: the matches stay on the shelf.
	reg, s = aliasShelf(t, fixedAliases{"write file": {"mcp__notes__note_create"}})
	out, err = s.FindAndLoad("write file", 8)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Loaded, []string{"mcp__notes__note_create"}) || !slices.Contains(out.Others, "mcp__fs__write_file") || reg.IsActive("mcp__fs__write_file") {
		t.Errorf("loaded %v, others %v: want the learned tool loaded and write_file left on the shelf", out.Loaded, out.Others)
	}

	// Several learned tools load together, heaviest first.
	_, s = aliasShelf(t, fixedAliases{"write file": {"mcp__notes__note_create", "mcp__fs__read_file"}})
	out, err = s.FindAndLoad("write file", 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"mcp__notes__note_create", "mcp__fs__read_file"}; !slices.Equal(out.Loaded, want) || !slices.Equal(out.Learned, want) {
		t.Errorf("loaded %v, learned %v: want %v", out.Loaded, out.Learned, want)
	}
}

func TestCalledToolsGoFirstAmongNearTies(t *testing.T) {
	// "file" matches read_file and write_file alike; with room for one,
	// the one past sessions called is loaded.
	for _, called := range []string{"mcp__fs__read_file", "mcp__fs__write_file"} {
		reg, s := aliasShelf(t, fixedAliases{"": {called}})
		s.SetLoadPolicy(toolsearch.LoadPolicy{Max: 1, Relative: 0.5})
		out, err := s.FindAndLoad("file", 8)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Loaded, []string{called}) || !reg.IsActive(called) {
			t.Errorf("called %s: loaded %v, want it alone", called, out.Loaded)
		}
		if hitNames(out)[0] != "mcp__fs__read_file" && hitNames(out)[0] != "mcp__fs__write_file" {
			t.Errorf("hits %v: want the ranker's order kept", hitNames(out))
		}
	}
	// A called tool below the cut-off is not loaded for it.
	reg, s := aliasShelf(t, fixedAliases{"": {"mcp__notes__note_create"}})
	s.SetLoadPolicy(toolsearch.LoadPolicy{Max: 1, Relative: 0.5})
	if _, err := s.FindAndLoad("file", 8); err != nil {
		t.Fatal(err)
	}
	if reg.IsActive("mcp__notes__note_create") {
		t.Error("a called tool that does not match the query was loaded")
	}
}

func TestAliasNeverOutranksAnExactName(t *testing.T) {
	a := fixedAliases{"read_file": {"mcp__notes__note_create"}, "mcp__fs__read_file": {"mcp__notes__note_create"}}
	for _, q := range []string{"read_file", "mcp__fs__read_file"} {
		_, s := aliasShelf(t, a)
		// With room for the exact hit only, the alias is left out.
		if out, _ := s.Find(q, 1); len(out.Hits) != 1 || len(out.Learned) != 0 {
			t.Errorf("%q, limit 1: %+v: want the exact hit alone", q, out)
		}
		out, err := s.FindAndLoad(q, 8)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Hits) < 2 || out.Hits[0].Name != "mcp__fs__read_file" || !out.Hits[0].Exact || out.Hits[1].Name != "mcp__notes__note_create" {
			t.Errorf("%q: hits %+v: want the exact name first, the learned tool after it", q, out.Hits)
		}
	}

	// A query that names a loaded tool loads nothing, alias or not.
	reg, s := aliasShelf(t, a)
	reg.Activate("mcp__fs__read_file")
	out, err := s.FindAndLoad("read_file", 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Loaded) != 0 || len(out.Learned) != 0 || out.Hint == nil || len(out.Hint.Loaded) != 1 {
		t.Errorf("outcome %+v: want nothing loaded and the hint that read_file is loaded", out)
	}
}

func TestAliasOnlyForToolsOnTheShelf(t *testing.T) {
	a := fixedAliases{"scribble": {"gone", "mcp__fs__write_file", "mcp__notes__note_create"}}
	reg, s := aliasShelf(t, a)
	reg.Activate("mcp__fs__write_file")
	out, err := s.Find("scribble", 8)
	if err != nil {
		t.Fatal(err)
	}
	// An unknown tool and a loaded one are passed over for the next.
	if !slices.Equal(out.Learned, []string{"mcp__notes__note_create"}) {
		t.Errorf("learned %q, want note_create (gone is unknown, write_file loaded)", out.Learned)
	}
	out, err = s.FindIn("scribble", 8, toolsearch.Scope{Namespace: "mcp__fs", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Learned, []string{"mcp__fs__write_file"}) {
		t.Errorf("in mcp__fs with loaded tools: learned %q, want write_file", out.Learned)
	}
	out, err = s.FindIn("scribble", 8, toolsearch.Scope{Namespace: "mcp__other"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Learned) != 0 || len(out.Hits) != 0 {
		t.Errorf("in another namespace: %+v, want nothing", out)
	}
}
