package emulator

import (
	"crypto/sha256"
	"strings"
	"sync"
	"time"
)

// policy is how a provider's prompt cache behaves for one model.
type policy struct {
	// minTokens is the shortest prefix that is cached.
	minTokens int
	// lookback bounds how many positions before a breakpoint a read may
	// start (Anthropic: 20); zero means no bound.
	lookback int
	// automatic stores every segment boundary of every request and reads
	// the longest stored prefix, breakpoints or not (OpenAI before
	// gpt-5.6).
	automatic bool
	// step rounds reads down to a multiple of it past minTokens (OpenAI
	// before gpt-5.6: 128).
	step int
	// reportWrites says whether usage reports cache writes.
	reportWrites bool
	// defaultTTL is the lifetime of an entry written without a TTL.
	defaultTTL time.Duration
}

// anthropicMinimum lists the shortest cacheable prompt per model family
// (provider docs, 2026-10); the first matching prefix wins.
var anthropicMinimum = []struct {
	prefix string
	tokens int
}{
	{"claude-opus-4-8", 1024}, {"claude-opus-4-7", 2048}, {"claude-opus-4-6", 4096}, {"claude-opus-4-5", 4096},
	{"claude-opus-4", 1024}, {"claude-sonnet-5-5", 512}, {"claude-sonnet-5", 1024}, {"claude-sonnet-4", 1024},
	{"claude-haiku-5-5", 512}, {"claude-haiku-4-5", 4096}, {"claude-haiku-3-5", 2048}, {"claude-3-5-haiku", 2048},
	{"claude-mythos-preview", 2048},
	{"claude-opus-5", 512}, {"claude-fable-5", 512}, {"claude-mythos-5", 512},
}

// policyFor returns the cache policy of a model behind an API.
func policyFor(api API, model string) policy {
	switch api {
	case AnthropicMessages:
		p := policy{minTokens: 1024, lookback: 20, reportWrites: true, defaultTTL: 5 * time.Minute}
		for _, m := range anthropicMinimum {
			if strings.HasPrefix(model, m.prefix) {
				p.minTokens = m.tokens
				break
			}
		}
		return p
	case Gemini:
		return geminiPolicy(model)
	default:
		if explicitCacheModel(model) {
			return policy{minTokens: 1024, reportWrites: true, defaultTTL: 30 * time.Minute}
		}
		return policy{minTokens: 1024, automatic: true, step: 128, defaultTTL: 10 * time.Minute}
	}
}

// explicitCacheModel reports the OpenAI models with breakpoint caching
// (gpt-5.6 and later): an implicit breakpoint at the last user or tool
// message, cache writes reported, no 128-token rounding.
func explicitCacheModel(model string) bool {
	for _, p := range []string{"gpt-5.6", "gpt-5.7", "gpt-5.8", "gpt-5.9", "gpt-6", "gpt-7"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

func ttlDuration(t TTL, def time.Duration) time.Duration {
	switch t {
	case "1h":
		return time.Hour
	case "12h":
		return 12 * time.Hour
	case "30m":
		return 30 * time.Minute
	case "5m":
		return 5 * time.Minute
	}
	return def
}

// long reports a TTL billed as a long write (1h, 12h).
func long(t TTL) bool { return t == "1h" || t == "12h" }

// cache is the prompt-cache simulator: entries keyed by namespace, model
// and the hash of a prompt prefix ending at a segment boundary.
type cache struct {
	mu      sync.Mutex
	entries map[[32]byte]cacheEntry
	// seen holds every prefix any earlier request sent, for the ideal
	// cache the preservation ratio compares against.
	seen map[[32]byte]bool
}

type cacheEntry struct {
	tokens  int
	expires time.Time
	ttl     time.Duration
}

func newCache() *cache {
	return &cache{entries: map[[32]byte]cacheEntry{}, seen: map[[32]byte]bool{}}
}

// outcome is what the cache did for one request.
type outcome struct {
	read, write, writeShort, writeLong int
	// ideal is what a cache that kept every earlier prompt (at the same
	// granularity and minimum) could have served.
	ideal int
}

// prefixHashes returns, for every segment, the hash of the prompt up to
// and including it, scoped by namespace and model.
func prefixHashes(ex *Exchange) [][32]byte {
	h := sha256.Sum256([]byte(string(ex.API) + "\x00" + ex.Namespace + "\x00" + ex.Model))
	out := make([][32]byte, len(ex.Segments))
	for i, s := range ex.Segments {
		seg := sha256.Sum256(s.Bytes)
		var buf [64]byte
		copy(buf[:32], h[:])
		copy(buf[32:], seg[:])
		h = sha256.Sum256(buf[:])
		out[i] = h
	}
	return out
}

// apply runs a request through the cache at time now.
func (c *cache) apply(ex *Exchange, now time.Time) outcome {
	p := policyFor(ex.API, ex.Model)
	n := len(ex.Segments)
	var out outcome
	if n == 0 {
		return out
	}
	hashes := prefixHashes(ex)
	prefix := make([]int, n)
	total := 0
	for i, s := range ex.Segments {
		total += s.Tokens
		prefix[i] = total
	}
	round := func(tokens int) int { return Cacheable(ex.API, ex.Model, tokens) }
	breakpoints := make([]int, 0, 4)
	for i, s := range ex.Segments {
		if s.Breakpoint != "" {
			breakpoints = append(breakpoints, i)
		}
	}
	if ex.AutoBreakpoint != "" && (len(breakpoints) == 0 || breakpoints[len(breakpoints)-1] != n-1) {
		breakpoints = append(breakpoints, n-1)
	}
	ttlOf := func(i int) TTL {
		if t := ex.Segments[i].Breakpoint; t != "" {
			return t
		}
		return ex.AutoBreakpoint
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	live := func(i int) (cacheEntry, bool) {
		e, ok := c.entries[hashes[i]]
		if !ok || !now.Before(e.expires) {
			return cacheEntry{}, false
		}
		return e, true
	}
	for i := n - 1; i >= 0; i-- {
		if c.seen[hashes[i]] {
			out.ideal = round(prefix[i])
			break
		}
	}

	// Reads: the longest live entry reachable from a breakpoint (or, for
	// automatic caching, anywhere).
	readAt := -1
	if p.automatic {
		for i := n - 1; i >= 0; i-- {
			if _, ok := live(i); ok {
				readAt = i
				break
			}
		}
	} else {
		for _, b := range breakpoints {
			positions := 0
			for j := b; j >= 0; j-- {
				if j == b || ex.Segments[j].Run == 0 || ex.Segments[j].Run != ex.Segments[j+1].Run {
					positions++
				}
				if p.lookback > 0 && positions > p.lookback {
					break
				}
				if _, ok := live(j); ok {
					if j > readAt {
						readAt = j
					}
					break
				}
			}
		}
	}
	if readAt >= 0 {
		out.read = round(prefix[readAt])
		e := c.entries[hashes[readAt]]
		e.expires = now.Add(e.ttl)
		c.entries[hashes[readAt]] = e
	}

	// Writes.
	if p.automatic {
		ttl := p.defaultTTL
		for i := range n {
			if prefix[i] >= p.minTokens {
				if _, ok := live(i); !ok {
					c.entries[hashes[i]] = cacheEntry{tokens: prefix[i], expires: now.Add(ttl), ttl: ttl}
				}
			}
		}
	} else {
		longEnd := out.read
		end := out.read
		for _, b := range breakpoints {
			if prefix[b] <= out.read || prefix[b] < p.minTokens {
				continue
			}
			ttl := ttlDuration(ttlOf(b), p.defaultTTL)
			if _, ok := live(b); !ok {
				c.entries[hashes[b]] = cacheEntry{tokens: prefix[b], expires: now.Add(ttl), ttl: ttl}
			}
			if long(ttlOf(b)) && prefix[b] > longEnd {
				longEnd = prefix[b]
			}
			if prefix[b] > end {
				end = prefix[b]
			}
		}
		if p.reportWrites {
			out.write = end - out.read
			out.writeLong = longEnd - out.read
			out.writeShort = out.write - out.writeLong
		}
	}
	for i := range n {
		c.seen[hashes[i]] = true
	}
	return out
}

// Cacheable returns how many tokens of a prompt prefix of the given
// length a model's cache can serve at most: none under the model's
// minimum, else the prefix rounded down to the cache's granularity
// (128-token steps for OpenAI models before gpt-5.6).
func Cacheable(api API, model string, tokens int) int {
	p := policyFor(api, model)
	if tokens < p.minTokens {
		return 0
	}
	if p.step > 0 {
		return p.minTokens + (tokens-p.minTokens)/p.step*p.step
	}
	return tokens
}
