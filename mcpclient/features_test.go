package mcpclient

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListIsBounded: a server that lists more prompts than MaxListItems
// is cut there with a warning, a resource over MaxItemBytes is refused by
// name, and what a server offers and its sessions are told apart.
func TestListIsBounded(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range MaxListItems + 1 {
		srv.AddPrompt(&mcp.Prompt{Name: fmt.Sprintf("p%05d", i)}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	}
	read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	srv.AddResource(&mcp.Resource{Name: "small", URI: "file:///small"}, read)
	srv.AddResource(&mcp.Resource{Name: "huge", URI: "file:///huge", Description: strings.Repeat("x", MaxItemBytes)}, read)
	f := newFixture(t, ServerConfig{Name: "many"})
	useMemServers(f.m, map[string]*mcp.Server{"many": srv})
	changed := make(chan string, 4)
	defer f.m.OnListChanged(func(s string) { changed <- s })()
	f.m.Start(f.ctx())
	if s := <-changed; s != "many" {
		t.Fatalf("OnListChanged at connection: %q", s)
	}
	offers, ok := f.m.Offers("many")
	if !ok || !offers.Prompts || !offers.Resources || offers.Completions || offers.Session == 0 {
		t.Errorf("Offers = %+v, %v; want prompts and resources of a numbered session", offers, ok)
	}
	prompts, err := f.m.List(f.ctx(), "many", Prompts)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts) != MaxListItems || prompts[0].Key != "p00000" || !strings.Contains(f.log.String(), "list cut") {
		t.Errorf("%d prompts, the first %q; want %d and a warning; log:\n%s", len(prompts), prompts[0].Key, MaxListItems, f.log)
	}
	resources, err := f.m.List(f.ctx(), "many", Resources)
	if err != nil {
		t.Fatal(err)
	}
	if len(resources) != 1 || resources[0].Key != "file:///small" || !strings.Contains(f.log.String(), "item=file:///huge") {
		t.Errorf("resources %v; want file:///small alone and a warning naming file:///huge; log:\n%s", resources, f.log)
	}
	if _, err := f.m.List(f.ctx(), "none", Prompts); err == nil || !strings.Contains(err.Error(), `no MCP server "none"`) {
		t.Errorf("listing an unconfigured server: %v", err)
	}
	srv.AddPrompt(&mcp.Prompt{Name: "late"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	if s := <-changed; s != "many" {
		t.Fatalf("OnListChanged after prompts/list_changed: %q", s)
	}
}
