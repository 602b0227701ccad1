package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// promptServer is an upstream server with a prompt named greet, a
// resource at file:///notes.txt and a template file:///notes/{id}, all of
// which say which server answered; with completions, it completes greet's
// argument and the template's id.
func promptServer(name string, completions bool) *mcp.Server {
	opts := &mcp.ServerOptions{}
	if completions {
		opts.CompletionHandler = func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			p := req.Params
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{
				Values: []string{fmt.Sprintf("%s:%s:%s:%s%s", name, p.Ref.Type, p.Ref.Name, p.Ref.URI, p.Argument.Value)}}}, nil
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, opts)
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: name + " greets " + req.Params.Arguments["who"]}}}}, nil
		})
	srv.AddResource(&mcp.Resource{Name: "notes", URI: "file:///notes.txt", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name + " notes"}}}, nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "note", URITemplate: "file:///notes/{id}"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name + " read " + req.Params.URI}}}, nil
		})
	return srv
}

func promptText(t *testing.T, res *mcp.GetPromptResult) string {
	t.Helper()
	var b strings.Builder
	for _, m := range res.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestPromptsAndResourcesOnEverySurface: two upstream servers with a
// prompt of the same name, the same resource URI and the same template
// are both shown on every surface, namespaced, and each get, read and
// completion goes back to the server that owns it; only one of them
// offers completions, and the other's are answered empty.
func TestPromptsAndResourcesOnEverySurface(t *testing.T) {
	g := newGateway(t,
		mcpclient.ServerConfig{Name: "alpha", Server: promptServer("alpha", true)},
		mcpclient.ServerConfig{Name: "beta", Server: promptServer("beta", false)})
	for _, s := range gateway.Surfaces {
		t.Run(string(s), func(t *testing.T) {
			ctx := t.Context()
			cs := connect(t, g, s)
			caps := cs.InitializeResult().Capabilities
			if caps.Prompts == nil || caps.Resources == nil || caps.Completions == nil {
				t.Fatalf("capabilities %+v: want prompts, resources and completions", caps)
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range prompts.Prompts {
				names = append(names, p.Name)
				if len(p.Arguments) != 1 || p.Arguments[0].Name != "who" || !p.Arguments[0].Required || p.Description != "Greets someone." {
					t.Errorf("prompt %s: %+v, want the upstream's description and argument", p.Name, p)
				}
			}
			if want := []string{"mcp__alpha__greet", "mcp__beta__greet"}; !slices.Equal(names, want) {
				t.Fatalf("prompts %v, want %v", names, want)
			}
			for _, server := range []string{"alpha", "beta"} {
				got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: gateway.PromptName(server, "greet"), Arguments: map[string]string{"who": "Ada"}})
				if err != nil {
					t.Fatal(err)
				}
				if text := promptText(t, got); text != server+" greets Ada" {
					t.Errorf("prompt of %s: %q", server, text)
				}
			}

			resources, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range resources.Resources {
				uris = append(uris, r.URI)
			}
			if want := []string{"toolshelf://alpha/file:///notes.txt", "toolshelf://beta/file:///notes.txt"}; !slices.Equal(uris, want) {
				t.Fatalf("resources %v, want %v", uris, want)
			}
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolshelf://beta/file:///notes.txt"})
			if err != nil {
				t.Fatal(err)
			}
			if len(read.Contents) != 1 || read.Contents[0].Text != "beta notes" || read.Contents[0].URI != "toolshelf://beta/file:///notes.txt" {
				t.Errorf("read: %+v", read.Contents)
			}

			templates, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var tmpls []string
			for _, tm := range templates.ResourceTemplates {
				tmpls = append(tmpls, tm.URITemplate)
			}
			if want := []string{"toolshelf://alpha/file:///notes/{id}", "toolshelf://beta/file:///notes/{id}"}; !slices.Equal(tmpls, want) {
				t.Fatalf("templates %v, want %v", tmpls, want)
			}
			read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolshelf://alpha/file:///notes/7"})
			if err != nil {
				t.Fatal(err)
			}
			if len(read.Contents) != 1 || read.Contents[0].Text != "alpha read file:///notes/7" {
				t.Errorf("templated read: %+v", read.Contents)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///notes.txt"}); err == nil {
				t.Error("an upstream URI without the gateway's prefix was read; want an error")
			}

			done, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "mcp__alpha__greet"},
				Argument: mcp.CompleteParamsArgument{Name: "who", Value: "A"}})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"alpha:ref/prompt:greet:A"}; !slices.Equal(done.Completion.Values, want) {
				t.Errorf("prompt completion %v, want %v", done.Completion.Values, want)
			}
			done, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "toolshelf://alpha/file:///notes/{id}"},
				Argument: mcp.CompleteParamsArgument{Name: "id", Value: "7"}})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"alpha:ref/resource::file:///notes/{id}7"}; !slices.Equal(done.Completion.Values, want) {
				t.Errorf("template completion %v, want %v", done.Completion.Values, want)
			}
			done, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "mcp__beta__greet"},
				Argument: mcp.CompleteParamsArgument{Name: "who", Value: "A"}})
			if err != nil || len(done.Completion.Values) != 0 {
				t.Errorf("completion of a server without completions: %+v, %v; want none", done, err)
			}
			if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"},
				Argument: mcp.CompleteParamsArgument{Name: "who"}}); err == nil || !strings.Contains(err.Error(), "prompts/list") {
				t.Errorf("completion of an unknown prompt: %v, want an error that says where to look", err)
			}
		})
	}
}

// TestNoUpstreamPromptsNoCapabilities: a gateway whose upstream offers
// only tools advertises no prompts, resources or completions.
func TestNoUpstreamPromptsNoCapabilities(t *testing.T) {
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
	for _, s := range gateway.Surfaces {
		caps := connect(t, g, s).InitializeResult().Capabilities
		if caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil {
			t.Errorf("%s: capabilities %+v, want no prompts, resources or completions", s, caps)
		}
	}
}

// listChanges is a client of a surface that reports each
// notifications/prompts/list_changed and resources/list_changed.
func listChanges(t *testing.T, g *gateway.Gateway, s gateway.Surface) (*mcp.ClientSession, <-chan string) {
	t.Helper()
	changes := make(chan string, 64)
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server(s).Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { changes <- "prompts" },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changes <- "resources" },
	})
	cs, err := c.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, changes
}

// awaitList waits for list_changed notifications of kind until list
// returns want.
func awaitList(t *testing.T, changes <-chan string, kind string, list func() []string, want []string) {
	t.Helper()
	for {
		if got := list(); slices.Equal(got, want) {
			return
		}
		select {
		case k := <-changes:
			if k != kind {
				continue
			}
		case <-t.Context().Done():
			t.Fatalf("no %s list_changed brought %v; the list is %v", kind, want, list())
		}
	}
}

// TestListChangedIsFollowed: an upstream that adds and removes prompts
// and resources sends list_changed; the gateway lists it again, and its
// clients get list_changed and the new lists.
func TestListChangedIsFollowed(t *testing.T) {
	up := promptServer("alpha", false)
	g := newGateway(t, mcpclient.ServerConfig{Name: "alpha", Server: up})
	cs, changes := listChanges(t, g, gateway.Direct)
	prompts := func() []string {
		res, err := cs.ListPrompts(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range res.Prompts {
			out = append(out, p.Name)
		}
		return out
	}
	resources := func() []string {
		res, err := cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Resources {
			out = append(out, r.URI)
		}
		return out
	}
	if got := prompts(); !slices.Equal(got, []string{"mcp__alpha__greet"}) {
		t.Fatalf("prompts before: %v", got)
	}
	up.AddPrompt(&mcp.Prompt{Name: "wave"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "wave"}}}}, nil
	})
	awaitList(t, changes, "prompts", prompts, []string{"mcp__alpha__greet", "mcp__alpha__wave"})
	up.RemovePrompts("greet")
	awaitList(t, changes, "prompts", prompts, []string{"mcp__alpha__wave"})
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "mcp__alpha__greet"}); err == nil {
		t.Error("a removed prompt was got; want an error")
	}
	up.AddResource(&mcp.Resource{Name: "todo", URI: "file:///todo.txt"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///todo.txt", Text: "todo"}}}, nil
	})
	awaitList(t, changes, "resources", resources, []string{"toolshelf://alpha/file:///notes.txt", "toolshelf://alpha/file:///todo.txt"})
	up.RemoveResources("file:///notes.txt")
	awaitList(t, changes, "resources", resources, []string{"toolshelf://alpha/file:///todo.txt"})
}

// syncBuffer is a log destination for several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOversizedItemsAreRefused: a prompt over mcpclient.MaxItemBytes is
// left out with a logged reason, its sibling shown, and an answer over
// mcpclient.MaxAnswerBytes is refused with an error that names the bound
// and a logged reason.
func TestOversizedItemsAreRefused(t *testing.T) {
	up := promptServer("alpha", false)
	up.AddPrompt(&mcp.Prompt{Name: "huge", Description: strings.Repeat("x", mcpclient.MaxItemBytes)},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	up.AddResource(&mcp.Resource{Name: "big", URI: "file:///big.txt"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///big.txt", Text: strings.Repeat("y", mcpclient.MaxAnswerBytes)}}}, nil
	})
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cfg, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "alpha", Server: up}})
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: cfg, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shelf.Close() })
	g, err := gateway.New(shelf, gateway.Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	cs := connect(t, g, gateway.Meta)
	res, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Prompts) != 1 || res.Prompts[0].Name != "mcp__alpha__greet" {
		t.Errorf("prompts %+v, want greet alone", res.Prompts)
	}
	if log := logs.String(); !strings.Contains(log, "list item refused: too large") || !strings.Contains(log, "item=huge") {
		t.Errorf("the log does not say why huge was refused:\n%s", log)
	}
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "toolshelf://alpha/file:///big.txt"})
	if err == nil || !strings.Contains(err.Error(), "mcpclient.MaxAnswerBytes") {
		t.Errorf("reading an oversized resource: %v, want an error naming the bound", err)
	}
	if log := logs.String(); !strings.Contains(log, "answer refused: too large") {
		t.Errorf("the log does not say why the read was refused:\n%s", log)
	}
}
