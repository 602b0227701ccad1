package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/toolshelf/toolshelf/tool"
)

// maxCallStack bounds a script's call depth.
const maxCallStack = 10000

// errTimeout is the cause of a script's context when its time is up.
var errTimeout = errors.New("codemode: time limit")

// script is one run: a VM, owned by the goroutine that calls run, and
// the tool calls in flight, each in a goroutine of its own that hands its
// outcome back to the VM's goroutine through done.
type script struct {
	r      *Runner
	limits Limits
	ctx    context.Context // the run's, with the time limit; cancelled when the run ends
	cancel context.CancelCauseFunc
	parent context.Context

	vm *goja.Runtime
	// Host functions captured before the script runs, which it may
	// replace for itself.
	stringify, parse, arrayIsArray goja.Callable
	replacer                       goja.Value  // writeJSON's, made at its first use
	json                           *jsonWriter // the write in progress
	errorCtor                      *goja.Object

	stopOnce sync.Once
	stopped  chan struct{} // closed by stop
	stopMu   sync.Mutex    // guards stopErr
	stopErr  error         // why the script was stopped

	done    chan completion // outcomes of tool calls
	quit    chan struct{}   // closed when run returns: calls still running give up handing back
	calls   sync.WaitGroup  // the tool calls' goroutines
	slots   chan struct{}   // one token per call in flight (Limits.Concurrent)
	pending int             // calls started and not yet settled

	res      Result
	outBytes int

	ids   map[string]string // identifier → tool name, built at the first lookup that needs it
	funcs map[string]goja.Value
}

// completion is a finished tool call, to be settled on the VM's
// goroutine.
type completion struct {
	idx             int
	value           func() goja.Value // the resolution; nil for a rejection
	errText         string
	text            string
	isError         bool
	millis          int64
	resolve, reject func(any) error
}

// Run runs code, the body of an async function, and returns what it did.
// It returns when the script's result settles or a limit or ctx stops it,
// and only after every tool call it started has returned: a stopped
// script's calls are cancelled through their context, which their
// handlers must honour.
func (r *Runner) Run(ctx context.Context, code string) *Result {
	s := &script{
		r: r, limits: r.limits, parent: ctx,
		stopped: make(chan struct{}), done: make(chan completion), quit: make(chan struct{}),
		slots: make(chan struct{}, r.limits.Concurrent), funcs: map[string]goja.Value{},
	}
	tctx, cancelTimeout := context.WithTimeoutCause(ctx, r.limits.Timeout, errTimeout)
	defer cancelTimeout()
	s.ctx, s.cancel = context.WithCancelCause(tctx)
	defer s.cancel(nil)
	s.vm = goja.New()
	s.vm.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	// A runaway recursion is a RangeError, not a heap that grows with
	// goja's stack.
	s.vm.SetMaxCallStackSize(maxCallStack)

	watched := make(chan struct{})
	go s.watch(watched)
	defer func() {
		close(s.quit)
		s.cancel(context.Canceled)
		s.calls.Wait()
		<-watched
	}()
	s.run(code)
	return &s.res
}

// watch stops the script when its time is up, ctx is cancelled or the
// heap grows past the memory limit; it returns when the run ends.
func (s *script) watch(done chan<- struct{}) {
	defer close(done)
	guard := newMemGuard(s.limits.Memory)
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-s.stopped:
			return
		case <-s.ctx.Done():
			s.stop(s.ctxErr())
			return
		case now := <-tick.C:
			if guard.over(now) {
				s.stop(&LimitError{Limit: LimitMemory, Value: byteSize(s.limits.Memory),
					What: fmt.Sprintf("the heap grew by %s while it ran", byteSize(int64(guard.peak)))})
				return
			}
		}
	}
}

// stop ends the script for err: the VM is interrupted at its next
// instruction, the run's loop wakes, and the calls in flight are
// cancelled.
func (s *script) stop(err error) {
	s.stopOnce.Do(func() {
		s.stopMu.Lock()
		s.stopErr = err
		s.stopMu.Unlock()
		s.vm.Interrupt(err)
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

// run compiles and runs the script, then settles tool calls until the
// script's promise settles.
func (s *script) run(code string) {
	if err := s.install(); err != nil {
		s.res.Err = fmt.Errorf("codemode: setting up the script: %w", err)
		return
	}
	// The code goes on the wrapper's first line, so that the line numbers
	// of errors are the script's own.
	prog, err := goja.Compile("script.js", "(async () => {"+code+"\n})()", false)
	if err != nil {
		s.res.Err = &ScriptError{Message: "the script does not compile: " + compileMessage(err)}
		return
	}
	v, err := s.vm.RunProgram(prog)
	if err != nil {
		s.fail(err)
		return
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		s.res.Err = errors.New("codemode: the script's wrapper did not return a promise")
		return
	}
	for p.State() == goja.PromiseStatePending {
		if s.pending == 0 {
			s.res.Err = ErrNeverSettled
			return
		}
		select {
		case c := <-s.done:
			s.pending--
			if err := s.settle(c); err != nil {
				s.fail(err)
				return
			}
		case <-s.stopped:
			s.res.Err = s.stopReason()
			return
		}
	}
	if err := s.stopReason(); err != nil {
		s.res.Err = err
		return
	}
	if p.State() == goja.PromiseStateRejected {
		s.res.Err = &ScriptError{Message: s.describeError(p.Result())}
		return
	}
	if err := s.setValue(p.Result()); err != nil {
		s.fail(err)
	}
}

// fail records an error raised while the VM ran: the limit or
// cancellation that interrupted it, or an exception.
func (s *script) fail(err error) {
	var interrupted *goja.InterruptedError
	var overflow *goja.StackOverflowError
	var exc *goja.Exception
	switch {
	case errors.As(err, &overflow):
		s.res.Err = &ScriptError{Message: fmt.Sprintf("RangeError: Maximum call stack size exceeded: the script's calls nest more than %d deep (a recursion that does not end?)\n   %s",
			maxCallStack, strings.TrimSpace(overflow.Error()))}
	case errors.As(err, &interrupted):
		if e, ok := interrupted.Value().(error); ok {
			s.res.Err = e
		} else {
			s.res.Err = err
		}
	case errors.As(err, &exc):
		s.res.Err = &ScriptError{Message: s.describeError(exc.Value())}
	case s.stopReason() != nil:
		s.res.Err = s.stopReason()
	default:
		s.res.Err = &ScriptError{Message: err.Error()}
	}
}

// compileMessage is a compile error without goja's wrapping.
func compileMessage(err error) string {
	var ce *goja.CompilerSyntaxError
	if errors.As(err, &ce) {
		return ce.Error()
	}
	return err.Error()
}

// describeError renders a thrown value: an Error's stack line (name,
// message and where), anything else as text.
func (s *script) describeError(v goja.Value) string {
	if obj, ok := v.(*goja.Object); ok {
		if stack := obj.Get("stack"); stack != nil && !goja.IsUndefined(stack) {
			if text := strings.TrimSpace(stack.String()); text != "" {
				return strings.ReplaceAll(text, "\tat ", "    at ")
			}
		}
	}
	if v == nil || goja.IsUndefined(v) {
		return "the script threw undefined"
	}
	return "the script threw " + s.show(v)
}

// setValue records the script's return value and counts it as output.
func (s *script) setValue(v goja.Value) error {
	if v == nil || goja.IsUndefined(v) {
		return nil
	}
	var text string
	if str, ok := primitiveString(v); ok {
		text = str
	} else {
		j, over, err := s.writeJSON(v, s.limits.Output-s.outBytes, 2)
		switch {
		case over == overDepth:
			s.res.Err = &ScriptError{Message: tooDeep("the script's value")}
			return nil
		case over == overBytes:
			s.output(s.limits.Output + 1)
			return nil
		case err != nil:
			return err
		case goja.IsUndefined(j):
			text = v.String()
		default:
			text = j.String()
		}
	}
	if !s.output(len(text)) {
		return nil
	}
	s.res.Value = text
	return nil
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

// primitiveString returns v when it is a string primitive. It does not
// export objects, which would copy them whole.
func primitiveString(v goja.Value) (string, bool) {
	if _, ok := v.(*goja.Object); ok || v == nil {
		return "", false
	}
	str, ok := v.Export().(string)
	return str, ok
}

// show renders a value for an error message or a console line: strings as
// they are, other values as JSON where they have a JSON form.
func (s *script) show(v goja.Value) string {
	text, _ := s.showWithin(v, s.limits.Output)
	return text
}

// showWithin is show for a value whose JSON may take at most maxBytes; it
// reports false, and a short stand-in, when the JSON would be longer.
func (s *script) showWithin(v goja.Value, maxBytes int) (string, bool) {
	if v == nil || goja.IsUndefined(v) {
		return "undefined", true
	}
	if str, ok := primitiveString(v); ok {
		return str, true
	}
	if _, ok := v.(*goja.Object); ok {
		j, over, err := s.writeJSON(v, maxBytes, 0)
		switch {
		case over == overDepth:
			return fmt.Sprintf("[a value nested deeper than %d levels]", maxValueDepth), true
		case over == overBytes:
			return "[a value too long to show]", false
		case err == nil && !goja.IsUndefined(j):
			return j.String(), true
		}
	}
	return v.String(), true
}

// callTool starts a call of t with the script's argument and returns its
// promise.
func (s *script) callTool(t tool.Tool, arg goja.Value) goja.Value {
	if len(s.res.Calls) >= s.limits.Calls {
		s.stop(&LimitError{Limit: LimitCalls, Value: fmt.Sprint(s.limits.Calls),
			What: fmt.Sprintf("it made more than %d tool calls", s.limits.Calls)})
		return goja.Undefined()
	}
	p, resolve, reject := s.vm.NewPromise()
	args, err := s.arguments(t, arg)
	if err != nil {
		_ = reject(s.newError(err.Error()))
		return s.vm.ToValue(p)
	}
	idx := len(s.res.Calls)
	s.res.Calls = append(s.res.Calls, Call{Tool: t.Name, Arguments: recordArgs(args)})
	s.pending++
	s.calls.Add(1)
	go s.exec(completion{idx: idx, resolve: resolve, reject: reject}, t, args)
	return s.vm.ToValue(p)
}

// arguments turns the script's argument into the call's JSON: an object,
// or nothing at all for {}.
func (s *script) arguments(t tool.Tool, arg goja.Value) ([]byte, error) {
	if arg == nil || goja.IsUndefined(arg) || goja.IsNull(arg) {
		return []byte("{}"), nil
	}
	obj, ok := arg.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || obj.ClassName() == "Function" {
		return nil, fmt.Errorf("tools.%s takes one object of arguments, such as tools.%[1]s({...}); got %s", Identifier(t.Name), s.show(arg))
	}
	j, over, err := s.writeJSON(obj, maxArgumentBytes, 0)
	switch {
	case over == overDepth:
		return nil, errors.New(tooDeep("the argument of tools." + Identifier(t.Name)))
	case over == overBytes:
		return nil, fmt.Errorf("the arguments of tools.%s are over %s as JSON; pass less in one call", Identifier(t.Name), byteSize(maxArgumentBytes))
	case err != nil:
		return nil, fmt.Errorf("the arguments of tools.%s cannot be written as JSON: %v", Identifier(t.Name), err)
	}
	return []byte(j.String()), nil
}

// exec runs one call in its own goroutine and hands the outcome back.
func (s *script) exec(c completion, t tool.Tool, args []byte) {
	defer s.calls.Done()
	start := time.Now()
	res, errText := s.invoke(t, args)
	c.millis = time.Since(start).Milliseconds()
	switch {
	case errText != "":
		c.errText, c.text, c.isError = errText, errText, true
	case res.IsError:
		c.errText = resultText(res)
		if c.errText == "" {
			c.errText = fmt.Sprintf("tool %s failed without saying why", t.Name)
		}
		c.text, c.isError = c.errText, true
	default:
		c.text = resultText(res)
		structured := res.Structured
		text := c.text
		c.value = func() goja.Value {
			if len(structured) > 0 {
				if v, err := s.parse(goja.Undefined(), s.vm.ToValue(string(structured))); err == nil {
					return v
				}
			}
			return s.vm.ToValue(text)
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

// settle records a finished call and resolves or rejects its promise,
// which runs the script on to its next await.
func (s *script) settle(c completion) error {
	call := &s.res.Calls[c.idx]
	call.IsError, call.Result, call.Millis = c.isError, record(c.text), c.millis
	call.ResultBytes, call.ResultTokens = len(c.text), s.r.count(c.text)
	if c.value == nil {
		return c.reject(s.newError(c.errText))
	}
	return c.resolve(c.value())
}

// newError makes a JavaScript Error with the host's Error constructor.
func (s *script) newError(msg string) *goja.Object {
	obj, err := s.vm.New(s.errorCtor, s.vm.ToValue(msg))
	if err != nil {
		return s.vm.NewGoError(errors.New(msg))
	}
	return obj
}
