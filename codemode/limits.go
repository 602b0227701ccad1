package codemode

import (
	"fmt"
	"time"
)

// Limits bound one script. A zero field takes its value from
// [DefaultLimits].
type Limits struct {
	// Timeout bounds the script's wall time, tool calls included.
	Timeout time.Duration
	// Memory bounds what the script's VM allocates, in bytes: the engine
	// refuses an allocation past it. Each script has its own.
	Memory int64
	// Output bounds what the script logs and returns, in bytes: past it
	// the script is stopped.
	Output int
	// OutputTokens bounds what the model sees of a script's output, in
	// o200k tokens: a longer output is cut, with a note. A script's first
	// line may set it (// @options: {"max_output_tokens": N}).
	OutputTokens int
	// Calls bounds the tool calls one script makes.
	Calls int
	// Concurrent bounds the tool calls in flight at once; further calls
	// wait for a free slot (they are not refused).
	Concurrent int
}

// DefaultLimits are the limits of a script when nothing else is said:
//
//   - Timeout 30 s: the reference runtime has no timeout, and a gateway's
//     code mode without one is a way to hang it; 30 s leaves room for a few
//     hundred MCP calls of a fast server.
//   - Memory 256 MiB: the reference's QuickJS limit.
//   - OutputTokens 10,000: the reference's default.
//   - Output 1 MiB: the agent keeps at most 32 KiB of a result (the middle
//     of a longer one is cut), so 1 MiB stops a runaway loop of output long
//     before it costs memory, without refusing a result the agent would
//     still show in part.
//   - Calls 1,000 and Concurrent 8: a loop over a directory of a few
//     hundred files fits; a runaway loop stops within seconds; eight calls
//     at a time keep a stdio MCP server busy without queueing it deeply.
var DefaultLimits = Limits{
	Timeout:      30 * time.Second,
	Memory:       256 << 20,
	Output:       1 << 20,
	OutputTokens: 10_000,
	Calls:        1000,
	Concurrent:   8,
}

// withDefaults fills the zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	if l.Timeout == 0 {
		l.Timeout = DefaultLimits.Timeout
	}
	if l.Memory == 0 {
		l.Memory = DefaultLimits.Memory
	}
	if l.Output == 0 {
		l.Output = DefaultLimits.Output
	}
	if l.OutputTokens == 0 {
		l.OutputTokens = DefaultLimits.OutputTokens
	}
	if l.Calls == 0 {
		l.Calls = DefaultLimits.Calls
	}
	if l.Concurrent == 0 {
		l.Concurrent = DefaultLimits.Concurrent
	}
	return l
}

// check reports a negative limit.
func (l Limits) check() error {
	switch {
	case l.Timeout < 0:
		return fmt.Errorf("codemode: Limits.Timeout is %v: use a positive duration, or 0 for the default %v", l.Timeout, DefaultLimits.Timeout)
	case l.Memory < 0:
		return fmt.Errorf("codemode: Limits.Memory is %d: use a positive number of bytes, or 0 for the default %d", l.Memory, DefaultLimits.Memory)
	case l.Output < 0:
		return fmt.Errorf("codemode: Limits.Output is %d: use a positive number of bytes, or 0 for the default %d", l.Output, DefaultLimits.Output)
	case l.OutputTokens < 0:
		return fmt.Errorf("codemode: Limits.OutputTokens is %d: use a positive number of tokens, or 0 for the default %d", l.OutputTokens, DefaultLimits.OutputTokens)
	case l.Calls < 0:
		return fmt.Errorf("codemode: Limits.Calls is %d: use a positive number, or 0 for the default %d", l.Calls, DefaultLimits.Calls)
	case l.Concurrent < 0:
		return fmt.Errorf("codemode: Limits.Concurrent is %d: use a positive number, or 0 for the default %d", l.Concurrent, DefaultLimits.Concurrent)
	}
	return nil
}

// Limit names one of the limits.
type Limit string

// The limits, as a LimitError names them.
const (
	LimitTimeout Limit = "Timeout"
	LimitMemory  Limit = "Memory"
	LimitOutput  Limit = "Output"
	LimitCalls   Limit = "Calls"
)

// LimitError reports a script stopped by one of its limits.
type LimitError struct {
	// Limit is the limit that stopped the script.
	Limit Limit
	// Value is the limit's value, as the message shows it.
	Value string
	// What says what the script did, as the message shows it.
	What string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the script was stopped: %s, over its %s limit of %s (Limits.%s); %s",
		e.What, limitNoun[e.Limit], e.Value, e.Limit, limitFix[e.Limit])
}

var limitNoun = map[Limit]string{
	LimitTimeout: "time", LimitMemory: "memory", LimitOutput: "output", LimitCalls: "tool-call",
}

var limitFix = map[Limit]string{
	LimitTimeout: "do less in one script (fewer or smaller calls), or check for a loop that never ends",
	LimitMemory:  "keep less in memory: filter results as they arrive instead of collecting them",
	LimitOutput:  "return or log a summary, not whole results",
	LimitCalls:   "call fewer tools in one script: filter first, or split the work over several scripts",
}

// ErrNeverSettled is the error of a script whose result waits on a
// promise that nothing can settle any more: no tool call is in flight and
// the script has no timers.
var ErrNeverSettled = fmt.Errorf("the script's result never settled: it awaits a promise that nothing resolves (no tool call is in flight, and scripts have no timers); await the tool calls you start, and return a value")

// byteSize formats n bytes for a message: 256 MiB, 75.1 MiB, 10 KiB, 300 bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
