package codemode

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"modernc.org/quickjs"
)

// The engine is QuickJS (modernc.org/quickjs: the C engine translated to
// Go, no cgo), a fresh VM per script. QuickJS holds what a script
// allocates in memory of its own, outside Go's heap, and refuses an
// allocation past the VM's limit with an out-of-memory exception; its
// interrupt is polled by the interpreter and by the regular-expression
// engine, so it reaches native work; deep recursion (in the script, in
// JSON.stringify, in String()) is a stack-overflow exception against a
// bound of its own. ARCHITECTURE.md says why this engine and not goja or
// QuickJS compiled to WebAssembly.

//go:embed prelude.js
var prelude string

// hostFunc answers the prelude's host calls: op and its string arguments;
// ok false returns undefined, a non-nil error is thrown as an Error.
type hostFunc func(op string, args []string) (result string, ok bool, err error)

// vm is one script's engine: the prelude installed, then bound to one
// script (bind) and never used for another.
type vm struct {
	q      *quickjs.VM
	host   hostFunc      // the script's, set by bind
	pumpFn quickjs.Value // the prelude's __pump, held from bind to close
	held   bool          // pump holds a value to free
}

// maxStackSlots bounds the VM's call depth (QuickJS stack slots, about
// one per JavaScript frame: a recursion 4,994 calls deep fits), the
// library's default. Deeper is a stack-overflow exception. It also bounds
// native recursion, whose cost can grow with the square of the depth
// (JSON.stringify checks each level for cycles): at this bound a value
// 200,000 deep fails in 0.3 s, at twice it 1.2 s.
const maxStackSlots = 5000

// compiled is the prelude's bytecode, compiled once per process: parsing
// it took half of a VM's start.
var compiled struct {
	once sync.Once
	code []byte
	err  error
}

func preludeBytecode() ([]byte, error) {
	compiled.once.Do(func() {
		q, err := quickjs.NewVM()
		if err != nil {
			compiled.err = err
			return
		}
		defer q.Close()
		compiled.code, compiled.err = q.Compile(prelude, quickjs.EvalGlobal)
	})
	return compiled.code, compiled.err
}

// buildVM starts a VM and runs the prelude in it: everything a script
// needs before it is known which script it is. It has no memory limit
// yet (bind sets it).
func buildVM() (*vm, error) {
	code, err := preludeBytecode()
	if err != nil {
		return nil, fmt.Errorf("the prelude does not compile: %w", err)
	}
	q, err := quickjs.NewVM()
	if err != nil {
		return nil, err
	}
	v := &vm{q: q}
	q.SetMaxStackSize(maxStackSlots)
	err = q.RegisterHostFunc("__host", func(args []any) (any, error) {
		if len(args) == 0 || v.host == nil {
			return nil, errors.New("host: no op, or no script")
		}
		op, _ := args[0].(string)
		strs := make([]string, len(args)-1)
		for i, a := range args[1:] {
			switch a := a.(type) {
			case string:
				strs[i] = a
			default:
				strs[i] = fmt.Sprint(a)
			}
		}
		res, ok, err := v.host(op, strs)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return quickjs.Undefined{}, nil
		}
		return res, nil
	})
	if err == nil {
		_, err = q.EvalBytecode(code)
	}
	if err != nil {
		q.Close()
		return nil, fmt.Errorf("the prelude failed: %w", err)
	}
	return v, nil
}

// bind gives the VM to one script: its host, its memory limit, and the
// bounds the prelude reads (once: a script cannot call it again to raise
// them).
func (v *vm) bind(limit int64, host hostFunc) error {
	v.host = host
	if _, err := v.q.Call("__configure", maxValueDepth, limit/16, maxArgumentBytes, byteSize(maxArgumentBytes), MaxStoreBytes); err != nil {
		return err
	}
	atom, err := v.q.NewAtom("__pump")
	if err != nil {
		return err
	}
	g := v.q.GlobalObject()
	defer g.Free()
	if v.pumpFn, err = v.q.GetPropertyValue(g, atom); err != nil {
		return err
	}
	v.held = true
	// The limit comes after the prelude, which allocates what every
	// script needs, so that a script's limit is its own.
	v.q.SetMemoryLimit(uintptr(limit))
	return nil
}

// eval runs global code, then the jobs it queued (promise reactions).
func (v *vm) eval(code string) error {
	if _, err := v.q.Eval(code, quickjs.EvalGlobal); err != nil {
		return err
	}
	return v.jobs()
}

// pump runs the prelude's pump (it settles the finished calls), then the
// jobs that queued.
func (v *vm) pump() error {
	if _, err := v.pumpFn.Call(quickjs.UndefinedValue); err != nil {
		return err
	}
	return v.jobs()
}

// jobs runs the queued jobs until none is left.
func (v *vm) jobs() error {
	for {
		n, err := v.q.ExecutePendingJobs()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// interrupt asks the engine to stop at its next check; it may be called
// from any goroutine.
func (v *vm) interrupt() { v.q.Interrupt() }

// close frees the VM and everything the script allocated.
func (v *vm) close() {
	if v.held {
		v.pumpFn.Free()
		v.held = false
	}
	v.q.Close()
}

// engineFailure classifies an error the engine raised.
type engineFailure int

const (
	failException   engineFailure = iota // a JavaScript exception
	failInterrupted                      // the interrupt stopped it
	failMemory                           // an allocation past the limit
	failStack                            // the call depth passed its bound
	failString                           // a string past the engine's length
)

// classify says what an engine error was. QuickJS raises its own
// failures as InternalError (uncatchable for the interrupt) and a string
// past its length as a RangeError.
func classify(err error) engineFailure {
	var e *quickjs.Error
	msg := err.Error()
	if errors.As(err, &e) {
		msg = e.Name + ": " + e.Message
	}
	switch {
	case strings.HasPrefix(msg, "InternalError: interrupted"):
		return failInterrupted
	case strings.HasPrefix(msg, "InternalError: out of memory"), msg == "null", msg == "":
		return failMemory
	case strings.HasPrefix(msg, "InternalError: stack overflow"):
		return failStack
	case strings.HasPrefix(msg, "InternalError: string too long"):
		return failString
	}
	return failException
}

// exceptionText is an exception as the script's error shows it: its
// name, message and stack.
func exceptionText(err error) string {
	var e *quickjs.Error
	if errors.As(err, &e) {
		s := e.Name + ": " + e.Message
		if e.Name == "" {
			s = e.Message
		}
		if st := strings.TrimRight(e.Stack, "\n"); st != "" {
			s += "\n" + st
		}
		return s
	}
	return err.Error()
}
