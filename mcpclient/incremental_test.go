package mcpclient

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// countingRanker records the documents a ranker is asked to add and the
// names it is asked to remove.
type countingRanker struct {
	search.Ranker
	mu      sync.Mutex
	added   []string
	removed []string
}

func (c *countingRanker) Add(docs ...search.Document) {
	c.mu.Lock()
	for _, d := range docs {
		c.added = append(c.added, d.Name)
	}
	c.mu.Unlock()
	c.Ranker.Add(docs...)
}

func (c *countingRanker) Remove(names ...string) {
	c.mu.Lock()
	c.removed = append(c.removed, names...)
	c.mu.Unlock()
	c.Ranker.Remove(names...)
}

// take returns the recorded calls, sorted, and forgets them.
func (c *countingRanker) take() (added, removed []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	added, removed = c.added, c.removed
	c.added, c.removed = nil, nil
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}

// TestListChangedReindexesOnlyWhatChanged checks that one server's
// tools/list_changed re-registers and re-indexes only that server's added,
// redefined and dropped tools: its unchanged tools and the other server's
// are neither registered again nor indexed again.
func TestListChangedReindexesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	live, other := mcptest.NewServer("live", ""), mcptest.NewServer("other", "")
	f := newFixture(t, memServer("live"), memServer("other"))
	useMemServers(f.m, map[string]*mcp.Server{"live": live, "other": other})
	bm25, err := search.NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	ranker := &countingRanker{Ranker: bm25}
	s := toolsearch.New(f.reg, ranker)
	f.m.Start(f.ctx())
	f.waitAll()
	s.Sync()
	if added, _ := ranker.take(); len(added) != 2*mcptest.Tools {
		t.Fatalf("the first sync indexed %d tools, want %d: %v", len(added), 2*mcptest.Tools, added)
	}
	var mu sync.Mutex
	var registered []string
	cancel := f.reg.Subscribe(func(c tool.Change) {
		mu.Lock()
		registered = append(registered, c.Registered...)
		registered = append(registered, c.Replaced...)
		mu.Unlock()
	})
	defer cancel()

	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
	live.RemoveTools("pid")
	live.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text back, changed.", InputSchema: mcptest.ObjectSchema("text")}, handler)
	live.AddTool(&mcp.Tool{Name: "forecast", Description: "Forecast the weather of a city.", InputSchema: mcptest.ObjectSchema("city")}, handler)
	f.eventually("the refresh", func() bool {
		pid, _ := f.reg.Get("mcp__live__pid")
		echo, _ := f.reg.Get("mcp__live__echo")
		_, added := f.reg.Get("mcp__live__forecast")
		return pid.Exposure == tool.Hidden && echo.Description == "Echo the text back, changed." && added
	})
	s.Sync()

	added, removed := ranker.take()
	if want := []string{"mcp__live__echo", "mcp__live__forecast"}; !slices.Equal(added, want) {
		t.Errorf("re-indexed %v, want %v", added, want)
	}
	if want := []string{"mcp__live__pid"}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	mu.Lock()
	slices.Sort(registered)
	if want := []string{"mcp__live__echo", "mcp__live__forecast", "mcp__live__pid"}; !slices.Equal(registered, want) {
		t.Errorf("registered %v again, want %v", registered, want)
	}
	mu.Unlock()

	out, err := s.Find("weather forecast for a city", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Hits) == 0 || out.Hits[0].Name != "mcp__live__forecast" {
		t.Errorf("search for the added tool = %+v", out.Hits)
	}
	out, err = s.Find("pid", 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range out.Hits {
		if h.Name == "mcp__live__pid" {
			t.Errorf("the dropped tool is still found: %+v", out.Hits)
		}
	}
	if ranker.Len() != 2*mcptest.Tools {
		t.Errorf("index holds %d tools, want %d", ranker.Len(), 2*mcptest.Tools)
	}
}
