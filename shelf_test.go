package toolshelf_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/transcript"
)

func names(ts []llm.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func run(t *testing.T, a *toolshelf.Agent, prompt string) {
	t.Helper()
	for _, err := range a.Run(t.Context(), prompt) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestZeroValues checks that the zero Config makes a working shelf and that
// a conversation without a model fails with an error that names the fix.
func TestZeroValues(t *testing.T) {
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	if _, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{}); err == nil || !strings.Contains(err.Error(), "set AgentConfig.Model, or Provider.Name") {
		t.Errorf("a conversation without a model: %v", err)
	}
	if _, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Provider: toolshelf.Provider{Name: "mistral"}}); err == nil || !strings.Contains(err.Error(), `unknown provider "mistral"`) {
		t.Errorf("an unknown provider: %v", err)
	}
	model := llmtest.New(llmtest.Say("hi"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "hello")
	if got := names(transcript.CurrentTools(model.Requests()[0].Messages)); len(got) != 0 {
		t.Errorf("a shelf with nothing on it declares %v", got)
	}
}

// TestToolSearchOnlyWhenSomethingWaits checks that tool_search is declared
// when a tool waits on the shelf — a deferred tool of the program's or a
// deferred MCP server — and not otherwise.
func TestToolSearchOnlyWhenSomethingWaits(t *testing.T) {
	direct := tool.Tool{Name: "read", Description: "Read a file.", Exposure: tool.Direct, Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
		return tool.TextResult("text"), nil
	})}
	deferred := direct
	deferred.Name, deferred.Exposure = "write", tool.Deferred
	for _, c := range []struct {
		name string
		cfg  toolshelf.Config
		want []string
	}{
		{"direct only", toolshelf.Config{Tools: []tool.Tool{direct}}, []string{"read"}},
		{"a deferred tool", toolshelf.Config{Tools: []tool.Tool{direct, deferred}}, []string{"read", "tool_search"}},
		{"a deferred server", toolshelf.Config{Servers: []mcpclient.ServerConfig{{Name: "m", Server: mcptest.NewServer("m", "")}}}, []string{"tool_search"}},
		// The first prompt waits for a direct server's tools.
		{"a direct server", toolshelf.Config{Servers: []mcpclient.ServerConfig{{Name: "m", Server: mcptest.NewServer("m", ""), Exposure: tool.Direct}}},
			[]string{"mcp__m__big", "mcp__m__crash", "mcp__m__cwd", "mcp__m__echo", "mcp__m__fail", "mcp__m__getenv", "mcp__m__hang", "mcp__m__mixed", "mcp__m__pid", "mcp__m__structured"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			shelf, err := toolshelf.New(t.Context(), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer shelf.Close()
			model := llmtest.New(llmtest.Say("ok"))
			a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
			if err != nil {
				t.Fatal(err)
			}
			run(t, a, "go")
			got := names(transcript.CurrentTools(model.Requests()[0].Messages))
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("the first request declares %v, want %v", got, c.want)
			}
		})
	}
}

// TestResumeThroughTheFrontDoor checks that a conversation saved to a
// session and resumed on a new shelf declares the same tools and appends
// no removal: the provider's cached prefix stays valid.
func TestResumeThroughTheFrontDoor(t *testing.T) {
	dir := t.TempDir()
	cfg := toolshelf.Config{Servers: []mcpclient.ServerConfig{{Name: "m", Server: mcptest.NewServer("m", "")}}}
	shelf, err := toolshelf.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(
		llmtest.Call(llm.ToolCall{ID: "c1", Name: "tool_search", Arguments: []byte(`{"query":"select:mcp__m__echo"}`)}),
		llmtest.Call(llm.ToolCall{ID: "c2", Name: "mcp__m__echo", Arguments: []byte(`{"text":"x"}`)}),
		llmtest.Say("done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, Session: &toolshelf.SessionConfig{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "echo x")
	path := a.Session().Path()
	saved := a.Messages()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	shelf.Close()

	shelf2, err := toolshelf.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer shelf2.Close()
	model2 := llmtest.New(llmtest.Say("again"))
	b, err := shelf2.Agent(t.Context(), toolshelf.AgentConfig{Model: model2, Session: &toolshelf.SessionConfig{Dir: dir, Resume: path}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	run(t, b, "and again")
	req := model2.Requests()[0].Messages
	for _, m := range req[len(saved):] {
		if m.Role == llm.RoleSystem && len(m.ToolsRemoved) > 0 {
			t.Errorf("the resumed conversation removed %v", m.ToolsRemoved)
		}
	}
	if got, want := names(transcript.CurrentTools(req)), names(transcript.CurrentTools(saved)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the resumed request declares %v, the session declared %v", got, want)
	}
}

// TestSelectionAndMetrics checks two-phase selection through the front
// door — the model picks the tool from the catalog, it is declared after
// the head, the lock keeps it for the task's next prompt — and the metrics
// log: a record for the selection and one per request.
func TestSelectionAndMetrics(t *testing.T) {
	metrics := t.TempDir() + "/metrics.jsonl"
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Metrics: metrics,
		Servers: []mcpclient.ServerConfig{{Name: "m", Server: mcptest.NewServer("m", "")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	usage := &llm.Usage{Input: 100, Output: 5}
	say := func(text string) llmtest.Reply {
		return llmtest.Reply{Message: llm.Message{Content: []llm.Part{llm.Text(text)}, Usage: usage}}
	}
	model := llmtest.New(say("mcp__m__echo"), say("done"), say("done again"))
	var notes []string
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, Select: &toolshelf.SelectConfig{},
		Notify: func(n toolshelf.Note) { notes = append(notes, string(n.Kind)+": "+n.Text) }})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "echo some text")
	run(t, a, "and echo it again")
	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want one selection and two answers", len(reqs))
	}
	msgs := reqs[1].Messages
	if head := msgs[0]; len(head.ToolsAdded) != 0 {
		t.Errorf("the head declares %v; the selection belongs after it", names(head.ToolsAdded))
	}
	if got := names(transcript.CurrentTools(msgs)); strings.Join(got, " ") != "mcp__m__echo" {
		t.Errorf("the first answer's request declares %v, want the selected tool alone", got)
	}
	if got := names(transcript.CurrentTools(reqs[2].Messages)); strings.Join(got, " ") != "mcp__m__echo" {
		t.Errorf("the task's second prompt declares %v: the lock should keep the selection", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "selection: selected mcp__m__echo (model, 1 selection request)") {
		t.Errorf("notes %q", notes)
	}
	shelf.Close()
	b, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	var strategies []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct{ Strategy string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		strategies = append(strategies, rec.Strategy)
	}
	if strings.Join(strategies, " ") != "selection select+lock select+lock" {
		t.Errorf("metrics records by strategy: %v", strategies)
	}
}

// TestSessionRemembersTheServersFile: a new session records the shelf's
// servers file (absolute) in its header; a resumed or forked session that
// runs with another appends an entry naming it, and SessionMCPFile
// returns the latest.
func TestSessionRemembersTheServersFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	first, second := write("first.json"), write("second.json")
	converse := func(mcpFile string, sc *toolshelf.SessionConfig) string {
		t.Helper()
		shelf, err := toolshelf.New(t.Context(), toolshelf.Config{MCPFile: mcpFile})
		if err != nil {
			t.Fatal(err)
		}
		defer shelf.Close()
		a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: llmtest.New(llmtest.Say("ok")), Session: sc})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		run(t, a, "hello")
		return a.Session().Path()
	}
	recorded := func(path string) string {
		t.Helper()
		got, err := toolshelf.SessionMCPFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	sessions := filepath.Join(dir, "sessions")
	path := converse(first, &toolshelf.SessionConfig{Dir: sessions})
	if got := recorded(path); got != first {
		t.Errorf("new session: %q, want %q", got, first)
	}
	converse(first, &toolshelf.SessionConfig{Resume: path})
	converse("", &toolshelf.SessionConfig{Resume: path}) // without a file nothing is forgotten
	if got := recorded(path); got != first {
		t.Errorf("resumed with the same file, and without one: %q, want %q", got, first)
	}
	converse(second, &toolshelf.SessionConfig{Resume: path})
	if got := recorded(path); got != second {
		t.Errorf("resumed with another file: %q, want %q", got, second)
	}
	fork := converse(first, &toolshelf.SessionConfig{Resume: path, Fork: true, Dir: sessions})
	if recorded(fork) != first || recorded(path) != second {
		t.Errorf("forked with the first file: fork %q, source %q", recorded(fork), recorded(path))
	}
	s, err := session.Open(path, &session.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var entries int
	for _, e := range s.Entries() {
		if e.Type == toolshelf.MCPFileEntry {
			entries++
		}
	}
	if s.Header().MCPFile != first || entries != 1 {
		t.Errorf("header %q and %d servers file entries; want %q and 1", s.Header().MCPFile, entries, first)
	}
}

// gatedTransport connects to srv in memory once open is closed.
type gatedTransport struct {
	srv  *mcp.Server
	open chan struct{}
}

func (g gatedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.srv.Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return ct.Connect(ctx)
}

// TestFirstPromptWaitsForNamedTools: a tool the caller activates before
// the first request (the command line's --tools +name) is waited for like
// a direct one, so the first request declares it although its server —
// deferred, otherwise not waited for — was still connecting.
func TestFirstPromptWaitsForNamedTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		open := make(chan struct{})
		shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: []mcpclient.ServerConfig{
			{Name: "m", Transport: gatedTransport{srv: mcptest.NewServer("m", ""), open: open}}}})
		if err != nil {
			t.Fatal(err)
		}
		defer shelf.Close()
		model := llmtest.New(llmtest.Say("ok"))
		a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, FirstWaitFor: []string{"mcp__m__echo"},
			Adjust: func(reg *tool.Registry) error { reg.Activate("mcp__m__echo"); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			run(t, a, "hello")
		}()
		synctest.Wait() // the prompt waits for m, or has been answered without it
		if n := len(model.Requests()); n != 0 {
			t.Fatalf("%d requests before the named tool's server connected", n)
		}
		close(open)
		<-done
		if got := names(transcript.CurrentTools(model.Requests()[0].Messages)); !slices.Contains(got, "mcp__m__echo") {
			t.Errorf("the first request declares %v, want mcp__m__echo among them", got)
		}
	})
}

// TestTextYieldsOnlyTheModelsText checks that Agent.Text leaves out the
// loop's events and keeps the text of every answer of the prompt.
func TestTextYieldsOnlyTheModelsText(t *testing.T) {
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: []tool.Tool{{
		Name: "echo", Description: "Echo the text.", Exposure: tool.Direct,
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("echoed"), nil
		}),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	first := llmtest.Call(llm.ToolCall{ID: "c1", Name: "echo", Arguments: []byte(`{"text":"x"}`)})
	first.Message.Content = append([]llm.Part{llm.Text("calling. ")}, first.Message.Content...)
	model := llmtest.New(first, llmtest.Say("done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var got strings.Builder
	for text, err := range a.Text(t.Context(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(text)
	}
	if got.String() != "calling. done" {
		t.Errorf("Text yielded %q, want %q", got.String(), "calling. done")
	}
}
