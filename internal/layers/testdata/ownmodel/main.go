// Command ownmodel is a program that brings its own model to the front
// door: an [llm.Model] of its own (here, one that echoes the prompt). It
// names no provider, so it must link no provider SDK, adapter or
// emulator: the layers test lists its dependencies to check.
package main

import (
	"context"
	"fmt"
	"iter"
	"log"
	"os"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
)

// echo is the program's model: it answers each request with the text of
// its last message.
type echo struct{}

// Stream answers with the last message's text.
func (echo) Stream(_ context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		text := "you said: " + llm.ContentText(req.Messages[len(req.Messages)-1].Content, " ")
		msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text(text)}, StopReason: llm.StopEnd}
		if yield(llm.Event{Type: llm.EventTextDelta, Delta: text}, nil) {
			yield(llm.Event{Type: llm.EventDone, Message: &msg}, nil)
		}
	}
}

func main() {
	ctx := context.Background()
	shelf, err := toolshelf.New(ctx, toolshelf.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer shelf.Close()
	a, err := shelf.Agent(ctx, toolshelf.AgentConfig{Model: echo{}})
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
	fmt.Println()
}
