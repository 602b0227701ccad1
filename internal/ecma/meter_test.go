package ecma

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileWith compiles {"type":"array","items":{"type":"string","pattern":p}}
// with m's engine.
func compileWith(t *testing.T, m *Meter, pattern string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(m.Engine)
	schema := map[string]any{"type": "array", "items": map[string]any{"type": "string", "pattern": pattern}}
	if err := c.AddResource(SchemaURL, schema); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(SchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func strs(n int, s string) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestMeterStopsACatastrophicPattern(t *testing.T) {
	// ^(a+)+$ backtracks exponentially on a's followed by another
	// character: without a meter 200 such strings took 0.1-0.2 s each,
	// and a timed-out match counted as "does not match".
	m := NewMeter()
	s := compileWith(t, m, "^(a+)+$")
	m.Start(context.Background(), time.Second)
	_ = s.Validate(strs(200, strings.Repeat("a", 40)+"!"))
	var slow *SlowError
	if !errors.As(m.Err(), &slow) || slow.Pattern != "^(a+)+$" || slow.Value != strings.Repeat("a", 40)+"!" {
		t.Fatalf("Err() = %v, want a SlowError for the pattern and the value", m.Err())
	}
	if m.Matches() != 1 {
		t.Errorf("%d matches ran, want 1: a match past its timeout stops the validation", m.Matches())
	}
	if m.Patterns() == 0 {
		t.Errorf("Patterns() = 0 for a schema with a pattern")
	}

	// The next validation starts afresh.
	m.Start(context.Background(), time.Second)
	if err := s.Validate(strs(3, "aaa")); err != nil || m.Err() != nil {
		t.Errorf("a fresh validation: %v, meter %v", err, m.Err())
	}
}

func TestMeterWithoutPatterns(t *testing.T) {
	m := NewMeter()
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(m.Engine)
	if err := c.AddResource(SchemaURL, map[string]any{"type": "object", "properties": map[string]any{
		"n": map[string]any{"type": "string", "format": "regex", "maxLength": 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile(SchemaURL); err != nil {
		t.Fatal(err)
	}
	if m.Patterns() != 0 {
		t.Errorf("Patterns() = %d for a schema without patterns, want 0", m.Patterns())
	}
}

func TestMeterBudgetCoversAllMatches(t *testing.T) {
	// Each match costs 30 ms on a fake clock; a budget of 100 ms lets four
	// run and stops the fifth.
	m := NewMeter()
	var clock time.Time
	m.now = func() time.Time { clock = clock.Add(30 * time.Millisecond); return clock }
	s := compileWith(t, m, "^a+$")
	m.Start(context.Background(), 100*time.Millisecond)
	_ = s.Validate(strs(200, "aaaa"))
	var slow *SlowError
	if !errors.As(m.Err(), &slow) || slow.Budget != 100*time.Millisecond {
		t.Fatalf("Err() = %v, want a SlowError with the budget", m.Err())
	}
	if m.Matches() != 4 {
		t.Errorf("%d matches ran, want 4", m.Matches())
	}
}

// cancelAfter is a context that reports cancellation from its n+1st Err
// call on.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n <= 0 {
		return context.Canceled
	}
	c.n--
	return nil
}

func TestMeterStopsWhenTheContextIsDone(t *testing.T) {
	m := NewMeter()
	s := compileWith(t, m, "^a+$")
	m.Start(&cancelAfter{Context: context.Background(), n: 3}, time.Hour)
	_ = s.Validate(strs(200, "aaaa"))
	if !errors.Is(m.Err(), context.Canceled) {
		t.Fatalf("Err() = %v, want context.Canceled", m.Err())
	}
	if m.Matches() != 3 {
		t.Errorf("%d matches ran, want 3: none after the cancellation", m.Matches())
	}
}
