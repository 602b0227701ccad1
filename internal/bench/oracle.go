package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/internal/standin"
	"github.com/toolshelf/toolshelf/selection"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// callTool is the bridge's meta-tool, as the model sees it.
const callTool = standin.CallTool

// oracle plays the model for the benchmark, from what each request
// actually declares: for each step it calls the step's tool when the
// request declares it (directly, or through call_tool when a bridge update
// described it); otherwise it calls tool_search with the step's queries in
// order; when none has loaded the tool it gives the step up and goes on.
// A final text answer ends the task. For the codemode strategy it writes
// the task's script instead (codemodeScript): one codemode call, then the
// final answer.
//
// It answers selection requests (package selection) with the task's own
// tools, or their groups, in order: the select strategies' figures measure
// what two-phase selection costs in tokens, not how well a model selects.
//
// It is stateless: every decision is replayed from the request's own
// history, so it answers the same way whatever the adapter did before.
// Several clients may use it at once, told apart by API key.
type oracle struct {
	mu    sync.Mutex
	plans map[string]*plan
}

// plan is the task an API key is running and its steps' tool names.
type plan struct {
	task  Task
	names []string // model-facing name of each step's tool
	// script is the task's codemode script (the codemode strategy), ""
	// otherwise.
	script string
}

func newOracle() *oracle { return &oracle{plans: map[string]*plan{}} }

// set makes key's next requests play task.
func (o *oracle) set(key string, p *plan) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.plans[key] = p
}

// Respond answers one request.
func (o *oracle) Respond(_ context.Context, ex *emulator.Exchange) (*emulator.Reply, error) {
	key := emulator.APIKey(ex.Header)
	o.mu.Lock()
	p := o.plans[key]
	o.mu.Unlock()
	if p == nil {
		return nil, fmt.Errorf("the oracle has no task for this API key")
	}
	if reply := p.selection(ex.Turns); reply != nil {
		return reply, nil
	}
	declared, bridged := standin.Offered(ex)
	if _, ok := declared[codemode.Name]; ok && p.script != "" {
		if p.scripted(ex.Turns) {
			return &emulator.Reply{Text: doneText}, nil
		}
		return &emulator.Reply{Calls: []emulator.Call{{Name: codemode.Name, Arguments: codemode.Arguments(p.script)}}}, nil
	}
	k, searches := p.progress(ex.Turns)
	for ; k < len(p.names); k, searches = k+1, 0 {
		name := p.names[k]
		if def, ok := declared[name]; ok {
			return &emulator.Reply{Calls: []emulator.Call{{Name: name, Arguments: standin.ExampleArguments(def)}}}, nil
		}
		if def, ok := bridged[name]; ok {
			args, _ := json.Marshal(map[string]any{"name": name, "arguments": standin.ExampleArguments(def)})
			return &emulator.Reply{Calls: []emulator.Call{{Name: callTool, Arguments: args}}}, nil
		}
		queries := p.task.Steps[k].Queries
		if _, ok := declared[toolsearch.Name]; ok && searches < len(queries) {
			args, _ := json.Marshal(map[string]string{"query": queries[searches]})
			return &emulator.Reply{Calls: []emulator.Call{{Name: toolsearch.Name, Arguments: args}}}, nil
		}
	}
	return &emulator.Reply{Text: doneText}, nil
}

// doneText is the oracle's final answer.
const doneText = "Done: I went through every step of the request."

// scripted reports whether the history holds the task's codemode call.
func (p *plan) scripted(turns []emulator.Turn) bool {
	for _, t := range turns {
		if t.Role != "assistant" {
			continue
		}
		for _, c := range t.Calls {
			if name, _ := standin.UnwrapCall(c); name == codemode.Name {
				return true
			}
		}
	}
	return false
}

// selection answers a selection request: the last user message starts
// with selection's request line. Groups are the steps' tools' namespaces
// (mcp__<server>).
func (p *plan) selection(turns []emulator.Turn) *emulator.Reply {
	last := ""
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role == "user" {
			last = turns[i].Text
			break
		}
	}
	var names []string
	switch {
	case strings.HasPrefix(last, selection.GroupRequest):
		for _, st := range p.task.Steps {
			names = append(names, tool.NamespaceName(st.Server))
		}
	case strings.HasPrefix(last, selection.ToolRequest):
		names = slices.Clone(p.names)
	default:
		return nil
	}
	slices.Sort(names)
	return &emulator.Reply{Text: strings.Join(slices.Compact(names), ", ")}
}

// progress replays the history: the step the task is at and how many of
// its queries were searched. A search is attributed to the current step
// when it is that step's next query, else to the first later step it
// starts; a call of a later step's tool means the steps before it were
// given up.
func (p *plan) progress(turns []emulator.Turn) (step, searches int) {
	n := len(p.names)
	for _, t := range turns {
		if t.Role != "assistant" {
			continue
		}
		for _, c := range t.Calls {
			name, args := standin.UnwrapCall(c)
			if name == toolsearch.Name {
				var a struct {
					Query string `json:"query"`
				}
				_ = json.Unmarshal(args, &a)
				if step < n && searches < len(p.task.Steps[step].Queries) && p.task.Steps[step].Queries[searches] == a.Query {
					searches++
					continue
				}
				for j := step + 1; j < n; j++ {
					if q := p.task.Steps[j].Queries; len(q) > 0 && q[0] == a.Query {
						step, searches = j, 1
						break
					}
				}
				continue
			}
			for j := step; j < n; j++ {
				if p.names[j] == name {
					step, searches = j+1, 0
					break
				}
			}
		}
	}
	return step, searches
}
