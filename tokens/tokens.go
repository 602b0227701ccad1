package tokens

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/toolshelf/toolshelf/llm"
)

// Counter counts o200k tokens. It is safe for concurrent use; the zero
// value is not usable, call New.
type Counter struct {
	enc tokenizer.Codec

	mu    sync.Mutex
	memo  map[[32]byte]int
	limit int
}

// memoLimit bounds the memo; past it the memo starts afresh.
const memoLimit = 1 << 18

// New returns a counter for the o200k encoding.
func New() (*Counter, error) {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, fmt.Errorf("loading the o200k tokenizer: %w", err)
	}
	return &Counter{enc: enc, memo: map[[32]byte]int{}, limit: memoLimit}, nil
}

var (
	defaultOnce    sync.Once
	defaultCounter *Counter
	defaultErr     error
)

// Default returns a process-wide counter.
func Default() (*Counter, error) {
	defaultOnce.Do(func() { defaultCounter, defaultErr = New() })
	return defaultCounter, defaultErr
}

// Count returns the number of tokens of s. Short strings are counted
// directly; longer ones are memoized by their SHA-256.
func (c *Counter) Count(s string) int {
	if len(s) < 64 {
		return c.count(s)
	}
	key := sha256.Sum256([]byte(s))
	c.mu.Lock()
	n, ok := c.memo[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = c.count(s)
	c.mu.Lock()
	if len(c.memo) >= c.limit {
		c.memo = map[[32]byte]int{}
	}
	c.memo[key] = n
	c.mu.Unlock()
	return n
}

// CountBytes is Count over bytes.
func (c *Counter) CountBytes(b []byte) int { return c.Count(string(b)) }

func (c *Counter) count(s string) int {
	if s == "" {
		return 0
	}
	n, err := c.enc.Count(s)
	if err != nil {
		// The encoder fails only on special tokens it refuses; count the
		// text as ordinary bytes instead (one token per four bytes).
		return (len(s) + 3) / 4
	}
	return n
}

// Tool returns the tokens of a tool declaration as providers receive it:
// its canonical JSON (name, description, parameters).
func (c *Counter) Tool(t llm.Tool) int { return c.CountBytes(t.Canonical()) }

// Short writes a token count compactly for charts: 950, 12.3k, 4.5M.
func Short(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
