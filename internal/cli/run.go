package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/bench/standin"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/internal/safetext"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
	"github.com/toolshelf/toolshelf/transcript"
)

// DefaultSystemPrompt is the agent's system prompt unless --system says
// otherwise.
const DefaultSystemPrompt = "You are toolshelf, a command-line agent. Do what the user asks with the tools you have; when a tool you need is not loaded, find it with tool_search. Answer briefly."

// agentFlags are the flags of run and chat.
type agentFlags struct {
	caps                       capabilityFlags
	providerName, model        string
	baseURL, mcpFile, tools    string
	system, sessionDir, resume string
	fork, noSession, asJSON    bool
	verbose, selectTools       bool
	selectFallback             string
	maxTurns, maxTokens        int
	firstWait                  time.Duration
	metrics                    string
}

func (f *agentFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.caps.register(cmd)
	fl.StringVar(&f.providerName, "provider", "", "anthropic, openai (Responses), openai-chat (Chat Completions) or emulator (offline); default: anthropic with ANTHROPIC_API_KEY, else openai with OPENAI_API_KEY, else emulator")
	fl.StringVar(&f.model, "model", "", "model id (default: claude-opus-5-5 for anthropic and emulator, gpt-5.6-sol for openai; required for openai-chat)")
	fl.StringVar(&f.baseURL, "base-url", "", "the provider's base URL (an OpenAI-compatible server for openai-chat, a proxy, the emulator)")
	fl.StringVar(&f.mcpFile, "mcp", "", "MCP servers file in the mcpServers format (default: ./.toolshelf/mcp.json, then $XDG_CONFIG_HOME/toolshelf/mcp.json)")
	fl.StringVar(&f.tools, "tools", "", "adjust the active tools: +pattern activates, -pattern deactivates, comma-separated (e.g. +tool_search,-mcp__github__*)")
	fl.StringVar(&f.system, "system", DefaultSystemPrompt, "system prompt of a new session")
	fl.StringVar(&f.sessionDir, "session-dir", "", "session directory (default: the XDG data directory)")
	fl.StringVar(&f.resume, "resume", "", "continue a saved session: an id, a unique prefix, a path or last")
	fl.BoolVar(&f.fork, "fork", false, "with --resume: continue in a copy, leaving the original unchanged")
	fl.BoolVar(&f.noSession, "no-session", false, "do not save the conversation")
	fl.BoolVar(&f.asJSON, "json", false, "print agent events as JSON Lines on stdout instead of text")
	fl.BoolVar(&f.selectTools, "select", false, "two-phase selection: the model first picks the tools a task needs from a short catalog; only those are declared, kept for the task's turns (tool_search only as the fallback)")
	fl.StringVar(&f.selectFallback, "select-fallback", "", "what --select does when nothing is picked, in order: ask (chat only), groups, search, full (default ask,groups,search)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log MCP connections and servers' standard error to stderr (by default only problems)")
	fl.IntVar(&f.maxTurns, "max-turns", 50, "requests per prompt at most")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "output tokens per answer at most (default: the provider's)")
	fl.DurationVar(&f.firstWait, "mcp-wait", 10*time.Second, "how long the first prompt waits for MCP servers whose tools are declared up front")
	fl.StringVar(&f.metrics, "metrics", "", "append a token record per model request to this JSON Lines file, or off (default: $XDG_STATE_HOME/toolshelf/metrics.jsonl; read it with toolshelf stats)")
}

// agentRun is a configured agent with what it needs to run and close.
type agentRun struct {
	e       *env
	flags   *agentFlags
	agent   *agent.Agent
	reg     *tool.Registry
	mcp     *mcpclient.Manager
	session *session.Session
	closers []func()
	waited  bool
	out     *eventWriter
	// modelID is the model's id; selection is two-phase selection
	// (--select), nil without it.
	modelID   string
	selection *selectState
	metrics   metricsRecorder
}

// close releases everything in reverse order.
func (r *agentRun) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// setupAgent builds the provider, the shelf, the MCP servers, the session
// and the agent.
//
// ask, when set, asks the user a question (chat): two-phase selection
// uses it when nothing fits.
func setupAgent(e *env, f *agentFlags, ask func(context.Context, string) (string, error)) (*agentRun, error) {
	// Flags that contradict each other fail before a model or a server
	// starts.
	switch {
	case f.noSession && f.resume != "":
		return nil, usagef("--resume and --no-session cannot be used together")
	case f.fork && f.resume == "":
		return nil, usagef("--fork needs --resume")
	}
	r := &agentRun{e: e, flags: f, out: &eventWriter{w: e.stdout, errw: e.stderr, asJSON: f.asJSON}}
	ok := false
	defer func() {
		if !ok {
			r.close()
		}
	}()
	model, err := r.model()
	if err != nil {
		return nil, err
	}
	// The shelf: tool_search (activated when a server defers its tools
	// or --tools asks) and the MCP servers' tools.
	r.reg = tool.NewRegistry()
	ranker, err := search.NewBM25F(nil)
	if err != nil {
		return nil, err
	}
	searcher := toolsearch.New(r.reg, ranker)
	if err := r.reg.Register(searcher.Tool()); err != nil {
		return nil, err
	}
	cfg, err := loadMCPConfig(f.mcpFile)
	if err != nil {
		return nil, err
	}
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	r.mcp = mcpclient.NewManager(cfg, r.reg, tool.NewNamer(), mcpclient.Options{Logger: logger, ClientName: "toolshelf", ClientVersion: version()})
	r.closers = append(r.closers, func() { _ = r.mcp.Close() })
	// A search says which servers failed to connect.
	searcher.SetNotes(r.mcp.SearchNotes)
	r.mcp.Start(e.ctx)
	// The session: resumed, forked or new.
	var msgs []llm.Message
	if !f.noSession {
		if r.session, err = openSession(f); err != nil {
			return nil, err
		}
		r.closers = append(r.closers, func() { _ = r.session.Close() })
		msgs = r.session.Messages()
		if n := r.session.Recovered(); n > 0 {
			fmt.Fprintf(e.stderr, "toolshelf: the session's last entry was cut short (the process writing it was stopped); its %d bytes were dropped\n", n)
		}
		if open := transcript.OpenCalls(msgs); len(open) > 0 {
			names := make([]string, len(open))
			for i, c := range open {
				names[i] = oneLine(c.Name, 64)
			}
			printf(e.stderr, "toolshelf: the session's last run stopped during %s; answered as interrupted\n", plural(len(open), "tool call")+" ("+strings.Join(names, ", ")+")")
		}
	}
	if len(msgs) > 0 {
		// Tools the transcript declared stay declared: those whose server
		// has not registered them yet wait as pending names.
		var names []string
		for _, t := range transcript.CurrentTools(msgs) {
			names = append(names, t.Name)
		}
		r.reg.Restore(names...)
	}
	// tool_search is declared whenever a server keeps tools on the shelf
	// (added to a resumed session's set if a server was configured since);
	// with --select, only when selection falls back to it.
	if f.selectTools {
		if err := r.setupSelection(model, ask); err != nil {
			return nil, err
		}
	} else if r.mcp.NeedsSearch() {
		r.reg.Activate(toolsearch.Name)
	}
	acfg := agent.Config{
		Model: model, Tools: r.reg, Messages: msgs, SystemPrompt: f.system,
		Sections: llm.Sections{r.mcp.Section()}, MaxTurns: f.maxTurns, MaxTokens: f.maxTokens,
		// A call waits, within the turn's context, for the servers it
		// needs: tool_search for every server still connecting, an MCP
		// tool (a resumed session's, say) for its own.
		Await: r.mcp.WaitFor,
	}
	if f.selectTools {
		// The head declares no tools: the selection is declared after
		// it, so sessions share their cached head.
		acfg.HeadTools = func(llm.Tool) bool { return false }
	}
	if r.session != nil {
		acfg.Recorder = agent.RecorderFunc(func(m llm.Message) error {
			_, err := r.session.Append(m)
			return err
		})
	}
	if r.agent, err = agent.New(acfg); err != nil {
		return nil, err
	}
	ok = true
	return r, nil
}

// model builds the provider adapter the flags choose.
func (r *agentRun) model() (llm.Model, error) {
	f := r.flags
	name := f.providerName
	if name == "" {
		switch {
		case os.Getenv("ANTHROPIC_API_KEY") != "":
			name = "anthropic"
		case os.Getenv("OPENAI_API_KEY") != "":
			name = "openai"
		default:
			name = "emulator"
			fmt.Fprintln(r.e.stderr, "toolshelf: no ANTHROPIC_API_KEY or OPENAI_API_KEY: answering with the built-in emulator (--provider emulator)")
		}
	}
	cfg := adapterConfig{model: f.model, baseURL: f.baseURL, maxTokens: f.maxTokens}
	switch name {
	case "anthropic":
		cfg.api, cfg.apiKey = provider.AnthropicMessages, os.Getenv("ANTHROPIC_API_KEY")
		if cfg.model == "" {
			cfg.model = "claude-opus-5-5"
		}
	case "openai":
		cfg.api, cfg.apiKey = provider.OpenAIResponses, os.Getenv("OPENAI_API_KEY")
		if cfg.model == "" {
			cfg.model = "gpt-5.6-sol"
		}
	case "openai-chat":
		cfg.api, cfg.apiKey = provider.OpenAIChat, os.Getenv("OPENAI_API_KEY")
		if cfg.model == "" {
			return nil, usagef("--provider openai-chat needs --model (the id the server knows, e.g. llama3.3)")
		}
		if cfg.apiKey == "" {
			cfg.apiKey = "none" // local servers ignore it; the SDK wants one
		}
	case "emulator":
		if cfg.model == "" {
			cfg.model = "claude-opus-5-5"
		}
		cfg.api = guessAPI(cfg.model)
		url, stop, err := startEmulator()
		if err != nil {
			return nil, err
		}
		r.closers = append(r.closers, stop)
		cfg.baseURL, cfg.apiKey = url, "emulator"
		if cfg.api != provider.AnthropicMessages {
			cfg.baseURL += "/v1"
		}
	default:
		return nil, usagef("unknown --provider %q: use anthropic, openai, openai-chat or emulator", name)
	}
	if cfg.apiKey == "" {
		return nil, fmt.Errorf("--provider %s needs an API key: set %s", name, map[string]string{
			"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}[name])
	}
	caps, err := r.flags.caps.lookup(cfg.api, cfg.model)
	if err != nil {
		return nil, err
	}
	cfg.caps = caps
	r.modelID = cfg.model
	r.metrics.api, r.metrics.class = string(cfg.api), string(caps.Tools)
	return newAdapter(cfg)
}

// startEmulator serves an in-process emulator whose responder,
// standin.Scout, plays a model that searches, calls what it found and
// reports the result.
func startEmulator() (url string, stop func(), err error) {
	srv, err := emulator.New(emulator.Config{Responder: standin.Scout{}})
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := emulatorServer(srv)
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}, nil
}

// loadMCPConfig reads the MCP servers file: --mcp, else
// ./.toolshelf/mcp.json, else $XDG_CONFIG_HOME/toolshelf/mcp.json; none is
// an empty configuration.
func loadMCPConfig(path string) (*mcpclient.Config, error) {
	if path != "" {
		return mcpclient.LoadConfig(path)
	}
	candidates := []string{filepath.Join(".toolshelf", "mcp.json")}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "toolshelf", "mcp.json"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return mcpclient.LoadConfig(c)
		}
	}
	return &mcpclient.Config{}, nil
}

// openSession returns the session the flags choose: resumed (or a fork of
// it) or new.
func openSession(f *agentFlags) (*session.Session, error) {
	resolve := sessionDir(&f.sessionDir)
	if f.resume == "" {
		dir, err := resolve()
		if err != nil {
			return nil, err
		}
		cwd, _ := os.Getwd()
		return session.Create(dir, &session.Options{Cwd: cwd})
	}
	dir, path, err := locate(resolve, f.resume)
	if err != nil {
		return nil, err
	}
	var s *session.Session
	if f.fork {
		s, err = session.Fork(path, "", dir, nil)
	} else {
		s, err = session.Open(path, nil)
	}
	if err != nil {
		return nil, explainSessionError(err)
	}
	return s, nil
}

// prompt runs one user prompt to its end.
func (r *agentRun) prompt(ctx context.Context, text string) error {
	if !r.waited {
		r.waited = true
		if notice := r.mcp.WaitDirect(ctx, r.flags.firstWait); notice != "" {
			fmt.Fprintln(r.e.stderr, "toolshelf: "+notice)
		}
	}
	if r.selection != nil {
		if err := r.selectFor(ctx, text); err != nil {
			return err
		}
	}
	if err := applyToolPatterns(r.reg, r.flags.tools); err != nil {
		return err
	}
	r.agent.SetSections(llm.Sections{r.mcp.Section()})
	r.out.redact = r.mcp.Redact
	var runErr error
	for ev, err := range r.agent.Run(ctx, llm.UserText(text, time.Now().UnixMilli())) {
		if err != nil {
			runErr = err
			continue
		}
		r.out.event(ev)
		r.observeMetrics(ev)
	}
	r.out.endTurn()
	return runErr
}

// applyToolPatterns activates (+pattern or pattern) and deactivates
// (-pattern) registered tools by name; * matches any run of characters.
func applyToolPatterns(reg *tool.Registry, spec string) error {
	for _, item := range splitList(spec) {
		on := true
		switch item[0] {
		case '+':
			item = item[1:]
		case '-':
			on, item = false, item[1:]
		}
		if item == "" {
			return usagef("--tools: empty pattern")
		}
		var names []string
		for _, t := range reg.Tools() {
			if provider.Match(item, t.Name) {
				names = append(names, t.Name)
			}
		}
		if on {
			reg.Activate(names...)
		} else {
			reg.Deactivate(names...)
		}
	}
	return nil
}

func newRunCmd(e *env) *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run the agent on one prompt",
		Long: `run sends one prompt to the agent and streams the answer: assistant text on stdout, tool
activity on stderr (or, with --json, every agent event as a JSON line on stdout). The agent's
tools are the MCP servers of --mcp: deferred servers' tools stay on the shelf and the model loads
them with tool_search; every change is declared in the transcript before the next request,
rendered so the provider's prompt cache survives. The conversation is saved as a session unless
--no-session; --resume continues one. Ctrl-C cancels the turn and leaves the session consistent.

Offline: --provider emulator (the default without API keys) answers with a model stand-in that
searches, calls the tool it found and reports the result.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usagef("run needs a prompt, e.g. toolshelf run \"list the allowed directories\"")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := setupAgent(e, &f, nil)
			if err != nil {
				return err
			}
			defer r.close()
			err = r.prompt(e.ctx, strings.Join(args, " "))
			if r.session != nil && !f.asJSON {
				fmt.Fprintf(e.stderr, "session %s\n", r.session.ID())
			}
			sig, stopped := stoppedBySignal(e.term)
			switch {
			case errors.Is(err, context.Canceled) && stopped:
				return fmt.Errorf("stopped by %v; the session keeps everything up to the stop", sig)
			case errors.Is(err, context.Canceled):
				return errors.New("cancelled; the session keeps everything up to the cancellation")
			}
			return err
		},
	}
	f.register(cmd)
	return cmd
}

// eventWriter prints agent events as text or JSON Lines. Text is made
// safe to print (package safetext): the model's answer on w as it streams,
// the tool activity on errw line by line.
type eventWriter struct {
	w, errw io.Writer
	asJSON  bool
	midLine bool
	text    *safetext.Writer // over w, made at the first text
	// redact, when set, redacts the tool activity: the values the MCP
	// configuration took from the environment (Manager.Redact).
	redact func(string) string
}

// activity returns a tool call's arguments or result as one line of at
// most n runes, redacted and made safe.
func (o *eventWriter) activity(s string, n int) string {
	if o.redact != nil {
		s = o.redact(s)
	}
	return oneLine(s, n)
}

// answer returns the writer of the model's streamed text.
func (o *eventWriter) answer() *safetext.Writer {
	if o.text == nil {
		o.text = safetext.NewWriter(o.w)
	}
	return o.text
}

func (o *eventWriter) event(ev agent.Event) {
	if o.asJSON {
		o.json(ev)
		return
	}
	switch ev.Type {
	case agent.EventStream:
		if ev.Stream == nil {
			return
		}
		switch ev.Stream.Type {
		case llm.EventTextDelta:
			_, _ = o.answer().WriteString(ev.Stream.Delta)
			o.midLine = !strings.HasSuffix(ev.Stream.Delta, "\n")
		}
	case agent.EventToolStart:
		o.endTurn()
		if ev.Call != nil {
			printf(o.errw, "→ %s %s\n", oneLine(ev.Call.Name, 0), o.activity(string(ev.Call.Arguments), 160))
		}
	case agent.EventToolEnd:
		if ev.Call != nil && ev.Message != nil {
			mark := "←"
			if ev.Message.IsError {
				mark = "✗"
			}
			printf(o.errw, "%s %s: %s\n", mark, oneLine(ev.Call.Name, 0), o.activity(llm.ContentText(ev.Message.Content, " "), 160))
		}
	case agent.EventMessage:
		if m := ev.Message; m != nil && m.Role == llm.RoleSystem && (len(m.ToolsAdded) > 0 || len(m.ToolsRemoved) > 0) {
			var parts []string
			for _, t := range m.ToolsAdded {
				parts = append(parts, "+"+t.Name)
			}
			for _, t := range m.ToolsRemoved {
				parts = append(parts, "-"+t.Name)
			}
			printf(o.errw, "· declared %s\n", strings.Join(parts, " "))
		}
	case agent.EventAgentEnd:
		if ev.Err != nil && !errors.Is(ev.Err, context.Canceled) {
			o.endTurn()
			printf(o.errw, "toolshelf: %v\n", ev.Err)
		}
	}
}

// endTurn writes what the streamed text held back and ends its line.
func (o *eventWriter) endTurn() {
	if o.text != nil {
		_ = o.text.Flush()
	}
	if o.midLine && !o.asJSON {
		fmt.Fprintln(o.w)
		o.midLine = false
	}
}

// jsonEvent is an agent event as a JSON line.
type jsonEvent struct {
	Type    agent.EventType `json:"type"`
	Turn    int             `json:"turn"`
	Stream  llm.EventType   `json:"stream,omitempty"`
	Delta   string          `json:"delta,omitempty"`
	Call    *jsonCall       `json:"call,omitempty"`
	Message *llm.Message    `json:"message,omitempty"`
	Error   string          `json:"error,omitempty"`
}

type jsonCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// json0 writes any value as a JSON line.
func (o *eventWriter) json0(v any) {
	enc := json.NewEncoder(o.w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(o.errw, "toolshelf: event not written: %v\n", err)
	}
}

func (o *eventWriter) json(ev agent.Event) {
	j := jsonEvent{Type: ev.Type, Turn: ev.Turn, Message: ev.Message}
	if ev.Stream != nil {
		if ev.Stream.Type != llm.EventTextDelta && ev.Stream.Type != llm.EventThinkingDelta {
			return // the complete message follows as a message event
		}
		j.Stream, j.Delta = ev.Stream.Type, ev.Stream.Delta
	}
	if ev.Call != nil {
		j.Call = &jsonCall{ID: ev.Call.ID, Name: ev.Call.Name}
		if json.Valid(ev.Call.Arguments) {
			j.Call.Arguments = ev.Call.Arguments
		}
	}
	if ev.Err != nil {
		j.Error = ev.Err.Error()
	}
	o.json0(j)
}
