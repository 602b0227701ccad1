package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
)

// A tool call, once a runtime has found the tool and waited for what it
// needs, goes the same way everywhere (the agent loop, codemode scripts,
// the gateway): its arguments are made ready ([Arguments]) and validated
// ([Validator.Validate]), then the handler runs ([Run]). [Validator.Call]
// is that sequence; [Validator.Prepare] and [Run] are its two halves, for
// a runtime that does something in between (the agent's hooks).

// Errors of a call.
var (
	// ErrCancelled is wrapped by the error of a call that its context's
	// end interrupted, while its arguments were validated or its handler
	// ran; the error also wraps what the validation or the handler
	// returned.
	ErrCancelled = errors.New("tool call cancelled")
	// ErrNoHandler is returned for a tool without a handler, which is
	// known but cannot be run here.
	ErrNoHandler = errors.New("the tool has no implementation")
)

// PanicError is a handler's panic, which [Run] recovered.
type PanicError struct {
	// Tool is the tool's name.
	Tool string
	// Value is what the handler panicked with.
	Value any
	// Stack is the stack of the panicking goroutine, as
	// [debug.Stack] formats it.
	Stack []byte
}

// Error names the tool and the panic's value.
func (e *PanicError) Error() string { return fmt.Sprintf("tool %q panicked: %v", e.Tool, e.Value) }

// Arguments returns a call's arguments as a handler gets them: without
// the white space around them, and {} when there are none.
func Arguments(raw json.RawMessage) json.RawMessage {
	args := bytes.TrimSpace(raw)
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	return args
}

// Run runs t's handler with args, which should have passed
// [Validator.Prepare]. A nil result is an empty text result. The error is
// a [*PanicError] when the handler panicked (the panic goes no further),
// wraps [ErrCancelled] and the handler's error when the handler failed
// after ctx ended, is [ErrNoHandler] for a tool without a handler, and is
// otherwise the handler's own.
func Run(ctx context.Context, t Tool, args json.RawMessage) (res *Result, err error) {
	if t.Handler == nil {
		return nil, ErrNoHandler
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &PanicError{Tool: t.Name, Value: p, Stack: debug.Stack()}
		}
	}()
	res, err = t.Handler.Call(ctx, args)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %w", ErrCancelled, err)
	case err != nil:
		return nil, err
	case res == nil:
		return TextResult(""), nil
	}
	return res, nil
}

// Prepare returns the arguments a call of t runs with: args as
// [Arguments] makes them, validated against t's schema. Its error is
// [Validator.Validate]'s.
func (v *Validator) Prepare(ctx context.Context, t Tool, args json.RawMessage) (json.RawMessage, error) {
	args = Arguments(args)
	if err := v.Validate(ctx, t, args); err != nil {
		return nil, err
	}
	return args, nil
}

// Call prepares a call of t with args and runs it: [Validator.Prepare],
// then [Run]. Its error is one of theirs.
func (v *Validator) Call(ctx context.Context, t Tool, args json.RawMessage) (*Result, error) {
	args, err := v.Prepare(ctx, t, args)
	if err != nil {
		return nil, err
	}
	return Run(ctx, t, args)
}

// RefusedArguments reports whether err, from [Validator.Call] or
// [Validator.Validate], says the arguments were refused before the tool
// ran: an [*ArgumentsError] or a [*SlowSchemaError].
func RefusedArguments(err error) bool {
	var invalid *ArgumentsError
	var slow *SlowSchemaError
	return errors.As(err, &invalid) || errors.As(err, &slow)
}
