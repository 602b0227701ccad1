package agent

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
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolshelf/toolshelf/internal/ecma"
	"github.com/toolshelf/toolshelf/tool"
)

// validationBudget is the time all the pattern matches of one call's
// argument validation may take together (each match also stops after
// 100 ms): patterns come from untrusted schemas, and a pathological one
// must not stall the turn.
const validationBudget = time.Second

// schemaCache compiles tools' parameter schemas once per distinct schema.
type schemaCache struct {
	mu      sync.Mutex // guards schemas
	schemas map[string]*compiled
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

	params json.RawMessage // the schema's text, for more instances
	mu     sync.Mutex      // guards idle
	idle   []*instance
}

// instance is a schema compiled with a meter of its own.
type instance struct {
	schema *jsonschema.Schema
	meter  *ecma.Meter
}

// errNoRemoteRefs refuses to fetch schemas: tool schemas are untrusted and
// validation must stay offline.
var errNoRemoteRefs = errors.New("schemas may not reference other documents")

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w (%s)", errNoRemoteRefs, url)
}

// slowSchemaError is a validation the meter stopped because a pattern
// was too slow: the arguments may be valid or not.
type slowSchemaError struct {
	slow *ecma.SlowError
	// location is where the slow pattern was being matched, when the
	// validation error says ("/values/3"), else empty.
	location string
}

func (e *slowSchemaError) Error() string { return e.slow.Error() }

// validate checks args against the tool's parameter schema. Arguments must
// be a JSON object. A schema that cannot be compiled (malformed, or
// referencing other documents) is not enforced: the tool itself remains
// the judge of its input. Pattern matches stop when ctx is done (the error
// is then ctx's) or when they run past validationBudget (a
// *slowSchemaError).
func (c *schemaCache) validate(ctx context.Context, t tool.Tool, args []byte) error {
	var inst any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&inst); err != nil {
		return fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	if dec.More() {
		return errors.New("the arguments are not one JSON value")
	}
	if _, ok := inst.(map[string]any); !ok {
		return errors.New("the arguments must be a JSON object")
	}
	s := c.get(t.Parameters)
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
	in.meter.Start(ctx, validationBudget)
	verr := in.schema.Validate(inst)
	var slow *ecma.SlowError
	switch merr := in.meter.Err(); {
	case errors.As(merr, &slow):
		return &slowSchemaError{slow: slow, location: patternLocation(verr, slow)}
	case merr != nil:
		return merr
	}
	return explain(verr)
}

// explain turns a validation error into the text the model reads.
func explain(err error) error {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(describe(ve))
	}
	return err
}

func (c *schemaCache) get(params json.RawMessage) *compiled {
	key := string(params)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[key]; ok {
		return s
	}
	if c.schemas == nil {
		c.schemas = make(map[string]*compiled)
	}
	s := &compiled{params: params}
	in, err := compileSchema(params)
	switch {
	case err != nil:
		s.err = err
	case in.meter.Patterns() == 0:
		s.shared = in.schema
	default:
		s.idle = []*instance{in}
	}
	c.schemas[key] = s
	return s
}

// compileSchema compiles a tool schema with a meter of its own.
func compileSchema(params json.RawMessage) (*instance, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, err
	}
	m := ecma.NewMeter()
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	comp.UseRegexpEngine(m.Engine)
	if err := comp.AddResource(ecma.SchemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := comp.Compile(ecma.SchemaURL)
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
	return compileSchema(s.params)
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

// printer renders validation messages in English.
var printer = message.NewPrinter(language.English)

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

// invalidText is the result text of a call whose arguments validate
// returned err for.
func invalidText(ctx context.Context, name string, err error) string {
	var slow *slowSchemaError
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return cancelledText
	case errors.As(err, &slow):
		where := fmt.Sprintf("the value %q", clipText(slow.slow.Value, 40))
		if loc := slow.location; loc != "" {
			param, _, _ := strings.Cut(strings.TrimPrefix(loc, "/"), "/")
			where = fmt.Sprintf("parameter %q (at %s)", clipText(param, 80), clipText(loc, 200))
		}
		return fmt.Sprintf("Tool %s was not called: checking its arguments was abandoned because the pattern %q "+
			"in its schema is too slow to match %s; all the pattern checks of one call get %v. "+
			"The tool's schema is at fault, not necessarily the arguments: shorter values may pass.",
			quoteName(name), clipText(slow.slow.Pattern, 80), where, validationBudget)
	}
	return fmt.Sprintf("Invalid arguments for tool %s: %s", quoteName(name), clipText(err.Error(), maxErrorBytes))
}

// Validator checks a tool call's arguments against the tool's JSON Schema
// exactly as the loop does before every call: compiled once per distinct
// schema, remote references refused, patterns matched under a time budget
// (a second for one call) and within ctx. A schema that does not compile is
// not enforced. The zero value is ready to use and safe for concurrent use.
type Validator struct{ cache schemaCache }

// Validate returns why args do not suit t's schema, in the words the loop
// tells the model, or nil.
func (v *Validator) Validate(ctx context.Context, t tool.Tool, args []byte) error {
	return v.cache.validate(ctx, t, args)
}
