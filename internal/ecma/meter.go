package ecma

import (
	"context"
	"fmt"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A Meter bounds the matching of the regular expressions its [Meter.Engine]
// compiles, one validation at a time: [Meter.Start] gives a validation a
// context and a time budget; each match then runs at most matchTimeout and
// at most what is left of the budget, and none runs once the context is
// done or a match has run out of time. [Meter.Err] says afterwards why
// matching stopped. A stopped match reports no match, so a validation
// that a meter stopped has no valid result: callers check Err first.
//
// A context is checked between matches, so a cancellation takes effect
// when the running match ends, within matchTimeout (regexp2's clock makes
// that up to about 0.3 s).
//
// A schema compiled with a meter's Engine must be used by one validation
// at a time, with that meter: the meter holds the validation's state.
type Meter struct {
	ctx      context.Context
	budget   time.Duration
	left     time.Duration
	err      error
	patterns int
	matches  int
	// now is the clock the budget is spent by; time.Now outside tests.
	now func() time.Time
}

// NewMeter returns a meter.
func NewMeter() *Meter { return &Meter{now: time.Now} }

// SlowError is why a meter stopped matching when a pattern took too
// long: a match ran past matchTimeout, or the matches together ran past
// the validation's budget.
type SlowError struct {
	// Pattern is the pattern that was being matched.
	Pattern string
	// Value is the string it was being matched against.
	Value string
	// Budget is the validation's budget.
	Budget time.Duration
}

// Error names the pattern.
func (e *SlowError) Error() string {
	return fmt.Sprintf("matching the pattern %q took too long (the budget for all matches of one validation is %v)",
		e.Pattern, e.Budget)
}

// Engine compiles a pattern as an ECMAScript regular expression whose
// matches the meter bounds, for jsonschema.Compiler.UseRegexpEngine.
func (m *Meter) Engine(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	m.patterns++
	return &metered{re: re, m: m}, nil
}

// Patterns returns the number of times Engine compiled a pattern (the
// compiler also compiles each once to check it): a schema compiled with
// none has no patterns and needs no meter to validate.
func (m *Meter) Patterns() int { return m.patterns }

// Start begins a validation: its matches stop when ctx is done, and run
// for budget in all.
func (m *Meter) Start(ctx context.Context, budget time.Duration) {
	m.ctx, m.budget, m.left, m.err, m.matches = ctx, budget, budget, nil, 0
}

// Err returns why the matches of the validation since Start stopped: the
// context's error, a [*SlowError], or nil when none stopped.
func (m *Meter) Err() error { return m.err }

// Matches returns the number of matches run since Start.
func (m *Meter) Matches() int { return m.matches }

// metered is a regular expression whose matches a meter bounds.
type metered struct {
	re *regexp2.Regexp
	m  *Meter
}

// MatchString reports a match, or false once the meter stopped.
func (r *metered) MatchString(s string) bool {
	m := r.m
	if m.err != nil {
		return false
	}
	if m.ctx != nil {
		if err := m.ctx.Err(); err != nil {
			m.err = err
			return false
		}
	}
	if m.left <= 0 {
		m.err = &SlowError{Pattern: r.re.String(), Value: s, Budget: m.budget}
		return false
	}
	// The meter's schema is used by one validation at a time, so the
	// timeout may change between matches.
	r.re.MatchTimeout = min(matchTimeout, m.left)
	start := m.now()
	ok, err := r.re.MatchString(s)
	m.left -= m.now().Sub(start)
	m.matches++
	if err != nil {
		m.err = &SlowError{Pattern: r.re.String(), Value: s, Budget: m.budget}
		return false
	}
	return ok
}

// String returns the pattern.
func (r *metered) String() string { return r.re.String() }
