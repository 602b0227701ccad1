package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolshelf/toolshelf/internal/cut"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// Config says what scripts run against.
type Config struct {
	// Registry holds the tools scripts call: codemode and deferred tools
	// (loaded or not), and direct tools while they are active. Required.
	Registry *tool.Registry
	// Searcher is the index of tool_search, which searchTools ranks with;
	// nil leaves searchTools out (a script that calls it gets an error
	// that says so).
	Searcher *toolsearch.Searcher
	// Validator checks each call's arguments against the tool's schema
	// before the call, as every runtime does ([tool.Validator.Call]); its
	// refusal rejects the call with its text. Nil means a validator of
	// the Runner's own.
	Validator *tool.Validator
	// Wait, when set, runs before each call and may wait, within ctx, for
	// the server that provides the tool to finish connecting
	// ([mcpclient.Manager.WaitFor]).
	Wait func(ctx context.Context, name string) error
	// Limits bound each script; zero fields take [DefaultLimits].
	Limits Limits
	// Namespaces are listed in the codemode tool's description besides
	// the namespaces of the registered codemode tools: the MCP servers
	// configured with codemode exposure, whose tools register only once
	// they connect.
	Namespaces []tool.Namespace
	// ListDirect lists the direct tools in the description too, beside
	// the codemode tools: for a runtime that declares its direct tools
	// only through the script tool (the reference's codemode.mode
	// "only"). Deferred tools are never listed.
	ListDirect bool
	// Budget bounds the tool listing of the description, in o200k tokens;
	// zero means [DefaultBudget].
	Budget int
	// MaxScripts bounds the scripts that run at once; zero means
	// [DefaultMaxScripts]. A script past it waits for one to end.
	MaxScripts int
	// QueueWait bounds how long a script waits for a turn past
	// MaxScripts before it is refused with [ErrBusy]; zero means
	// [DefaultQueueWait].
	QueueWait time.Duration
}

// DefaultMaxScripts is how many scripts run at once when nothing else is
// said: with each VM's memory limit (Limits.Memory, 256 MiB by default)
// it bounds what scripts can take together, about 1 GiB, and four
// scripts keep two cores busy without starving the requests around them.
const DefaultMaxScripts = 4

// DefaultQueueWait is how long a script waits for a turn by default.
const DefaultQueueWait = 10 * time.Second

// ErrBusy is the error of a script refused because MaxScripts scripts
// were running for all of Config.QueueWait.
var ErrBusy = errors.New("the script was not run: as many scripts as this runtime runs at once (Config.MaxScripts) " +
	"were running for the whole wait (Config.QueueWait); try again in a moment, or do the work in fewer scripts")

// A Runner runs scripts. It is safe for concurrent use: each script has
// a VM of its own.
type Runner struct {
	cfg     Config
	limits  Limits
	desc    string
	counter *tokens.Counter // nil when the vocabulary could not be loaded
	turns   chan struct{}   // one token per running script (MaxScripts)
	spare   chan *vm        // a VM with the prelude run, for the next script
	// tasks counts the scripts' goroutines, making spares included (a
	// counter, not a WaitGroup: a Runner may be shared across synctest
	// bubbles).
	tasks atomic.Int64
}

// New returns a Runner over cfg's registry and computes the codemode
// tool's description from the tools registered now (see
// [Runner.Description]).
func New(cfg Config) (*Runner, error) {
	if cfg.Registry == nil {
		return nil, errors.New("codemode: Config.Registry is nil: give the registry whose tools scripts call")
	}
	if err := cfg.Limits.check(); err != nil {
		return nil, err
	}
	if cfg.MaxScripts < 0 {
		return nil, fmt.Errorf("codemode: Config.MaxScripts is %d: use a positive number, or 0 for the default %d", cfg.MaxScripts, DefaultMaxScripts)
	}
	if cfg.QueueWait < 0 {
		return nil, fmt.Errorf("codemode: Config.QueueWait is %v: use a positive duration, or 0 for the default %v", cfg.QueueWait, DefaultQueueWait)
	}
	if cfg.MaxScripts == 0 {
		cfg.MaxScripts = DefaultMaxScripts
	}
	if cfg.QueueWait == 0 {
		cfg.QueueWait = DefaultQueueWait
	}
	if cfg.Budget < 0 {
		return nil, fmt.Errorf("codemode: Config.Budget is %d: use a positive number of tokens, or 0 for the default %d", cfg.Budget, DefaultBudget)
	}
	if cfg.Validator == nil {
		cfg.Validator = new(tool.Validator)
	}
	r := &Runner{cfg: cfg, limits: cfg.Limits.withDefaults(), turns: make(chan struct{}, cfg.MaxScripts),
		spare: make(chan *vm, 1)}
	r.counter, _ = tokens.Default()
	budget := cfg.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	r.desc = describe(cfg.Registry.Tools(), cfg.Namespaces, cfg.ListDirect, budget, r.limits, r.count)
	return r, nil
}

// acquire waits for a turn to run a script: ErrBusy after QueueWait,
// the context's error when ctx ends first.
func (r *Runner) acquire(ctx context.Context) error {
	select {
	case r.turns <- struct{}{}:
		return nil
	default:
	}
	wait := time.NewTimer(r.cfg.QueueWait)
	defer wait.Stop()
	select {
	case r.turns <- struct{}{}:
		return nil
	case <-wait.C:
		return ErrBusy
	case <-ctx.Done():
		return fmt.Errorf("the script was cancelled while it waited for a turn: %w", context.Cause(ctx))
	}
}

// takeVM returns a VM for one script: the spare one, or a new one.
// Each VM runs one script only.
func (r *Runner) takeVM() (*vm, error) {
	select {
	case v := <-r.spare:
		return v, nil
	default:
		return buildVM()
	}
}

// makeSpare makes a VM for the next script when there is none: starting
// a VM and running the prelude take about 2 ms, which a script that
// finds a spare does not wait for.
func (r *Runner) makeSpare() {
	if len(r.spare) > 0 {
		return
	}
	v, err := buildVM()
	if err != nil {
		return // the next script builds its own and reports the error
	}
	select {
	case r.spare <- v:
	default:
		v.close()
	}
}

// release ends a script's turn.
func (r *Runner) release() { <-r.turns }

// Limits returns the limits every script of the Runner runs under.
func (r *Runner) Limits() Limits { return r.limits }

// count returns the o200k tokens of s (an estimate of four bytes a token
// when the vocabulary is not available).
func (r *Runner) count(s string) int {
	if r.counter == nil {
		return (len(s) + 3) / 4
	}
	return r.counter.Count(s)
}

// Result is what one script did.
type Result struct {
	// Value is what the script returned: a string as it is, any other
	// value as JSON, "" for undefined.
	Value string
	// Logs are the lines the script wrote with console.*, in order.
	Logs []Log
	// Calls are the tool calls the script made, in the order it made
	// them.
	Calls []Call
	// Searches are the searchTools calls the script made, in order.
	Searches []SearchCall
	// Content are the parts the script added with text() and image(),
	// in order; they follow the console lines in what the model sees.
	Content []tool.Content
	// Stored are the values the script stored (store), by key, as JSON.
	// A runtime keeps them in the session only when Err is nil.
	Stored map[string]json.RawMessage
	// Exited reports a script that ended by calling exit().
	Exited bool
	// outputTokens bounds what the model sees of the result
	// (Limits.OutputTokens, or the script's @options).
	outputTokens int
	// Err says why the script failed: a *ScriptError (it threw, or does
	// not compile), a *LimitError, ErrNeverSettled, or the context's
	// error when the caller cancelled it. Nil when it returned.
	Err error
}

// Log is one console line.
type Log struct {
	// Level is the console method: log, info, warn, error or debug.
	Level string `json:"level"`
	// Text is the line, its values joined by spaces.
	Text string `json:"text"`
}

// Call is one tool call a script made, as the transcript keeps it.
type Call struct {
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Arguments are the call's arguments, as JSON; arguments longer than
	// MaxRecordedBytes are kept as a JSON string of their start.
	Arguments json.RawMessage `json:"arguments"`
	// IsError reports a call that failed: the script saw a rejection.
	IsError bool `json:"isError,omitempty"`
	// Result is the start of the result's text (at most
	// MaxRecordedBytes), what the script received.
	Result string `json:"result"`
	// ResultBytes and ResultTokens measure the whole text: what stayed in
	// the script instead of reaching the model.
	ResultBytes  int `json:"resultBytes"`
	ResultTokens int `json:"resultTokens"`
	// Millis is how long the call took, waits included.
	Millis int64 `json:"ms"`
}

// MaxRecordedBytes bounds the arguments and the result text each [Call]
// keeps, so that a script of a thousand calls adds a bounded record to
// the session.
const MaxRecordedBytes = 2 << 10

// ScriptError is an error the script raised: an exception it did not
// catch (a tool's rejection included), or code that does not compile.
type ScriptError struct {
	// Message is the exception as JavaScript prints it, with the line of
	// the script where it was raised when known.
	Message string
}

func (e *ScriptError) Error() string { return e.Message }

// Text is what the model sees of a result: the console lines (warnings
// and errors marked), then the returned value; for a failed script, the
// error first.
func (res *Result) Text() string {
	var b strings.Builder
	if res.Err != nil {
		b.WriteString("Error: ")
		b.WriteString(res.Err.Error())
		if n := len(res.Calls); n > 0 {
			fmt.Fprintf(&b, "\n(%d tool call%s made before it stopped.)", n, plural(n))
		}
	}
	if len(res.Logs) > 0 {
		if b.Len() > 0 {
			b.WriteString("\nConsole output:")
		}
		for _, l := range res.Logs {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			switch l.Level {
			case "warn", "error":
				b.WriteString("[" + l.Level + "] ")
			}
			b.WriteString(l.Text)
		}
	}
	for _, c := range res.Content {
		if c.MIMEType != "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	if res.Value != "" {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(res.Value)
	}
	if b.Len() == 0 {
		if res.hasImage() {
			return "(the script returned images)"
		}
		return "(the script returned nothing and logged nothing)"
	}
	return b.String()
}

// clone returns a copy of res that shares no slice or map with it.
func (res *Result) clone() *Result {
	c := *res
	c.Logs = slices.Clone(res.Logs)
	c.Calls = slices.Clone(res.Calls)
	c.Searches = slices.Clone(res.Searches)
	c.Content = slices.Clone(res.Content)
	c.Stored = maps.Clone(res.Stored)
	return &c
}

// hasImage reports whether the script returned an image part.
func (res *Result) hasImage() bool {
	for _, c := range res.Content {
		if c.MIMEType != "" {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// record returns s cut to MaxRecordedBytes, whole runes, marked when cut.
func record(s string) string {
	if len(s) <= MaxRecordedBytes {
		return s
	}
	return s[:cut.Before(s, MaxRecordedBytes)] + fmt.Sprintf("… (%d bytes)", len(s))
}

// recordArgs returns the arguments as kept in a Call.
func recordArgs(args []byte) json.RawMessage {
	if len(args) <= MaxRecordedBytes {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(record(string(args)))
	return b
}
