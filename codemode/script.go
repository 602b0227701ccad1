package codemode

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolshelf/toolshelf/tool"
)

// Bounds on what crosses between a script and the host.
const (
	// maxValueDepth is the deepest nesting the runner writes as JSON: a
	// script's value, console arguments, tool arguments, stored values.
	maxValueDepth = 100
	// maxArgumentBytes bounds the JSON of one tool call's arguments.
	maxArgumentBytes = 16 << 20
	// MaxStoreBytes bounds the values one script stores (store), as
	// JSON: what it adds to the session.
	MaxStoreBytes = 256 << 10
	// MaxImageBytes bounds one image a script returns (image), decoded;
	// images do not count towards Limits.Output.
	MaxImageBytes = 5 << 20
	// MaxImages bounds the images one script returns.
	MaxImages = 10
)

// errTimeout is the cause of a script's context when its time is up.
var errTimeout = errors.New("codemode: time limit")

// script is one run: a VM, owned by the goroutine that calls run (the
// host functions run there too), and the tool calls in flight, each in a
// goroutine of its own that hands its outcome back through done.
type script struct {
	r      *Runner
	limits Limits
	ctx    context.Context // the run's, with the time limit; cancelled when the run ends
	cancel context.CancelCauseFunc
	parent context.Context

	vm      *vm
	vmReady atomic.Bool // vm is set (stop may interrupt it)

	// mu guards res and abandoned against Run, which reads res when it
	// answers without waiting for the engine (abandonAfter); everything
	// else runs on the VM's goroutine.
	mu        sync.Mutex
	abandoned bool

	stopOnce sync.Once
	stopped  chan struct{} // closed by stop
	stopMu   sync.Mutex    // guards stopErr
	stopErr  error         // why the script was stopped

	done    chan completion // outcomes of tool calls
	quit    chan struct{}   // closed when run returns: calls still running give up handing back
	calls   sync.WaitGroup  // the tool calls' goroutines
	slots   chan struct{}   // one token per call in flight (Limits.Concurrent)
	pending int             // calls started and not yet settled
	ready   []completion    // settled calls the script has not taken yet (host op next)

	finished bool // the script's promise settled, or it called exit
	res      Result
	outBytes int

	base       *Store // the session's stored values, nil without a session
	storeBytes int
	images     int // the images the script returned

	ids map[string]string // identifier → tool name, built at the first lookup that needs it
}

// completion is a finished tool call, to be settled in the VM.
type completion struct {
	id      int
	ok      bool
	json    bool // v is JSON (the tool's structured output)
	v       string
	text    string
	isError bool
	millis  int64
}

// Run runs code, the body of an async function, and returns what it did.
// It returns when the script's result settles, it calls exit(), or a
// limit or ctx stops it, and only after every tool call it started has
// returned: a stopped script's calls are cancelled through their
// context, which their handlers must honour. Past the Runner's
// MaxScripts, Run waits for a running script to end (at most
// Config.QueueWait), then refuses with [ErrBusy].
//
// The script's store(key, value) and load(key) use the [Store] of ctx
// ([WithStore]); without one, values live for the one script.
func (r *Runner) Run(ctx context.Context, code string) *Result {
	s := &script{
		r: r, limits: r.limits, parent: ctx, base: StoreOf(ctx),
		stopped: make(chan struct{}), done: make(chan completion), quit: make(chan struct{}),
	}
	s.res.outputTokens = s.limits.OutputTokens
	code, warn, err := s.options(code)
	if err != nil {
		s.res.Err = &ScriptError{Message: err.Error()}
		return &s.res
	}
	if warn != "" {
		s.res.Logs = append(s.res.Logs, Log{Level: "warn", Text: warn})
	}
	s.slots = make(chan struct{}, s.limits.Concurrent)
	if err := r.acquire(ctx); err != nil {
		s.res.Err = err
		return &s.res
	}
	tctx, cancelTimeout := context.WithTimeoutCause(ctx, s.limits.Timeout, errTimeout)
	s.ctx, s.cancel = context.WithCancelCause(tctx)
	ended := make(chan struct{})
	r.tasks.Add(1)
	go s.runVM(code, ended, cancelTimeout)
	select {
	case <-ended:
		return &s.res
	case <-s.stopped:
	}
	// A stopped engine returns at its next check of the interrupt; one
	// busy in a native loop that does not check (they are bounded by
	// the memory limit, see prelude.js) is left to finish on its own,
	// still holding its turn, and the caller has its answer now.
	grace := time.NewTimer(abandonAfter)
	defer grace.Stop()
	select {
	case <-ended:
		return &s.res
	case <-grace.C:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.abandoned = true
	res := s.res.clone()
	res.Err = s.stopReason()
	res.Stored = nil
	return res
}

// abandonAfter is how long Run waits, after a stop, for the engine to
// return before it answers without it.
const abandonAfter = 250 * time.Millisecond

// runVM runs the script in a VM of its own and closes ended when the VM
// is closed and every call has returned; then it ends the script's turn.
func (s *script) runVM(code string, ended chan<- struct{}, cancelTimeout context.CancelFunc) {
	defer s.r.tasks.Add(-1)
	vm := s.execute(code, ended, cancelTimeout)
	// The caller has its answer: the VM is closed, its memory handed
	// back, and the turn ended after it, so that the scripts running at
	// once never hold more than MaxScripts VMs.
	if vm != nil {
		vm.close()
		trimEngineMemory()
	}
	s.r.release()
	// The next script's VM is made now, after this one has answered.
	s.r.makeSpare()
}

// execute runs the script in a VM of its own and closes ended when the
// script has settled and every call has returned; it returns the VM, nil
// when none could be started.
func (s *script) execute(code string, ended chan<- struct{}, cancelTimeout context.CancelFunc) *vm {
	defer close(ended)
	defer cancelTimeout()
	defer s.cancel(nil)
	vm, err := s.r.takeVM()
	if err == nil {
		if err = vm.bind(s.limits.Memory, s.host); err != nil {
			vm.close()
		}
	}
	if err != nil {
		s.locked(func() { s.res.Err = fmt.Errorf("codemode: starting the script's engine: %w", err) })
		return nil
	}
	s.vm = vm
	s.vmReady.Store(true)
	watched := make(chan struct{})
	go s.watch(watched)
	s.run(code)
	close(s.quit)
	s.cancel(context.Canceled)
	s.calls.Wait()
	<-watched
	return vm
}

// watch stops the script when its time is up or ctx is cancelled; it
// returns when the run ends. Once the script is stopped it interrupts
// the engine again every 10 ms: each call into the engine from Go clears
// a pending interrupt (modernc.org/quickjs's VM.enter), so a stop that
// landed between two calls (a tool call's result arriving, then the pump)
// would be lost, and the script would run on past every limit.
func (s *script) watch(done chan<- struct{}) {
	defer close(done)
	select {
	case <-s.quit:
		return
	case <-s.stopped:
	case <-s.ctx.Done():
		// A script that ended cancels its context just after it closes
		// quit: both are ready, and select may pick the context. That is
		// no stop: under load the stop's 250 ms grace then ran out, and a
		// script that had returned was answered "context canceled".
		select {
		case <-s.quit:
			return
		default:
		}
		s.stop(s.ctxErr())
	}
	again := time.NewTicker(10 * time.Millisecond)
	defer again.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-again.C:
			s.vm.interrupt()
		}
	}
}

// stop ends the script for err: the engine is interrupted at its next
// check, the run's loop wakes, and the calls in flight are cancelled.
func (s *script) stop(err error) {
	s.stopOnce.Do(func() {
		s.stopMu.Lock()
		s.stopErr = err
		s.stopMu.Unlock()
		if s.vmReady.Load() {
			s.vm.interrupt()
		}
		close(s.stopped)
		s.cancel(err)
	})
}

// stopReason returns why the script was stopped, nil while it was not:
// a limit, or its context's end (which the watcher may not have seen
// yet).
func (s *script) stopReason() error {
	s.stopMu.Lock()
	err := s.stopErr
	s.stopMu.Unlock()
	if err == nil && s.ctx.Err() != nil {
		err = s.ctxErr()
	}
	return err
}

// ctxErr is why the script's context ended: its time limit, the caller's
// cancellation, or a stop.
func (s *script) ctxErr() error {
	cause := context.Cause(s.ctx)
	switch {
	case cause == errTimeout:
		return &LimitError{Limit: LimitTimeout, Value: s.limits.Timeout.String(),
			What: "it ran longer than " + s.limits.Timeout.String()}
	case s.parent.Err() != nil:
		return fmt.Errorf("the script was cancelled: %w", context.Cause(s.parent))
	}
	return cause
}

// run runs the script, then settles tool calls until the script's
// promise settles.
func (s *script) run(code string) {
	// The code goes on the wrapper's first line, so that the line numbers
	// of errors are the script's own.
	err := s.vm.eval("__start(async () => {" + code + "\n})")
	for err == nil && !s.isFinished() {
		if s.pending == 0 {
			s.locked(func() { s.res.Err = ErrNeverSettled })
			return
		}
		select {
		case c := <-s.done:
			s.take(c)
			// Take every call that finished meanwhile in the same pump.
			for more := true; more; {
				select {
				case c := <-s.done:
					s.take(c)
				default:
					more = false
				}
			}
			err = s.vm.pump()
		case <-s.stopped:
			s.locked(func() { s.fail(nil) })
			return
		}
	}
	s.locked(func() {
		switch stop := s.stopReason(); {
		case err != nil:
			s.fail(err)
		case stop != nil && !s.res.Exited:
			s.res.Err = stop
		}
	})
}

// locked runs f with s.mu held.
func (s *script) locked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// isFinished reports whether the script's promise settled or it exited.
func (s *script) isFinished() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished
}

// take records a finished call and queues it for the script.
func (s *script) take(c completion) {
	s.pending--
	s.locked(func() { s.record(c) })
	s.ready = append(s.ready, c)
}

// fail records why the script ended without settling: the limit or
// cancellation that interrupted it, an allocation past its memory, or an
// exception the engine raised.
func (s *script) fail(err error) {
	if s.res.Exited {
		return
	}
	if stop := s.stopReason(); stop != nil {
		s.res.Err = stop
		return
	}
	if err == nil {
		return
	}
	switch classify(err) {
	case failInterrupted:
		s.res.Err = &ScriptError{Message: "the script was interrupted"}
	case failMemory:
		s.res.Err = s.memoryError()
	case failStack:
		s.res.Err = &ScriptError{Message: stackOverflow}
	case failString:
		s.res.Err = s.stringError()
	default:
		msg := exceptionText(err)
		if strings.HasPrefix(msg, "SyntaxError") {
			msg = "the script does not compile: " + msg
		}
		s.res.Err = &ScriptError{Message: msg}
	}
}

// stackOverflow is the error of a script whose calls nest too deep.
const stackOverflow = "RangeError: Maximum call stack size exceeded: the script's calls nest deeper than the engine allows " +
	"(a recursion that does not end, or a value nested too deep for String or JSON.stringify)"

func (s *script) memoryError() error {
	return &LimitError{Limit: LimitMemory, Value: byteSize(s.limits.Memory),
		What: "an allocation would have taken it past the limit"}
}

func (s *script) stringError() error {
	return &LimitError{Limit: LimitMemory, Value: byteSize(s.limits.Memory),
		What: "it built a string longer than the engine's longest (2^30 - 1 characters)"}
}

// finish records how the script's promise settled (host op done).
func (s *script) finish(kind string, args []string) {
	s.finished = true
	text := ""
	if len(args) > 0 {
		text = args[0]
	}
	switch kind {
	case "undefined":
	case "string":
		if s.output(len(text)) {
			s.res.Value = text
		}
	case "over":
		s.output(s.limits.Output + 1)
	default: // error
		switch {
		case strings.HasPrefix(text, "InternalError: out of memory"):
			s.res.Err = s.memoryError()
		case strings.HasPrefix(text, "InternalError: stack overflow"):
			s.res.Err = &ScriptError{Message: stackOverflow}
		case strings.HasPrefix(text, "InternalError: string too long"):
			s.res.Err = s.stringError()
		default:
			s.res.Err = &ScriptError{Message: text}
		}
	}
}

// output counts n bytes of output and stops the script when they pass the
// limit; it reports whether they fit.
func (s *script) output(n int) bool {
	s.outBytes += n
	if s.outBytes <= s.limits.Output {
		return true
	}
	s.stop(&LimitError{Limit: LimitOutput, Value: byteSize(int64(s.limits.Output)),
		What: fmt.Sprintf("it wrote more than %s of output", byteSize(int64(s.limits.Output)))})
	s.res.Err = s.stopReason()
	return false
}

// host answers the prelude (prelude.js), on the VM's goroutine.
func (s *script) host(op string, args []string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.abandoned {
		return "", false, errors.New("the script was stopped")
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch op {
	case "tooLong":
		s.stop(&LimitError{Limit: LimitMemory, Value: byteSize(s.limits.Memory),
			What: fmt.Sprintf("it called %s on an array-like of length %s, more elements than its memory could hold (at most %d)",
				clipName(arg(0)), clipName(arg(1)), s.limits.Memory/16)})
		return "", false, nil
	case "over":
		s.output(s.limits.Output + 1)
		return "", false, nil
	case "outputLeft":
		return strconv.Itoa(max(0, s.limits.Output-s.outBytes)), true, nil
	case "lookup":
		return s.lookupJSON(arg(0)), true, nil
	case "call":
		return s.callTool(arg(0), arg(1))
	case "next":
		if len(s.ready) == 0 {
			return "", false, nil
		}
		c := s.ready[0]
		s.ready = s.ready[1:]
		b, _ := json.Marshal(struct {
			ID   int    `json:"id"`
			OK   bool   `json:"ok"`
			JSON bool   `json:"json,omitempty"`
			V    string `json:"v"`
		}{c.id, c.ok, c.json, c.v})
		return string(b), true, nil
	case "log":
		if s.output(len(arg(1)) + 1) {
			s.res.Logs = append(s.res.Logs, Log{Level: arg(0), Text: arg(1)})
		}
		return "", false, nil
	case "text":
		if s.output(len(arg(0))) {
			s.res.Content = append(s.res.Content, tool.Content{Text: arg(0)})
		}
		return "", false, nil
	case "image":
		return "", false, s.image(arg(0), arg(1))
	case "search":
		return s.searchTools(arg(0), arg(1))
	case "describeTool":
		return s.describeTool(arg(0))
	case "describeNamespace":
		return s.describeNamespace(arg(0))
	case "allTools":
		return s.allTools(), true, nil
	case "store":
		return "", false, s.store(arg(0), arg(1))
	case "load":
		v, ok := s.load(arg(0))
		return string(v), ok, nil
	case "exit":
		s.res.Exited, s.finished = true, true
		if len(args) > 0 && s.output(len(args[0])) {
			s.res.Value = args[0]
		}
		s.vm.interrupt()
		return "", false, nil
	case "done":
		s.finish(arg(0), args[min(1, len(args)):])
		return "", false, nil
	}
	return "", false, fmt.Errorf("codemode: unknown host operation %q", op)
}

// image adds an image part to the result: base64 data of an image type.
func (s *script) image(data, mimeType string) error {
	if !strings.HasPrefix(mimeType, "image/") || len(mimeType) > 100 {
		return fmt.Errorf(`image(data, mimeType): %q is not an image type; give one such as "image/png"`, clipName(mimeType))
	}
	if base64.StdEncoding.DecodedLen(len(data)) > MaxImageBytes {
		return fmt.Errorf("image(data, mimeType): the image is over %s; return a smaller one", byteSize(MaxImageBytes))
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return fmt.Errorf("image(data, mimeType): the data is not base64: %v", err)
	}
	if s.images >= MaxImages {
		return fmt.Errorf("image(data, mimeType): a script returns at most %d images; return fewer", MaxImages)
	}
	s.images++
	s.res.Content = append(s.res.Content, tool.Content{MIMEType: mimeType, Data: b})
	return nil
}

// store keeps a value for later scripts of the session: written to the
// session only if the script succeeds.
func (s *script) store(key, value string) error {
	if len(key) > 256 {
		return fmt.Errorf("store(key, value): the key is %d bytes long; use a key of at most 256", len(key))
	}
	old := len(s.res.Stored[key])
	if s.storeBytes-old+len(key)+len(value) > MaxStoreBytes {
		return fmt.Errorf("store(%q): the script's stored values would pass %s; store less (a summary, or ids)", clipName(key), byteSize(MaxStoreBytes))
	}
	if s.res.Stored == nil {
		s.res.Stored = map[string]json.RawMessage{}
	}
	if _, had := s.res.Stored[key]; had {
		s.storeBytes -= len(key) + old
	}
	s.res.Stored[key] = json.RawMessage(value)
	s.storeBytes += len(key) + len(value)
	return nil
}

// load returns the value stored under key: by this script, or by an
// earlier one of the session.
func (s *script) load(key string) (json.RawMessage, bool) {
	if v, ok := s.res.Stored[key]; ok {
		return v, true
	}
	if s.base != nil {
		return s.base.Load(key)
	}
	return nil, false
}

// callTool starts a call of the named tool with args (JSON) and returns
// its id.
func (s *script) callTool(name, args string) (string, bool, error) {
	if len(s.res.Calls) >= s.limits.Calls {
		s.stop(&LimitError{Limit: LimitCalls, Value: fmt.Sprint(s.limits.Calls),
			What: fmt.Sprintf("it made more than %d tool calls", s.limits.Calls)})
		return "", false, errors.New("the script was stopped")
	}
	t, ok := s.lookup(name)
	if !ok {
		return "", false, errors.New(s.unknownTool("tools."+name, name))
	}
	if args == "{}" {
		args = ""
	}
	raw := []byte(args)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	id := len(s.res.Calls)
	s.res.Calls = append(s.res.Calls, Call{Tool: t.Name, Arguments: recordArgs(raw)})
	s.pending++
	s.calls.Add(1)
	go s.exec(id, t, raw)
	return strconv.Itoa(id), true, nil
}

// exec runs one call in its own goroutine and hands the outcome back.
func (s *script) exec(id int, t tool.Tool, args []byte) {
	defer s.calls.Done()
	start := time.Now()
	res, errText := s.invoke(t, args)
	c := completion{id: id, millis: time.Since(start).Milliseconds()}
	switch {
	case errText != "":
		c.v, c.text, c.isError = errText, errText, true
	case res.IsError:
		c.v = resultText(res)
		if c.v == "" {
			c.v = fmt.Sprintf("tool %s failed without saying why", t.Name)
		}
		c.text, c.isError = c.v, true
	default:
		c.ok = true
		c.text = resultText(res)
		c.v = c.text
		if len(res.Structured) > 0 && json.Valid(res.Structured) {
			c.v, c.json = string(res.Structured), true
		}
	}
	select {
	case s.done <- c:
	case <-s.quit:
	}
}

// invoke waits for a slot and the tool's server, then validates the
// arguments and runs the handler ([tool.Validator.Call]); errText is set
// when the call did not produce a result.
func (s *script) invoke(t tool.Tool, args []byte) (res *tool.Result, errText string) {
	cancelled := func() string {
		return fmt.Sprintf("tool %s was not called: the script was stopped", t.Name)
	}
	select {
	case s.slots <- struct{}{}:
	case <-s.ctx.Done():
		return nil, cancelled()
	}
	defer func() { <-s.slots }()
	cfg := s.r.cfg
	if cfg.Wait != nil {
		if err := cfg.Wait(s.ctx, t.Name); err != nil && s.ctx.Err() != nil {
			return nil, cancelled()
		}
		if fresh, ok := cfg.Registry.Get(t.Name); ok {
			t = fresh
		}
	}
	if t.Handler == nil {
		return nil, fmt.Sprintf("tool %s cannot be run here: it has no implementation", t.Name)
	}
	res, err := cfg.Validator.Call(s.ctx, t, json.RawMessage(args))
	var panicked *tool.PanicError
	switch {
	case err == nil:
		return res, ""
	case tool.RefusedArguments(err):
		return nil, fmt.Sprintf("invalid arguments for tools.%s: %v", Identifier(t.Name), err)
	case errors.As(err, &panicked):
		return nil, fmt.Sprintf("tool %s failed: it panicked: %v\n%s", t.Name, panicked.Value, firstLines(string(panicked.Stack), 8))
	case errors.Is(err, tool.ErrCancelled):
		return nil, fmt.Sprintf("tool %s was cancelled: the script was stopped", t.Name)
	}
	return nil, fmt.Sprintf("tool %s failed: %v", t.Name, err)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// resultText joins a result's text parts; images are named, not shown.
func resultText(res *tool.Result) string {
	var parts []string
	for _, c := range res.Content {
		if c.MIMEType != "" || c.Data != nil {
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data)))
			continue
		}
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// record fills in a finished call's record.
func (s *script) record(c completion) {
	call := &s.res.Calls[c.id]
	call.IsError, call.Result, call.Millis = c.isError, record(c.text), c.millis
	call.ResultBytes, call.ResultTokens = len(c.text), s.r.count(c.text)
}
