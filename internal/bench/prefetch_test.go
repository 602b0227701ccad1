package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// TestPrefetchSavesRequests runs the embedded suite through search with
// and without prompt prefetch, on changes and bridge: the tasks whose
// first request the prefetch gave a needed tool take fewer requests, no
// task takes more, no step fails that did not, the prefix is preserved
// as it is without prefetch, and no task's prefetch loads more than Max.
func TestPrefetchSavesRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the embedded suite twice on two classes; go test without -short runs it")
	}
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Strategies: []Strategy{Search},
		Classes: []llm.ToolSupport{llm.ToolsChanges, llm.ToolsBridge}, Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rep.Runs); got != 4 {
		t.Fatalf("%d runs, want search and search+prefetch on two classes", got)
	}
	for _, c := range []llm.ToolSupport{llm.ToolsChanges, llm.ToolsBridge} {
		cmp, ok := rep.ComparePrefetch(c)
		if !ok {
			t.Fatalf("%s: no comparison", c)
		}
		if cmp.Named == 0 || cmp.Saved == 0 || cmp.Worse != 0 {
			t.Errorf("%s: %d tasks got a needed tool first, %d took a request fewer, %d took more", c, cmp.Named, cmp.Saved, cmp.Worse)
		}
		if cmp.Requests[1] >= cmp.Requests[0] || cmp.Input[1] >= cmp.Input[0] {
			t.Errorf("%s: requests %v and input %v, search then search+prefetch: want fewer of both", c, cmp.Requests, cmp.Input)
		}
		if cmp.Preservation[0] != 1 || cmp.Preservation[1] != 1 {
			t.Errorf("%s: preservation %v, want 1 with and without prefetch", c, cmp.Preservation)
		}
		s, p := rep.Run(Search, c), rep.Run(SearchPrefetch, c)
		if p.Total.Failed != s.Total.Failed {
			t.Errorf("%s: %d failed steps with prefetch, %d without", c, p.Total.Failed, s.Total.Failed)
		}
		for _, task := range p.Tasks {
			if task.Prefetched > toolsearch.DefaultPrefetch.Max {
				t.Errorf("%s/%s: the prefetch loaded %d tools, more than %d", c, task.ID, task.Prefetched, toolsearch.DefaultPrefetch.Max)
			}
		}
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nsearch+prefetch: search, and before each task's first request") || !strings.Contains(rep.Summary(), " | prefetch(changes): requests/task search=") {
		t.Errorf("the report does not compare search+prefetch with search:\n%s", b.String())
	}
}
