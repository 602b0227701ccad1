package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/provider"
)

func newEmulateCmd(e *env) *cobra.Command {
	var listen, script string
	var window int
	var quiet bool
	cmd := &cobra.Command{
		Use:   "emulate",
		Short: "Run the provider emulator: Anthropic, OpenAI and Gemini wire formats with a prompt-cache simulator",
		Long: `emulate serves POST /v1/messages (Anthropic Messages, and /v1/messages/count_tokens),
/v1/responses (OpenAI Responses), /v1/chat/completions (Chat Completions) and
/v1beta/models/{model}:generateContent and :streamGenerateContent (Gemini), streaming and not.
Requests are validated the way the real APIs validate them and answered with their error shapes;
the usage of every answer reports cache reads and writes as the providers' prompt caches would, so
you can point your own agent at it (base URL http://<listen>, any API key) and see what its tool
handling does to the cache before paying for it. Each request is logged on stderr: api, model,
status, input tokens, cache read / write, and what an ideal cache could have served.

Replies come from --script (a JSON Lines file of {"text": ..., "tool_calls": [{"name": ...,
"arguments": {...}}]}, played in order; on Responses a call may name a "namespace", or be
{"type": "tool_search", "arguments": {...}}, a client tool_search_call) or, without it, echo the
last user message.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := emulator.Config{ContextWindow: window}
			if script != "" {
				s, err := emulator.ReadScript(script)
				if err != nil {
					return err
				}
				cfg.Responder = s
			}
			if !quiet {
				cfg.Observe = func(r emulator.Record) {
					if r.Error != "" {
						// The model and the error quote the request: shown safe.
						printf(e.stderr, "#%d %s %s %d error: %s\n", r.Seq, r.API, r.Model, r.Status, r.Error)
						return
					}
					if r.CountTokens {
						printf(e.stderr, "#%d %s %s %d count_tokens input=%d tools=%d\n", r.Seq, r.API, r.Model, r.Status, r.Input, r.ToolTokens)
						return
					}
					printf(e.stderr, "#%d %s %s %d input=%d tools=%d read=%d write=%d uncached=%d ideal=%d output=%d\n",
						r.Seq, r.API, r.Model, r.Status, r.Input, r.ToolTokens, r.CacheRead, r.CacheWrite, r.Uncached, r.Ideal, r.Output)
				}
			}
			srv, err := emulator.New(cfg)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen %s: %w", listen, err)
			}
			root := "http://" + ln.Addr().String()
			anth, _ := toolshelf.ProviderOf(provider.AnthropicMessages)
			oai, _ := toolshelf.ProviderOf(provider.OpenAIResponses)
			gem, _ := toolshelf.ProviderOf(provider.Gemini)
			fmt.Fprintf(e.stdout, "emulator listening on %s (Anthropic base URL %s, OpenAI base URL %s, Gemini base URL %s)\n",
				root, anth.BaseURL(root), oai.BaseURL(root), gem.BaseURL(root))
			if w := beyondLoopback(ln.Addr()); w != "" {
				fmt.Fprintln(e.stderr, "toolshelf: warning: "+w)
			}
			hs := emulatorServer(srv)
			return serveUntilDone(e.ctx, hs, ln)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8089", "address to listen on (a warning says when other machines can reach it)")
	cmd.Flags().StringVar(&script, "script", "", "JSON Lines file of replies to play in order (default: echo)")
	cmd.Flags().IntVar(&window, "context-window", 0, "prompt token limit (default: per model, 128k-400k; -1: none)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "do not log requests")
	return cmd
}

// emulatorServer is the HTTP server of toolshelf emulate: headers must
// arrive within 10 s (the emulator bounds the body itself,
// emulator.Config.BodyTimeout) and an idle keep-alive connection is closed
// after 2 minutes.
func emulatorServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
}

// serveUntilDone serves hs on ln until ctx ends, then shuts it down,
// giving requests in flight 5 seconds.
func serveUntilDone(ctx context.Context, hs *http.Server, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// beyondLoopback returns a warning when addr can be reached from other
// machines (any address but a loopback one: 0.0.0.0 and :: listen on
// every interface), "" otherwise.
func beyondLoopback(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if ok && tcp.IP.IsLoopback() {
		return ""
	}
	where := "an address other machines can reach"
	if ok && tcp.IP.IsUnspecified() {
		where = "every network interface"
	}
	return fmt.Sprintf("the emulator listens on %s (%s): anyone who reaches it can use it with any API key and fill this log; "+
		"use --listen 127.0.0.1:PORT to keep it on this machine", addr, where)
}
