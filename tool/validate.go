package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/toolshelf/toolshelf/internal/ecma"
)

// ValidationBudget is the time all the pattern matches of one call's
// argument validation may take together (each match also stops after
// 100 ms): patterns come from untrusted schemas, and a pathological one
// must not stall a turn.
const ValidationBudget = time.Second

// Validator checks a tool call's arguments against the tool's parameter
// schema, read by the draft it declares (see [RenderSchema]): each
// distinct schema compiled once, remote references refused, patterns
// matched under [ValidationBudget] and within the call's context. A schema
// that cannot be read (not JSON, nested past [MaxSchemaDepth], beyond
// repair or not compiling) is not enforced: such a tool never registers,
// and the tool remains the judge of its input. The zero value is ready to
// use and safe for concurrent use.
type Validator struct {
	mu      sync.Mutex // guards schemas
	schemas map[string]*compiled
}

// ArgumentsError is why a call's arguments do not suit the tool's schema,
// in the words a model reads to fix its call.
type ArgumentsError struct {
	// Problem says what is wrong: one line per failed rule with where it
	// failed (at most five and a count), or why the arguments are not a
	// JSON object.
	Problem string
}

// Error returns the problem.
func (e *ArgumentsError) Error() string { return e.Problem }

// SlowSchemaError is a validation abandoned because a pattern of the
// schema was too slow to match: the arguments may be valid or not.
type SlowSchemaError struct {
	// Pattern is the pattern, Value the string it was matched against.
	Pattern, Value string
	// Location is where the value is in the arguments ("/values/3") when
	// the validation says, else empty.
	Location string
	// Budget is the validation's time budget.
	Budget time.Duration
}

// Error names the pattern and the budget.
func (e *SlowSchemaError) Error() string {
	return (&ecma.SlowError{Pattern: e.Pattern, Value: e.Value, Budget: e.Budget}).Error()
}

// compiled is a tool schema ready to validate. A schema without patterns
// is one shared [jsonschema.Schema]. A schema with patterns is compiled
// once per concurrent validation: its regular expressions report to an
// [ecma.Meter] that holds one validation's context and budget, so each
// validation takes an instance of its own, compiling one more only when
// every instance is in use.
type compiled struct {
	err    error              // why the schema could not be compiled
	shared *jsonschema.Schema // the schema, when it has no patterns

	schema  []byte // the schema's 2020-12 form, for more instances
	formats bool   // whether "format" is asserted
	mu      sync.Mutex
	idle    []*instance // guarded by mu
}

// instance is a schema compiled with a meter of its own.
type instance struct {
	schema *jsonschema.Schema
	meter  *ecma.Meter
}

// Validate checks args against t's parameter schema. Arguments must be
// one JSON object. The error is an [*ArgumentsError] when they do not
// suit the schema, a [*SlowSchemaError] when a pattern was too slow to
// match, and wraps [ErrCancelled] (and ctx's error) when ctx ended the
// pattern matches.
func (v *Validator) Validate(ctx context.Context, t Tool, args []byte) error {
	var inst any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&inst); err != nil {
		return &ArgumentsError{Problem: fmt.Sprintf("the arguments are not valid JSON: %v", err)}
	}
	if dec.More() {
		return &ArgumentsError{Problem: "the arguments are not one JSON value"}
	}
	if _, ok := inst.(map[string]any); !ok {
		return &ArgumentsError{Problem: "the arguments must be a JSON object"}
	}
	s := v.get(t.Parameters)
	if s.err != nil {
		return nil
	}
	if s.shared != nil {
		return explain(s.shared.Validate(inst))
	}
	in, err := s.acquire()
	if err != nil {
		return nil // compiled once already; not enforced, as above
	}
	defer s.release(in)
	in.meter.Start(ctx, ValidationBudget)
	verr := in.schema.Validate(inst)
	var slow *ecma.SlowError
	switch merr := in.meter.Err(); {
	case errors.As(merr, &slow):
		return &SlowSchemaError{Pattern: slow.Pattern, Value: slow.Value, Budget: slow.Budget, Location: patternLocation(verr, slow)}
	case merr != nil:
		return fmt.Errorf("%w: %w", ErrCancelled, merr)
	}
	return explain(verr)
}

// explain turns a validation error into the text the model reads.
func explain(err error) error {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return &ArgumentsError{Problem: describe(ve)}
	}
	return err
}

func (v *Validator) get(params json.RawMessage) *compiled {
	key := string(params)
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.schemas[key]; ok {
		return s
	}
	if v.schemas == nil {
		v.schemas = make(map[string]*compiled)
	}
	s := &compiled{}
	v.schemas[key] = s
	p := bytes.TrimSpace(params)
	if len(p) == 0 {
		p = emptySchema
	}
	a := analyse(p)
	if !a.translated {
		s.err = a.err
		return s
	}
	s.schema, s.formats = a.tr.rendering.Schema, a.tr.formats
	in, err := s.compile()
	switch {
	case err != nil:
		s.err = err
	case in.meter.Patterns() == 0:
		s.shared = in.schema
	default:
		s.idle = []*instance{in}
	}
	return s
}

// compile compiles the schema with a meter of its own.
func (s *compiled) compile() (*instance, error) {
	m := ecma.NewMeter()
	sch, err := compile(s.schema, m.Engine, s.formats)
	if err != nil {
		return nil, err
	}
	return &instance{schema: sch, meter: m}, nil
}

// acquire takes an idle instance, or compiles one when all are in use.
func (s *compiled) acquire() (*instance, error) {
	s.mu.Lock()
	if n := len(s.idle); n > 0 {
		in := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		return in, nil
	}
	s.mu.Unlock()
	return s.compile()
}

// release returns an instance for the next validation.
func (s *compiled) release(in *instance) {
	s.mu.Lock()
	s.idle = append(s.idle, in)
	s.mu.Unlock()
}

// patternLocation finds where a stopped pattern was being matched: the
// first (in location order) pattern failure of that pattern and value.
// It returns "" when the slow match left no failure (it was of a property
// name, or under a not).
func patternLocation(err error, slow *ecma.SlowError) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return ""
	}
	var found []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if p, ok := e.ErrorKind.(*kind.Pattern); ok && p.Got == slow.Value && p.Want == slow.Pattern {
			found = append(found, "/"+strings.Join(e.InstanceLocation, "/"))
		}
		for _, cause := range e.Causes {
			walk(cause)
		}
	}
	walk(ve)
	if len(found) == 0 {
		return ""
	}
	return slices.Min(found)
}

// describe turns a validation error into one line per failed rule, with
// where it failed, for the model to fix its call.
func describe(ve *jsonschema.ValidationError) string {
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			where := "/" + strings.Join(e.InstanceLocation, "/")
			k := e.ErrorKind
			if ap, ok := k.(*kind.AdditionalProperties); ok {
				// The library lists them in map order.
				k = &kind.AdditionalProperties{Properties: slices.Sorted(slices.Values(ap.Properties))}
			}
			lines = append(lines, fmt.Sprintf("at %s: %s", where, k.LocalizedString(printer)))
			return
		}
		for _, cause := range e.Causes {
			walk(cause)
		}
	}
	walk(ve)
	// Causes come in an order that may vary from run to run; the text the
	// model reads must not.
	slices.Sort(lines)
	if len(lines) > 5 {
		lines = append(lines[:5], fmt.Sprintf("and %d more problems", len(lines)-5))
	}
	return strings.Join(lines, "; ")
}
