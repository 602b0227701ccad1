package toolshelf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// DefaultFirstWait is how long a conversation's first prompt waits, at
// most, for the MCP servers whose tools are declared from the first
// request.
const DefaultFirstWait = 10 * time.Second

// AgentConfig configures a conversation ([Shelf.Agent]). Set Model, or
// Provider and NewModel.
type AgentConfig struct {
	// Model answers the requests: the caller's own, or nil to build the
	// model Provider names with NewModel.
	Model llm.Model
	// Provider names a provider's model when Model is nil.
	Provider Provider
	// NewModel builds the model of Provider, resolved ([Provider.Resolve]),
	// when Model is nil: New of package github.com/toolshelf/toolshelf/adapter
	// builds the provider's adapter on its SDK, or the offline emulator's.
	// This package links no SDK, so a program that brings its own Model
	// links none; nil with Provider fails.
	NewModel func(Provider) (llm.Model, error)
	// SystemPrompt is a new conversation's system prompt.
	SystemPrompt string
	// Session saves the conversation to a session file, new, resumed or
	// forked; nil keeps it in memory only.
	Session *SessionConfig
	// Select turns on two-phase selection: before a task's first request
	// the model picks the tools it needs from a short catalog; nil leaves
	// tools to tool_search.
	Select *SelectConfig
	// Prefetch turns on prompt prefetch: before a new conversation's
	// first request its prompt is searched and the tools it asks for with
	// confidence are loaded, so the first request declares them
	// (toolsearch.Searcher.Prefetch, in an update after the head, as a
	// tool_search load is recorded); the zero value means
	// toolsearch.DefaultPrefetch, nil no prefetch. It cannot be set with
	// Select.
	Prefetch *toolsearch.Prefetch
	// MaxTurns bounds the requests of one prompt; zero means the agent's
	// default.
	MaxTurns int
	// MaxTokens bounds each answer; zero means the model's default.
	MaxTokens int
	// FirstWait bounds the first prompt's wait for servers whose tools are
	// declared from the first request; zero means [DefaultFirstWait],
	// negative means no wait.
	FirstWait time.Duration
	// Adjust, when set, runs before each prompt's requests, after the
	// waits and the selection: the caller's own changes to the active set
	// (the command line's --tools patterns). Its error ends the prompt.
	Adjust func(*tool.Registry) error
	// FirstWaitFor names tools (or * patterns, case ignored) that Adjust
	// activates: the first prompt waits for the servers that may provide
	// them as it waits for servers with direct tools (within FirstWait),
	// so that they are declared from the first request.
	FirstWaitFor []string
	// BeforeToolCall, AfterToolCall and Sequential are passed to the
	// agent loop (see [agent.Config]).
	BeforeToolCall []agent.BeforeHook
	AfterToolCall  []agent.AfterHook
	Sequential     bool
	// Notify, when set, receives what the conversation has to say about
	// itself: servers still connecting after the first wait, servers that
	// failed, selections, a failing metrics log. It is called on the
	// goroutine that ranges over [Agent.Run].
	Notify func(Note)
	// Now returns the time of prompts and messages; nil means time.Now.
	Now func() time.Time
	// Unload, when set, keeps the declared tool definitions within a
	// budget by putting the least recently used loaded tools back on the
	// shelf where the tool class pays least for it ([UnloadConfig]).
	Unload *UnloadConfig
}

// SessionConfig says where a conversation is saved.
type SessionConfig struct {
	// Dir is the folder of new sessions and forks; empty means
	// [session.DefaultDir].
	Dir string
	// Resume is the path of a session file to continue; empty starts a new
	// session in Dir.
	Resume string
	// Fork continues Resume in a new file (in Dir), leaving it unchanged.
	Fork bool
	// Cwd is the working folder a new session records; empty means the
	// process's.
	Cwd string
}

// MCPFileEntry is the session entry type that records the servers file a
// resumed conversation switched to (its data: {"path": "..."}); a new
// session records its file in the header. [SessionMCPFile] reads the
// latest.
const MCPFileEntry session.EntryType = "mcpFile"

// mcpFileData is the data of an [MCPFileEntry].
type mcpFileData struct {
	Path string `json:"path"`
}

// SessionMCPFile returns the servers file the session at path last ran
// with, as an absolute path: the one the latest [MCPFileEntry] of its
// current branch names, else the one its header records; "" when it
// recorded none. The file is read, never changed. A program (the command
// line) resumes with that file unless told otherwise.
func SessionMCPFile(path string) (string, error) {
	s, err := session.Open(path, &session.Options{ReadOnly: true})
	if err != nil {
		return "", err
	}
	defer s.Close()
	return recordedMCPFile(s), nil
}

// recordedMCPFile returns the servers file s last ran with.
func recordedMCPFile(s *session.Session) string {
	branch := s.Branch()
	for i := len(branch) - 1; i >= 0; i-- {
		if branch[i].Type != MCPFileEntry {
			continue
		}
		var d mcpFileData
		if err := json.Unmarshal(branch[i].Data, &d); err == nil && d.Path != "" {
			return d.Path
		}
	}
	return s.Header().MCPFile
}

// Note is something a conversation reports about itself.
type Note struct {
	// Kind says what the note is about.
	Kind NoteKind
	// Text says it, in a line.
	Text string
}

// NoteKind is the subject of a [Note].
type NoteKind string

// The kinds of notes.
const (
	// NoteWaiting: servers whose tools should be declared from the first
	// request were still connecting when the first wait ended.
	NoteWaiting NoteKind = "waiting"
	// NoteSelection: a two-phase selection chose tools, failed, or starts
	// again for a new task.
	NoteSelection NoteKind = "selection"
	// NoteSelectionFailed: a selection failed; the model can load tools
	// with tool_search.
	NoteSelectionFailed NoteKind = "selection-failed"
	// NoteServerFailed: an MCP server (of the servers file or
	// Config.Servers) failed to connect or needs sign-in, so its tools
	// are missing; the text names it and says why (and, for sign-in, the
	// command that signs in). Each failure is noted once, before the
	// first request of the prompt that finds it or at the end of the
	// prompt during which it happened.
	NoteServerFailed NoteKind = "server-failed"
)

// Agent is one conversation on a shelf.
type Agent struct {
	shelf   *Shelf
	cfg     AgentConfig
	loop    *agent.Agent
	session *session.Session
	sel     *selector
	waited  bool
	// fresh is set when the conversation started with an empty
	// transcript, until its first prompt prefetched (AgentConfig.Prefetch).
	fresh bool
	// prefetched names the tools the first prompt's prefetch loaded,
	// which the head leaves to the update after it.
	prefetched map[string]bool
	// api, model and class describe the model for the metrics records.
	api, model, class string
	// inner holds the calls of the turn's codemode scripts until the
	// turn's record is written, searches their searchTools calls.
	inner    []codemode.Call
	searches []codemode.SearchCall
	// store holds what the conversation's scripts stored: replayed from
	// the path the conversation resumes from, then kept up to date by the
	// codemode tool as scripts succeed. Nil without the codemode tool.
	store *codemode.Store
	// failed holds the error noted for each server that failed, so that a
	// failure is noted once (NoteServerFailed).
	failed map[string]string
	// learnFrom is the number of messages the conversation resumed with:
	// what it learns is read after them (learn).
	learnFrom int
	// unload is the unload state, nil without AgentConfig.Unload.
	unload *unloader

	mu    sync.Mutex // guards usage
	usage Usage
}

// Usage sums the tokens of a conversation's model requests. Each part of
// the prompt is named: where [llm.Usage.Input] counts the uncached part
// alone, TotalInput counts every prompt token.
type Usage struct {
	// Requests counts the model requests whose answers reported usage:
	// the agent's, and those of two-phase selection.
	Requests int
	// TotalInput counts every prompt token: Uncached + CacheRead +
	// CacheWrite.
	TotalInput int
	// Uncached counts the prompt tokens the cache neither served nor took
	// (llm.Usage.Input).
	Uncached int
	// CacheRead counts the prompt tokens served from the provider's cache.
	CacheRead int
	// CacheWrite counts the prompt tokens written to the cache.
	CacheWrite int
	// Output counts the generated tokens, reasoning included.
	Output int
}

// add counts the usage of requests answered.
func (u *Usage) add(requests int, v llm.Usage) {
	u.Requests += requests
	u.TotalInput += v.TotalInput()
	u.Uncached += v.Input
	u.CacheRead += v.CacheRead
	u.CacheWrite += v.CacheWrite
	u.Output += v.Output
}

// Agent starts a conversation on the shelf: new, or resumed from (or
// forked off) a session file. A resumed conversation keeps the tools its
// transcript declared, and its codemode scripts load what the scripts
// that succeeded on the resumed branch stored (codemode.Store). tool_search is declared when some tool waits on
// the shelf (with Select, only when selection falls back to it). The
// shelf hosts one conversation at a time: while one is open, Agent fails
// with [ErrBusy]. Close the Agent to close its session and free the shelf
// for the next conversation, which starts from the tools the first
// started with.
func (s *Shelf) Agent(ctx context.Context, cfg AgentConfig) (*Agent, error) {
	a := &Agent{shelf: s, cfg: cfg}
	if cfg.Prefetch != nil && cfg.Select != nil {
		return nil, errors.New("toolshelf: AgentConfig.Prefetch and Select both choose the first request's tools: set one")
	}
	model := cfg.Model
	if model == nil {
		p, err := cfg.Provider.Resolve()
		if err != nil {
			return nil, err
		}
		if cfg.NewModel == nil {
			return nil, fmt.Errorf("toolshelf: provider %s needs AgentConfig.NewModel to build its model: set it to adapter.New, of package github.com/toolshelf/toolshelf/adapter (or set AgentConfig.Model)", p.Name)
		}
		if model, err = cfg.NewModel(p); err != nil {
			return nil, err
		}
		if model == nil {
			return nil, fmt.Errorf("toolshelf: AgentConfig.NewModel returned no model for provider %s", p.Name)
		}
		a.api, a.model, a.class = string(p.API), p.Model, string(p.Capabilities.Tools)
	}
	if err := s.begin(a); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = a.Close()
		}
	}()
	var msgs []llm.Message
	if cfg.Session != nil {
		var err error
		if a.session, err = openSession(cfg.Session, s.mcpFile); err != nil {
			return nil, err
		}
		msgs = a.session.Messages()
	}
	if s.codemode != nil {
		a.store = replayStore(a.session)
	}
	var err error
	if a.unload, err = newUnloader(cfg.Unload, a.class, a.session, msgs); err != nil {
		return nil, err
	}
	acfg := agent.Config{
		Model: model, Tools: s.reg, Messages: msgs, SystemPrompt: cfg.SystemPrompt,
		Sections: llm.Sections{s.mcp.Section()}, MaxTurns: cfg.MaxTurns, MaxTokens: cfg.MaxTokens,
		// A call waits, within the turn's context, for the servers it
		// reaches: tool_search for every server still connecting, an MCP
		// tool (a resumed session's, say) for its own, a codemode script
		// for those its code names.
		Await: s.mcp.WaitForCall,
		// A resumed session's tool that is still missing then says why:
		// no server of that name, or one that failed.
		Unavailable:    s.mcp.Unavailable,
		BeforeToolCall: cfg.BeforeToolCall, AfterToolCall: cfg.AfterToolCall, Sequential: cfg.Sequential,
		Now: cfg.Now,
		// While the codemode tool is declared, codemode.mode shapes the
		// other declarations (CodemodeConfig.Mode).
		Declare: s.declaration,
	}
	if cfg.Prefetch != nil && len(msgs) == 0 {
		a.fresh = true
		// The head declares the tools the conversation had before the
		// prefetch: the prefetch is an update after it, so conversations
		// share their cached head.
		acfg.HeadTools = func(t llm.Tool) bool { return !a.prefetched[t.Name] }
	}
	if cfg.Select != nil {
		// The head declares no tools: the selection is declared after it,
		// so conversations share their cached head.
		acfg.HeadTools = func(llm.Tool) bool { return false }
		var err error
		if a.sel, err = newSelector(a, model); err != nil {
			return nil, err
		}
		if cfg.Select.EveryCall {
			acfg.Sequential = true // one selection at a time
			acfg.AfterToolCall = append(acfg.AfterToolCall, func(ctx context.Context, _ *agent.Call, _ *tool.Result) {
				a.sel.again(ctx)
			})
		}
	}
	if a.session != nil {
		acfg.Recorder = agent.RecorderFunc(func(m llm.Message) error {
			_, err := a.session.Append(m)
			return err
		})
	}
	if a.loop, err = agent.New(acfg); err != nil {
		return nil, err
	}
	a.learnFrom = len(a.loop.Messages())
	// tool_search is declared whenever some tool waits on the shelf (added
	// to a resumed session's set if a server was configured since); with
	// selection, only when selection falls back to it.
	if cfg.Select == nil && s.NeedsSearch() {
		s.reg.Activate(toolsearch.Name)
	}
	// The codemode tool is declared whenever some tool or server has
	// codemode exposure.
	if s.NeedsCodemode() {
		s.reg.Activate(codemode.Name)
	}
	ok = true
	return a, nil
}

// replayStore returns the store of the codemode scripts of a resumed
// conversation: the values stored by the scripts that succeeded on the
// session's current branch, from the root to the leaf, oldest first
// (codemode.ReplayStore) — every message entry of the path, those a
// compaction summarized included. Without a session it is empty.
func replayStore(s *session.Session) *codemode.Store {
	if s == nil {
		return codemode.NewStore()
	}
	var details []json.RawMessage
	for _, e := range s.Branch() {
		if m := e.Message; m != nil && m.Role == llm.RoleToolResult && m.ToolName == codemode.Name {
			details = append(details, m.Details)
		}
	}
	return codemode.ReplayStore(details)
}

// openSession opens the session cfg names: resumed, forked or new. A new
// session records mcpFile, the shelf's servers file, in its header; a
// resumed or forked one that ran with another file gets an MCPFileEntry
// naming this one.
func openSession(cfg *SessionConfig, mcpFile string) (*session.Session, error) {
	dir := cfg.Dir
	if dir == "" && (cfg.Resume == "" || cfg.Fork) {
		var err error
		if dir, err = session.DefaultDir(); err != nil {
			return nil, err
		}
	}
	switch {
	case cfg.Resume == "" && cfg.Fork:
		return nil, errors.New("toolshelf: SessionConfig.Fork needs Resume, the session to fork")
	case cfg.Resume == "":
		wd := cfg.Cwd
		if wd == "" {
			wd = cwd()
		}
		return session.Create(dir, &session.Options{Cwd: wd, MCPFile: mcpFile})
	}
	var s *session.Session
	var err error
	if cfg.Fork {
		s, err = session.Fork(cfg.Resume, "", dir, nil)
	} else {
		s, err = session.Open(cfg.Resume, nil)
	}
	if err != nil || mcpFile == "" || recordedMCPFile(s) == mcpFile {
		return s, err
	}
	if _, err := s.AppendData(MCPFileEntry, mcpFileData{Path: mcpFile}); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Text runs one prompt as [Agent.Run] does and yields only the text the
// model writes, as it streams; the loop's other events (tool calls and
// results, declarations) are left out. An error ends the sequence.
func (a *Agent) Text(ctx context.Context, prompt string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for ev, err := range a.Run(ctx, prompt) {
			if err != nil {
				yield("", err)
				return
			}
			if ev.Type == agent.EventStream && ev.Stream.Type == llm.EventTextDelta && !yield(ev.Stream.Delta, nil) {
				return
			}
		}
	}
}

// Run runs one prompt to its end and yields the agent's events: the first
// prompt waits (bounded) for the servers whose tools are declared up
// front; a selecting conversation selects for a new task; the mcp_servers
// section is brought up to date; then the agent loop runs. An error ends
// the sequence.
func (a *Agent) Run(ctx context.Context, prompt string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		a.noteLearning()
		if err := a.prepare(ctx, prompt); err != nil {
			yield(agent.Event{}, err)
			return
		}
		now := a.now
		defer a.noteFailures()
		if a.store != nil {
			// The scripts load what earlier ones stored, and store for
			// later ones when they succeed.
			ctx = codemode.WithStore(ctx, a.store)
		}
		for ev, err := range a.loop.Run(ctx, llm.UserText(prompt, now().UnixMilli())) {
			if err == nil {
				a.observe(ev)
				a.observeUnload(ev)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// noteFailures notes the MCP servers that failed to connect since the
// last notes ([NoteServerFailed]).
func (a *Agent) noteFailures() {
	for _, st := range a.shelf.mcp.Servers() {
		if (st.State != mcpclient.Failed && st.State != mcpclient.NeedsLogin) || errors.Is(st.Err, mcpclient.ErrStopped) {
			delete(a.failed, st.Name)
			continue
		}
		msg := fmt.Sprint(st.Err)
		if a.failed[st.Name] == msg {
			continue
		}
		if a.failed == nil {
			a.failed = map[string]string{}
		}
		a.failed[st.Name] = msg
		if st.State == mcpclient.NeedsLogin {
			a.notify(NoteServerFailed, fmt.Sprintf("MCP server %s needs sign-in, so its tools are missing: %s", st.Name, msg))
			continue
		}
		a.notify(NoteServerFailed, fmt.Sprintf("MCP server %s failed to connect, so its tools are missing: %s", st.Name, msg))
	}
}

// Usage returns the tokens of the conversation's model requests so far,
// summed: since the Agent started (a resumed session's earlier requests
// are in its messages' usage). It is safe to call while a prompt runs.
func (a *Agent) Usage() Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.usage
}

// count adds requests' usage to the conversation's.
func (a *Agent) count(requests int, u llm.Usage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.usage.add(requests, u)
}

// prepare does what comes before a prompt's requests.
func (a *Agent) prepare(ctx context.Context, prompt string) error {
	s := a.shelf
	if !a.waited {
		a.waited = true
		wait := a.cfg.FirstWait
		if wait == 0 {
			wait = DefaultFirstWait
		}
		named := a.cfg.FirstWaitFor
		if a.fresh {
			// The prefetch searches every server's tools.
			named = append(slices.Clone(named), "*")
		}
		if wait > 0 {
			if notice := s.mcp.WaitDirect(ctx, wait, named...); notice != "" {
				a.notify(NoteWaiting, notice)
			}
		}
	}
	a.noteFailures()
	if a.sel != nil {
		if err := a.sel.forTask(ctx, prompt); err != nil {
			return err
		}
	}
	if err := a.prefetch(prompt); err != nil {
		return err
	}
	if a.cfg.Adjust != nil {
		if err := a.cfg.Adjust(s.reg); err != nil {
			return err
		}
	}
	a.loop.SetSections(llm.Sections{s.mcp.Section()})
	if a.unload != nil {
		a.checkBudget(nil, false)
	}
	return nil
}

func (a *Agent) notify(kind NoteKind, text string) {
	if a.cfg.Notify != nil {
		a.cfg.Notify(Note{Kind: kind, Text: text})
	}
}

// Messages returns the conversation's transcript.
func (a *Agent) Messages() []llm.Message { return a.loop.Messages() }

// Loop returns the agent loop underneath, for what the front door does
// not cover (steering, resetting, the declared tools).
func (a *Agent) Loop() *agent.Agent { return a.loop }

// Session returns the conversation's session, nil when it is not saved.
func (a *Agent) Session() *session.Session { return a.session }

// Close ends the conversation: it adds what its searches taught to the
// shelf's lexicon (Config.Lexicon), closes the session, if any,
// releasing its lock, and frees the shelf for the next conversation.
func (a *Agent) Close() error {
	a.learn()
	a.shelf.end(a)
	if a.session == nil {
		return nil
	}
	err := a.session.Close()
	a.session = nil
	return err
}

// cwd returns the working folder, or "" when it cannot be found.
func cwd() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	return d
}
