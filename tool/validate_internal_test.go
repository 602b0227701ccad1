package tool

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var patternSchema = json.RawMessage(`{"type":"object","properties":{"values":{"type":"array","items":{"type":"string","pattern":"^(a+)+$"}}}}`)

// manyValues is {"values": [s, s, ...]} with n copies of s.
func manyValues(n int, s string) []byte {
	v := make([]string, n)
	for i := range v {
		v[i] = s
	}
	b, _ := json.Marshal(map[string]any{"values": v})
	return b
}

func TestValidationStopsWhenTheCallIsCancelled(t *testing.T) {
	t.Parallel()
	var c Validator
	tl := Tool{Name: "check", Parameters: patternSchema}
	slow := manyValues(200, strings.Repeat("a", 40)+"!")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Validate(ctx, tl, slow); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrCancelled) {
		t.Fatalf("validate with a cancelled context = %v, want ErrCancelled and context.Canceled", err)
	}
	if in := c.get(patternSchema).idle[0]; in.meter.Matches() != 0 {
		t.Errorf("%d matches ran after the cancellation, want none", in.meter.Matches())
	}

	// Cancelled after three matches (of fast values): none runs after.
	late := &cancelAfter{Context: context.Background(), n: 3}
	if err := c.Validate(late, tl, manyValues(200, "aaaa")); !errors.Is(err, context.Canceled) {
		t.Fatalf("validate cancelled midway = %v, want context.Canceled", err)
	}
	if in := c.get(patternSchema).idle[0]; in.meter.Matches() != 3 {
		t.Errorf("%d matches ran, want 3", in.meter.Matches())
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

func TestConcurrentValidationsTakeTheirOwnInstance(t *testing.T) {
	t.Parallel()
	var c Validator
	s := c.get(patternSchema)
	a, err := s.acquire()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.acquire() // a is in use: a second instance is compiled
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.meter == b.meter || a.schema == b.schema {
		t.Fatal("two validations at once share an instance")
	}
	// a spends its budget; b, used at the same time, is not affected.
	a.meter.Start(context.Background(), 0)
	if a.schema.Validate(map[string]any{"values": []any{"aaa"}}) == nil || a.meter.Err() == nil {
		t.Error("a spent budget did not stop the match")
	}
	b.meter.Start(context.Background(), ValidationBudget)
	if err := b.schema.Validate(map[string]any{"values": []any{"aaa"}}); err != nil || b.meter.Err() != nil {
		t.Errorf("the other instance: %v, meter %v", err, b.meter.Err())
	}
	s.release(a)
	s.release(b)
	if again, _ := s.acquire(); again != b {
		t.Error("a released instance is not reused")
	}

	// A schema without patterns is shared, with no instances.
	plain := c.get(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`))
	if plain.shared == nil || len(plain.idle) != 0 {
		t.Errorf("a schema without patterns: shared %v, %d instances", plain.shared != nil, len(plain.idle))
	}
}

// TestValidNameIsThePattern holds ValidName to the pattern it stands
// for: every byte alone and inside a name, the length limits, UTF-8, and
// random names over a mixed alphabet.
func TestValidNameIsThePattern(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	names := []string{"", strings.Repeat("a", MaxNameLength), strings.Repeat("a", MaxNameLength+1), "é", "a\u00e9", "a\n", "\na"}
	for c := range 256 {
		names = append(names, string(rune(c)), "a"+string([]byte{byte(c)})+"b", string([]byte{byte(c)}))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ09_-. /\x00\xffé"
	for range 5000 {
		b := make([]byte, rng.IntN(70))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		names = append(names, string(b))
	}
	for _, name := range names {
		if got, want := ValidName(name), pattern.MatchString(name); got != want {
			t.Errorf("ValidName(%q) = %v; the pattern says %v", name, got, want)
		}
	}
}
