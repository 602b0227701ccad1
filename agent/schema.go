package agent

import (
	"github.com/toolshelf/toolshelf/internal/ecma"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolshelf/toolshelf/tool"
)

// schemaCache compiles tools' parameter schemas once per distinct schema.
type schemaCache struct {
	mu      sync.Mutex // guards schemas
	schemas map[string]*compiled
}

type compiled struct {
	schema *jsonschema.Schema
	err    error // why the schema could not be compiled
}

// errNoRemoteRefs refuses to fetch schemas: tool schemas are untrusted and
// validation must stay offline.
var errNoRemoteRefs = errors.New("schemas may not reference other documents")

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w (%s)", errNoRemoteRefs, url)
}

// validate checks args against the tool's parameter schema. Arguments must
// be a JSON object. A schema that cannot be compiled (malformed, or
// referencing other documents) is not enforced: the tool itself remains
// the judge of its input.
func (c *schemaCache) validate(t tool.Tool, args []byte) error {
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
	if err := s.schema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(describe(ve))
		}
		return err
	}
	return nil
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
	s := &compiled{}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err == nil {
		comp := jsonschema.NewCompiler()
		comp.UseLoader(noLoader{})
		comp.UseRegexpEngine(ecma.Engine)
		if err = comp.AddResource(ecma.SchemaURL, doc); err == nil {
			s.schema, err = comp.Compile(ecma.SchemaURL)
		}
	}
	s.err = err
	c.schemas[key] = s
	return s
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
			lines = append(lines, fmt.Sprintf("at %s: %s", where, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, cause := range e.Causes {
			walk(cause)
		}
	}
	walk(ve)
	if len(lines) > 5 {
		lines = append(lines[:5], fmt.Sprintf("and %d more problems", len(lines)-5))
	}
	return strings.Join(lines, "; ")
}
