package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/adapter"
	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/internal/safetext"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/selection"
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
	selectTools, prefetch      bool
	selectFallback             string
	maxTurns, maxTokens        int
	toolBudget                 int
	firstWait                  time.Duration
	metrics                    string
	lexicon                    string
	script                     string
	codemodeMode               string
}

func (f *agentFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.caps.register(cmd)
	fl.StringVar(&f.providerName, "provider", "", providerHelp())
	fl.StringVar(&f.model, "model", "", modelHelp())
	fl.StringVar(&f.baseURL, "base-url", "", "the provider's base URL (an OpenAI-compatible server for openai-chat, a proxy, an emulator toolshelf emulate serves)")
	fl.StringVar(&f.mcpFile, "mcp", "", "MCP servers file in the mcpServers format (default: ./.toolshelf/mcp.json, then $XDG_CONFIG_HOME/toolshelf/mcp.json)")
	fl.StringVar(&f.tools, "tools", "", "adjust the active tools: +pattern activates, -pattern deactivates, comma-separated (e.g. +tool_search,-mcp__github__*)")
	fl.StringVar(&f.system, "system", DefaultSystemPrompt, "system prompt of a new session")
	fl.StringVar(&f.sessionDir, "session-dir", "", "session directory (default: the XDG data directory)")
	fl.StringVar(&f.resume, "resume", "", "continue a saved session: an id, a unique prefix, a path or last")
	fl.BoolVar(&f.fork, "fork", false, "with --resume: continue in a copy, leaving the original unchanged")
	fl.BoolVar(&f.noSession, "no-session", false, "do not save the conversation")
	fl.BoolVar(&f.asJSON, "json", false, "print agent events as JSON Lines on stdout instead of text")
	fl.BoolVar(&f.selectTools, "select", false, "two-phase selection: the model first picks the tools a task needs from a short catalog; only those are declared, kept for the task's turns (tool_search only as the fallback)")
	fl.BoolVar(&f.prefetch, "prefetch", false, "search a new session's first prompt and load the tools it asks for with confidence, so the first request declares them")
	fl.StringVar(&f.selectFallback, "select-fallback", "", "what --select does when nothing is picked, in order: ask (chat only), groups, search, full (default ask,groups,search)")
	fl.IntVar(&f.maxTurns, "max-turns", 50, "requests per prompt at most")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "output tokens per answer at most (default: the provider's)")
	fl.IntVar(&f.toolBudget, "tool-budget", 0, "keep the declared tool definitions within this many tokens: past it, the least recently used loaded tools go back on the shelf where the model's tool class pays least (0: no budget)")
	fl.DurationVar(&f.firstWait, "mcp-wait", 10*time.Second, "how long the first prompt waits for MCP servers whose tools are declared up front")
	fl.StringVar(&f.script, "script", "", "with --provider emulator: a JSON Lines file of replies to play in order instead of the stand-in model (as emulate --script)")
	fl.StringVar(&f.codemodeMode, "codemode-mode", toolshelf.CodemodeOn, "while the codemode tool is declared: on (the declared tools scripts can call are described by how a script calls them) or only (direct tools are not declared: scripts reach them, and the codemode tool lists them)")
	fl.StringVar(&f.lexicon, "lexicon", os.Getenv("TOOLSHELF_LEXICON"), "search aliases learned from your sessions' failed searches, read and added to: this file, or off (default: $TOOLSHELF_LEXICON, else the one toolshelf lexicon shows)")
	fl.StringVar(&f.metrics, "metrics", "", "append a token record per model request to this JSON Lines file, or off (default: $XDG_STATE_HOME/toolshelf/metrics.jsonl; read it with toolshelf stats)")
}

// agentRun is a configured agent with what it needs to run and close.
type agentRun struct {
	e       *env
	flags   *agentFlags
	shelf   *toolshelf.Shelf
	conv    *toolshelf.Agent
	reg     *tool.Registry
	mcp     *mcpclient.Manager
	session *session.Session
	closers []func()
	out     *eventWriter
	// metricsWarned is set once a metrics failure was reported.
	metricsWarned bool
}

// close releases everything in reverse order.
func (r *agentRun) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// setupAgent maps the flags onto the front door: the provider, the shelf
// with the MCP servers, the session and the conversation.
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
	case f.prefetch && f.selectTools:
		return nil, usagef("--prefetch and --select both choose the first request's tools: give one")
	case f.codemodeMode != toolshelf.CodemodeOn && f.codemodeMode != toolshelf.CodemodeOnly:
		return nil, usagef("--codemode-mode %q: use %s or %s", f.codemodeMode, toolshelf.CodemodeOn, toolshelf.CodemodeOnly)
	}
	r := &agentRun{e: e, flags: f, out: &eventWriter{w: e.stdout, errw: e.stderr, asJSON: f.asJSON}}
	ok := false
	defer func() {
		if !ok {
			r.close()
		}
	}()
	// The session first: a --resume that names no session fails before
	// a model or a server starts, and a resumed session says which
	// servers file it ran with.
	var sc *toolshelf.SessionConfig
	if !f.noSession {
		var err error
		if sc, err = sessionConfig(f); err != nil {
			return nil, err
		}
	}
	prov, newModel, err := r.provider()
	if err != nil {
		return nil, err
	}
	mcpFile, err := r.serversFile(sc)
	if err != nil {
		return nil, err
	}
	cfg := toolshelf.Config{
		MCPFile:    mcpFile,
		Logger:     e.logger(true),
		ClientName: "toolshelf", ClientVersion: version(),
		// --tools +codemode declares the codemode tool without codemode
		// servers: it must be registered for the pattern to find it.
		// --codemode-mode only declares it too.
		Codemode: toolshelf.CodemodeConfig{Enable: activates(f.tools, codemode.Name), Mode: f.codemodeMode},
	}
	if !f.asJSON {
		// Long calls show how far they are; --json output stays events.
		cfg.Progress = newProgressPrinter(e.stderr).report
	}
	if f.metrics != metricsOff {
		if cfg.Metrics, err = r.metricsPath(); err != nil {
			printf(e.stderr, "toolshelf: warning: metrics not recorded: %v (--metrics FILE writes elsewhere, --metrics off disables them)\n", err)
			cfg.Metrics = ""
		}
	}
	if cfg.Lexicon, err = lexiconPath(f.lexicon); err != nil {
		printf(e.stderr, "toolshelf: warning: no learned aliases: %v (--lexicon FILE reads one elsewhere, --lexicon off uses none)\n", err)
		cfg.Lexicon = ""
	}
	if r.shelf, err = toolshelf.New(e.ctx, cfg); err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { _ = r.shelf.Close() })
	r.reg, r.mcp = r.shelf.Registry(), r.shelf.MCP()
	learned := r.learnedTools(sc != nil && sc.Resume != "", r.shelf.MCPFile())
	learn := activateOnce(learned)
	acfg := toolshelf.AgentConfig{
		Provider: prov, NewModel: newModel, SystemPrompt: f.system, MaxTurns: f.maxTurns, MaxTokens: f.maxTokens,
		FirstWait: f.firstWait, Notify: r.notify,
		// The applied suggestions first, so --tools -pattern wins.
		Adjust: func(reg *tool.Registry) error { learn(reg); return applyToolPatterns(reg, f.tools) },
		// A tool --tools or shelf suggest --apply activates is waited for
		// like a direct one, so the first request declares it.
		FirstWaitFor: append(activatedPatterns(f.tools), learned...),
	}
	if f.firstWait <= 0 {
		acfg.FirstWait = -1
	}
	if f.toolBudget > 0 {
		acfg.Unload = &toolshelf.UnloadConfig{Budget: f.toolBudget}
	}
	acfg.Session = sc
	if f.prefetch {
		acfg.Prefetch = &toolsearch.Prefetch{}
	}
	if f.selectTools {
		sel := &toolshelf.SelectConfig{Ask: ask}
		if f.selectFallback != "" {
			if sel.Fallbacks, err = selection.ParseFallbacks(f.selectFallback); err != nil {
				return nil, usagef("--select-fallback: %v", err)
			}
		}
		if dir, err := os.UserCacheDir(); err == nil {
			sel.CachePath = filepath.Join(dir, "toolshelf", "selections.json")
		}
		acfg.Select = sel
	}
	if r.conv, err = r.shelf.Agent(e.ctx, acfg); err != nil {
		return nil, explainSessionError(err)
	}
	r.closers = append(r.closers, func() { _ = r.conv.Close() })
	r.warnMissingServers(mcpFile)
	if r.session = r.conv.Session(); r.session != nil {
		if n := r.session.Recovered(); n > 0 {
			fmt.Fprintf(e.stderr, "toolshelf: the session's last entry was cut short (the process writing it was stopped); its %d bytes were dropped\n", n)
		}
		if open := transcript.OpenCalls(r.session.Messages()); len(open) > 0 {
			names := make([]string, len(open))
			for i, c := range open {
				names[i] = oneLine(c.Name, 64)
			}
			printf(e.stderr, "toolshelf: the session's last run stopped during %s; answered as interrupted\n", plural(len(open), "tool call")+" ("+strings.Join(names, ", ")+")")
		}
	}
	ok = true
	return r, nil
}

// notify prints what the conversation says about itself.
func (r *agentRun) notify(n toolshelf.Note) {
	switch n.Kind {
	case toolshelf.NoteWaiting:
		fmt.Fprintln(r.e.stderr, "toolshelf: "+n.Text)
	case toolshelf.NoteServerFailed:
		// The log has said so already, with the reason (warnings are
		// always logged).
	case toolshelf.NoteMetrics:
		if !r.metricsWarned {
			r.metricsWarned = true
			printf(r.e.stderr, "toolshelf: warning: %s (--metrics FILE writes elsewhere, --metrics off disables them)\n", n.Text)
		}
	default:
		r.note(n.Text)
	}
}

// provider maps --provider, --model, --base-url, --script and the
// capability flags onto the front door's Provider, with the provider
// table's names, default models and keys, and returns the constructor of
// its model: the adapter's, on --script's emulator when there is one.
func (r *agentRun) provider() (toolshelf.Provider, func(toolshelf.Provider) (llm.Model, error), error) {
	f := r.flags
	name := f.providerName
	if name == "" {
		name = defaultProvider()
		if name == toolshelf.Emulator {
			printf(r.e.stderr, "toolshelf: no %s: answering with the built-in emulator (--provider %s)\n", orList(keyEnvs()), toolshelf.Emulator)
		}
	}
	info, ok := toolshelf.LookupProvider(name)
	switch {
	case !ok:
		return toolshelf.Provider{}, nil, usagef("unknown --provider %q: use %s", name, toolshelf.ProviderNames())
	case f.script != "" && !info.Offline:
		return toolshelf.Provider{}, nil, usagef("--script plays replies in the emulator: use it with --provider %s", toolshelf.Emulator)
	case f.baseURL != "" && info.Offline:
		return toolshelf.Provider{}, nil, usagef("--base-url: --provider %s runs in process; for an emulator served by toolshelf emulate, name the provider of its API with its URL", name)
	}
	p := toolshelf.Provider{Name: name, Model: cmp.Or(f.model, info.DefaultModel), BaseURL: f.baseURL, MaxTokens: f.maxTokens}
	if p.Model == "" {
		return p, nil, usagef("--provider %s needs --model (the id the server knows, e.g. llama3.3)", name)
	}
	if info.NeedsKey && os.Getenv(info.KeyEnv) == "" {
		return p, nil, fmt.Errorf("--provider %s needs an API key: set %s", name, info.KeyEnv)
	}
	var models adapter.Config
	if f.script != "" {
		s, err := emulator.ReadScript(f.script)
		if err != nil {
			return p, nil, fmt.Errorf("--script: %w", err)
		}
		if models.Emulator, err = emulator.New(emulator.Config{Responder: s}); err != nil {
			return p, nil, err
		}
	}
	caps, err := f.caps.lookup(info.APIFor(p.Model), p.Model)
	if err != nil {
		return p, nil, err
	}
	p.Capabilities = &caps
	return p, models.New, nil
}

// defaultProvider is the provider of a run without --provider: the first
// of the table whose key is in the environment and that has a default
// model (anthropic with ANTHROPIC_API_KEY, else openai with
// OPENAI_API_KEY, else gemini with GEMINI_API_KEY), else the emulator.
func defaultProvider() string {
	for _, p := range toolshelf.Providers() {
		if p.NeedsKey && p.DefaultModel != "" && os.Getenv(p.KeyEnv) != "" {
			return p.Name
		}
	}
	return toolshelf.Emulator
}

// providerHelp is the help of --provider, from the provider table.
func providerHelp() string {
	var names, defaults []string
	for _, p := range toolshelf.Providers() {
		names = append(names, p.Name+" ("+p.Summary+")")
		if p.NeedsKey && p.DefaultModel != "" {
			defaults = append(defaults, p.Name+" with "+p.KeyEnv)
		}
	}
	return orList(names) + "; default: " + strings.Join(append(defaults, toolshelf.Emulator), ", else ")
}

// modelHelp is the help of --model, from the provider table.
func modelHelp() string {
	type group struct {
		model string
		names []string // the providers whose default it is
	}
	var groups []group
	var required []string
	for _, p := range toolshelf.Providers() {
		i := slices.IndexFunc(groups, func(g group) bool { return g.model == p.DefaultModel })
		switch {
		case p.DefaultModel == "":
			required = append(required, p.Name)
		case i < 0:
			groups = append(groups, group{p.DefaultModel, []string{p.Name}})
		default:
			groups[i].names = append(groups[i].names, p.Name)
		}
	}
	var parts []string
	for _, g := range groups {
		parts = append(parts, g.model+" for "+strings.Join(g.names, " and "))
	}
	return "model id (default: " + strings.Join(parts, ", ") + "; required for " + orList(required) + ")"
}

// keyEnvs lists the environment variables defaultProvider reads.
func keyEnvs() []string {
	var envs []string
	for _, p := range toolshelf.Providers() {
		if p.NeedsKey && p.DefaultModel != "" && !slices.Contains(envs, p.KeyEnv) {
			envs = append(envs, p.KeyEnv)
		}
	}
	return envs
}

// serversFile returns the servers file of a run: --mcp, else the one a
// resumed session last ran with, else the first of mcpCandidates that
// exists; "" when there is none, after a note saying where toolshelf
// looked and how to make one.
func (r *agentRun) serversFile(sc *toolshelf.SessionConfig) (string, error) {
	if r.flags.mcpFile != "" {
		return r.flags.mcpFile, nil
	}
	if sc != nil && sc.Resume != "" {
		// A session that cannot be read fails when it is opened, with
		// the reason; here it only remembers nothing.
		if recorded, err := toolshelf.SessionMCPFile(sc.Resume); err == nil && recorded != "" {
			_, statErr := os.Stat(recorded)
			if statErr == nil {
				return recorded, nil
			}
			printf(r.e.stderr, "toolshelf: warning: the session ran with the servers file %s, which cannot be read now (%v); --mcp FILE names the one to use\n", recorded, unwrapPath(statErr))
		}
	}
	path := findMCPFile("")
	if path == "" {
		printLine(r.e.stderr, "toolshelf: "+noServersFile()+"; running without MCP tools")
	}
	return path, nil
}

// warnMissingServers tells the person, when a resumed session declared
// tools that no configured server provides, which servers they need and
// how to get them: with no servers file in effect, that is the cause.
func (r *agentRun) warnMissingServers(mcpFile string) {
	var missing []string
	for _, name := range r.reg.Pending() {
		if ns, ok := mcpclient.Namespace(name); ok && !r.mcp.Provides(name) && !slices.Contains(missing, ns) {
			missing = append(missing, ns)
		}
	}
	if len(missing) == 0 {
		return
	}
	why := "no servers file is in effect"
	if mcpFile != "" {
		why = "the servers file " + mcpFile + " configures no such server"
	}
	printf(r.e.stderr, "toolshelf: warning: the session's tools of %s cannot be called: %s; name the servers file the session used with --mcp FILE\n",
		strings.Join(missing, ", "), why)
}

// mcpCandidates are where toolshelf looks for the servers file without
// --mcp, in order: ./.toolshelf/mcp.json, then
// $XDG_CONFIG_HOME/toolshelf/mcp.json.
func mcpCandidates() []string {
	candidates := []string{filepath.Join(".toolshelf", "mcp.json")}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "toolshelf", "mcp.json"))
	}
	return candidates
}

// findMCPFile returns the MCP servers file: path (--mcp) when set, else the
// first of mcpCandidates that exists; "" when there is none.
func findMCPFile(path string) string {
	if path != "" {
		return path
	}
	for _, c := range mcpCandidates() {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return ""
}

// requireMCPFile is findMCPFile for the commands that need a servers
// file: none is an error that says where toolshelf looked.
func requireMCPFile(path string) (string, error) {
	if path = findMCPFile(path); path == "" {
		return "", errors.New(noServersFile())
	}
	return path, nil
}

// noServersFile says that no servers file was found, where toolshelf
// looked, and how to make one.
func noServersFile() string {
	cands := mcpCandidates()
	for i, c := range cands {
		if !filepath.IsAbs(c) {
			cands[i] = "./" + filepath.ToSlash(c)
		}
	}
	return fmt.Sprintf(`no MCP servers file: looked for %s; create one holding {"mcpServers": {"NAME": {"command": "PROGRAM", "args": ["ARG"]}}}, or name one with --mcp FILE`,
		strings.Join(cands, " and "))
}

// unwrapPath returns a path error's cause, without the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// sessionConfig maps --session-dir, --resume and --fork onto the front
// door's SessionConfig: a session id, a unique prefix or last resolved to
// its file.
func sessionConfig(f *agentFlags) (*toolshelf.SessionConfig, error) {
	resolve := sessionDir(&f.sessionDir)
	dir, err := resolve()
	if err != nil {
		return nil, err
	}
	sc := &toolshelf.SessionConfig{Dir: dir, Fork: f.fork}
	if f.resume != "" {
		if _, sc.Resume, err = locate(resolve, f.resume); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// prompt runs one user prompt to its end.
func (r *agentRun) prompt(ctx context.Context, text string) error {
	r.out.redact = r.mcp.Redact
	r.out.shown = nil
	var runErr error
	for ev, err := range r.conv.Run(ctx, text) {
		if err != nil {
			runErr = err
			continue
		}
		r.out.event(ev)
	}
	r.out.endTurn()
	return runErr
}

// activates reports whether the --tools patterns activate the named tool.
func activates(spec, name string) bool {
	return slices.ContainsFunc(activatedPatterns(spec), func(p string) bool { return provider.Match(p, name) })
}

// noServers returns the error of a run that answered although every
// configured MCP server (one at least) failed to connect: exit status 3,
// since the answer had none of their tools.
func (r *agentRun) noServers() error {
	var failed, logins []string
	enabled := 0
	for _, s := range r.mcp.Servers() {
		switch {
		case s.State == mcpclient.Disabled:
			continue
		case s.State == mcpclient.NeedsLogin:
			failed = append(failed, s.Name)
			logins = append(logins, "toolshelf mcp login "+s.Name)
		case s.State == mcpclient.Failed && !errors.Is(s.Err, mcpclient.ErrStopped):
			failed = append(failed, s.Name)
		}
		enabled++
	}
	if enabled == 0 || len(failed) < enabled {
		return nil
	}
	what, its := "the MCP server "+failed[0], "its"
	if len(failed) > 1 {
		what, its = "every MCP server ("+strings.Join(failed, ", ")+")", "their"
	}
	if len(logins) == len(failed) {
		return exitError{code: exitNoServers, err: fmt.Errorf("%s needs sign-in, so the answer had none of %s tools; run %s", what, its, strings.Join(logins, ", then "))}
	}
	return exitError{code: exitNoServers, err: fmt.Errorf("%s failed to connect, so the answer had none of %s tools; the warnings above say why, and toolshelf mcp list checks the servers file", what, its)}
}

// activatedPatterns returns the patterns of a --tools list that activate
// (+pattern or pattern).
func activatedPatterns(spec string) []string {
	var out []string
	for _, item := range splitList(spec) {
		if item[0] != '-' {
			out = append(out, strings.TrimPrefix(item, "+"))
		}
	}
	return out
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
searches, calls the tool it found and reports the result.

Exit status: 0 when the prompt was answered; 1 when the run failed (the provider's error, printed
once) or was cancelled; 2 when the command line is wrong; 3 when it was answered but every
configured MCP server failed to connect, so the answer had none of their tools.`,
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
			case err != nil:
				return r.out.printed(err)
			}
			return r.noServers()
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
	// shown is the error the last run ended with, once it was printed
	// (text mode), so that it is not printed twice.
	shown error
}

// printed returns err marked as printed already when it is the error the
// run's output showed; otherwise err.
func (o *eventWriter) printed(err error) error {
	if err != nil && o.shown != nil && errors.Is(err, o.shown) {
		return exitError{err: err, code: 1, shown: true}
	}
	return err
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
			o.shown = ev.Err
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
