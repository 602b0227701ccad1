// Command library is the program of the README's "Use toolshelf as a Go
// library": an agent over the MCP servers of mcp.json that loads their
// tools on demand and keeps the provider's prompt cache.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
)

func main() {
	ctx := context.Background()
	shelf, err := toolshelf.New(ctx, toolshelf.Config{MCPFile: "mcp.json"})
	if err != nil {
		log.Fatal(err)
	}
	defer shelf.Close()
	a, err := shelf.Agent(ctx, toolshelf.AgentConfig{
		Provider: toolshelf.Provider{Name: toolshelf.Anthropic}, // ANTHROPIC_API_KEY
		Session:  &toolshelf.SessionConfig{},                    // saved, resumable
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	for ev, err := range a.Run(ctx, os.Args[1]) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Type == agent.EventStream && ev.Stream.Type == llm.EventTextDelta {
			fmt.Print(ev.Stream.Delta)
		}
	}
}
