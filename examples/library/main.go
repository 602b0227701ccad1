// Command library is the README's library program: an agent whose tools
// (its own, and those of the servers file $TOOLSHELF_MCP names) wait on the
// shelf until the model loads them, offline unless $TOOLSHELF_PROVIDER is set.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/adapter"
	"github.com/toolshelf/toolshelf/tool"
)

func main() {
	ctx := context.Background()
	forecast := tool.Tool{Name: "get_forecast", Description: "Get the weather forecast.", Exposure: tool.Deferred,
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("Sunny, 21 °C."), nil
		})}
	shelf, err := toolshelf.New(ctx, toolshelf.Config{MCPFile: os.Getenv("TOOLSHELF_MCP"), Tools: []tool.Tool{forecast}})
	if err != nil {
		log.Fatal(err)
	}
	defer shelf.Close()
	a, err := shelf.Agent(ctx, toolshelf.AgentConfig{
		Provider: toolshelf.Provider{Name: cmp.Or(os.Getenv("TOOLSHELF_PROVIDER"), toolshelf.Emulator)},
		NewModel: adapter.New,                // the provider's adapter, or the offline emulator
		Session:  &toolshelf.SessionConfig{}, // saved, resumable
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	for text, err := range a.Text(ctx, os.Args[1]) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(text)
	}
	fmt.Println()
}
