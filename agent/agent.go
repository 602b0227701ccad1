package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/transcript"
)

// Recorder persists transcript messages, in order, as they are appended
// (a session file, for instance). An error stops the run: a message that
// cannot be recorded is not appended.
type Recorder interface {
	Append(m llm.Message) error
}

// RecorderFunc adapts a function to a [Recorder].
type RecorderFunc func(m llm.Message) error

// Append calls f(m).
func (f RecorderFunc) Append(m llm.Message) error { return f(m) }

// Config configures an [Agent].
type Config struct {
	// Model answers requests. Required.
	Model llm.Model
	// Tools is the registry of executable tools: its active set is what
	// the model should be told about. Required.
	Tools *tool.Registry
	// Messages is the transcript to continue (a resumed session); nil
	// starts afresh. New keeps the tools it declared active in Tools
	// ([tool.Registry.Keep]), so resuming does not remove them.
	Messages []llm.Message
	// SystemPrompt and Sections make the head of a new transcript,
	// together with the active tools at the first run. They are ignored
	// when Messages is not empty.
	SystemPrompt string
	Sections     llm.Sections
	// HeadTools, when set, chooses which active tools a new transcript's
	// head declares; the others are declared by a system update appended
	// right after the head. Conversations that start with different tools
	// (a two-phase selection's) then share their head, and the provider's
	// cache serves it across conversations.
	HeadTools func(llm.Tool) bool
	// Declare, when set, makes the declaration of each active tool: the
	// model sees what it returns instead of [tool.Tool.Declaration], and a
	// tool it answers false for stays active (executable, callable from
	// scripts) but is not declared. It must answer the same for the same
	// tool and state, so the declarations stay byte-stable across
	// requests. Nil declares every active tool as it is.
	Declare func(tool.Tool) (llm.Tool, bool)
	// Recorder, when set, receives every appended message.
	Recorder Recorder
	// Await, when set, runs before each call is looked up and may wait, as
	// long as ctx allows, for the tool it names, called with args, to
	// become ready: an MCP tool whose server is still connecting (a
	// resumed session's tools are pending until then), tool_search while
	// any server is, a codemode script while the servers it names are.
	// When the wait ends the call goes ahead with what the registry holds.
	Await func(ctx context.Context, name string, args json.RawMessage) error
	// Unavailable, when set, explains why a tool the transcript declared
	// but that has not registered (a pending name) cannot be called once
	// Await has returned: its text, when not empty, completes the call's
	// error result "Tool <name> is not available: <text>." (the MCP
	// client's Manager.Unavailable says which server is missing or
	// failed).
	Unavailable func(name string) string
	// BeforeToolCall hooks run, in order, before each call executes. See
	// [BeforeHook].
	BeforeToolCall []BeforeHook
	// AfterToolCall hooks run, in order, after each call, before its
	// result is appended. See [AfterHook].
	AfterToolCall []AfterHook
	// Sequential runs the calls of a response one after another; by
	// default they run in parallel (results are still appended in call
	// order).
	Sequential bool
	// MaxResultBytes bounds the text of each tool result before it enters
	// the transcript: a longer one is cut in the middle, with a note
	// saying how much was cut. Zero means [DefaultMaxResultBytes].
	MaxResultBytes int
	// MaxTokens bounds each answer; zero means the model's default.
	MaxTokens int
	// MaxTurns bounds the requests of one run (0: no bound); a run that
	// reaches it ends with ErrMaxTurns.
	MaxTurns int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Errors a run can end with.
var (
	// ErrRunning is returned when a run starts while another is going.
	ErrRunning = errors.New("agent: a run is already in progress")
	// ErrMaxTurns ends a run that reached Config.MaxTurns.
	ErrMaxTurns = errors.New("agent: the run reached its maximum number of turns")
	// ErrCannotContinue is returned by Continue when the transcript
	// cannot be continued (see [Agent.Continue]).
	ErrCannotContinue = errors.New("agent: cannot continue")
)

// Agent runs the loop: before every request it declares, as an appended
// system update, the difference between what the transcript says the
// model knows and the tools the runtime can execute; it streams the answer,
// runs the tools the model calls and appends their results, until the
// model answers without calling tools.
//
// The transcript is the agent's only state; everything else (the tools the
// model was told about, the system prompt) is replayed from it,
// incrementally. An Agent is safe for concurrent use, but runs one run at a
// time.
type Agent struct {
	cfg       Config
	validator tool.Validator

	mu       sync.Mutex // guards the fields below
	messages []llm.Message
	state    *transcript.State
	desired  llm.Sections // sections the prompt should have; nil: no opinion
	steering []llm.Message
	running  bool
}

// New returns an agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Model == nil || cfg.Tools == nil {
		return nil, errors.New("agent: Config.Model and Config.Tools are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Agent{cfg: cfg, state: &transcript.State{}}
	for i, m := range cfg.Messages {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("agent: message %d of the transcript: %w", i, err)
		}
		a.messages = append(a.messages, m.Clone())
		a.state.Apply(&a.messages[len(a.messages)-1])
	}
	// The tools the transcript declared stay declared: a registry that
	// lacked them would have the next request remove them, rewriting the
	// cached prefix. Those not registered yet (their server is still
	// connecting) wait as pending names.
	if declared := a.state.Tools(); len(declared) > 0 {
		names := make([]string, len(declared))
		for i, t := range declared {
			names[i] = t.Name
		}
		cfg.Tools.Keep(names...)
	}
	return a, nil
}

// Messages returns a copy of the transcript.
func (a *Agent) Messages() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.messages)
}

// SystemPrompt returns the system prompt the transcript has given the
// model so far.
func (a *Agent) SystemPrompt() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state.SystemPrompt()
}

// DeclaredTools returns the tools the transcript has declared to the
// model so far, in order: the replay of its system messages
// ([transcript.CurrentTools]). The next request declares them, together
// with the changes its declaration step appends.
func (a *Agent) DeclaredTools() []llm.Tool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state.Tools()
}

// SetSections sets the prompt sections the model should have. Before the
// next request the difference from what the transcript says is appended
// as a section update (a change never rewrites the head).
func (a *Agent) SetSections(sections llm.Sections) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.desired = sections.Clone()
	if a.desired == nil {
		a.desired = llm.Sections{}
	}
}

// Steer queues messages (usually user messages typed while the agent
// works) to be appended before the next request of the current run, or of
// the next run.
func (a *Agent) Steer(msgs ...llm.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range msgs {
		a.steering = append(a.steering, m.Clone())
	}
}

// Reset empties the transcript but keeps what it told the model about the
// prompt and tools: the new transcript is one system message, the replay of
// the old one (nothing if there was none). It fails while a run is going.
func (a *Agent) Reset() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running {
		return ErrRunning
	}
	head, ok := a.state.SystemMessage()
	a.messages, a.state = nil, &transcript.State{}
	if ok {
		a.messages = []llm.Message{head}
		a.state.Apply(&a.messages[0])
	}
	return nil
}

// Run appends the prompts and runs the loop until the model answers
// without calling tools, yielding the run's events. The returned iterator
// must be ranged once; stopping early cancels the run, which still leaves
// the transcript consistent (every tool call answered). The error, if any,
// comes last.
func (a *Agent) Run(ctx context.Context, prompts ...llm.Message) iter.Seq2[Event, error] {
	return a.run(ctx, prompts, false)
}

// Continue runs the loop on the transcript as it is, for instance after a
// run was interrupted: tool changes are declared before the first request.
// The transcript must hold a message other than system messages, and its
// last message must not be an assistant message (answer it first) unless
// that message's tool calls are open.
//
// Every run (Run and Continue) first answers the tool calls the transcript
// leaves open at its end ([transcript.OpenCalls]: a run killed during a
// call leaves them) with [transcript.InterruptedText], recording the
// results like any other, so that a resumed session is always valid.
func (a *Agent) Continue(ctx context.Context) iter.Seq2[Event, error] {
	return a.run(ctx, nil, true)
}

func (a *Agent) run(ctx context.Context, prompts []llm.Message, cont bool) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for _, p := range prompts {
			if err := p.Validate(); err != nil {
				yield(Event{}, fmt.Errorf("agent: prompt: %w", err))
				return
			}
		}
		a.mu.Lock()
		if a.running {
			a.mu.Unlock()
			yield(Event{}, ErrRunning)
			return
		}
		if !cont && len(prompts) == 0 && len(a.steering) == 0 {
			a.mu.Unlock()
			yield(Event{}, errors.New("agent: Run needs a prompt; use Continue to answer the transcript as it is"))
			return
		}
		if cont {
			if err := a.continuableLocked(); err != nil {
				a.mu.Unlock()
				yield(Event{}, err)
				return
			}
		}
		a.running = true
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			a.running = false
			a.mu.Unlock()
		}()

		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		r := &runner{a: a, ctx: ctx, cancel: cancel, yield: yield}
		err := r.loop(prompts)
		if err != nil {
			r.emit(Event{Type: EventAgentEnd, Err: err})
			if !r.stopped {
				yield(Event{}, err)
			}
			return
		}
		r.emit(Event{Type: EventAgentEnd})
	}
}

// continuableLocked reports whether the transcript can be continued.
func (a *Agent) continuableLocked() error {
	last := -1
	for i := len(a.messages) - 1; i >= 0; i-- {
		if a.messages[i].Role != llm.RoleSystem {
			last = i
			break
		}
	}
	switch {
	case last < 0:
		return fmt.Errorf("%w: the transcript has no messages besides system messages", ErrCannotContinue)
	case a.messages[last].Role == llm.RoleAssistant && len(transcript.OpenCalls(a.messages)) == 0:
		return fmt.Errorf("%w: the last message is the model's answer; add a user message", ErrCannotContinue)
	}
	return nil
}

// executable returns the declarations the model should have: the active
// tools (as Config.Declare makes them), and the tools the transcript declared whose names are pending
// (expected to register, as after a resume before an MCP server has
// reconnected), which keep their declaration until they register — unless
// that declaration fails tool.CheckDefinition: a transcript saved before
// the check may declare a tool providers reject, which the registry now
// refuses, and the declaration step then withdraws it.
func (a *Agent) executable() []llm.Tool {
	var tools []llm.Tool
	for _, t := range a.cfg.Tools.Active() {
		if a.cfg.Declare == nil {
			tools = append(tools, t.Declaration())
		} else if d, ok := a.cfg.Declare(t); ok {
			tools = append(tools, d)
		}
	}
	pending := a.cfg.Tools.Pending()
	if len(pending) == 0 {
		return tools
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, name := range pending {
		d, ok := a.state.Tool(name)
		if ok && !slices.ContainsFunc(tools, func(t llm.Tool) bool { return t.Name == name }) &&
			tool.CheckDefinition(d.Description, d.Parameters) == nil {
			tools = append(tools, d)
		}
	}
	return tools
}

// appendMessage records and appends one message.
func (a *Agent) appendMessage(m llm.Message) error {
	if a.cfg.Recorder != nil {
		if err := a.cfg.Recorder.Append(m); err != nil {
			return fmt.Errorf("agent: recording a %s message: %w", m.Role, err)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.messages = append(a.messages, m)
	a.state.Apply(&a.messages[len(a.messages)-1])
	return nil
}

func (a *Agent) now() int64 { return a.cfg.Now().UnixMilli() }
