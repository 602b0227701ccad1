package emulator

import (
	"fmt"
	"testing"
	"time"
)

// seg returns a segment of the given tokens; bp marks a breakpoint.
func seg(id string, tokens int, bp TTL) Segment {
	return Segment{Bytes: []byte(id), Tokens: tokens, Breakpoint: bp}
}

func anth(segs ...Segment) *Exchange {
	return &Exchange{API: AnthropicMessages, Model: "claude-opus-5-5", Namespace: "key", Segments: segs}
}

func TestAnthropicCacheReadsAndWrites(t *testing.T) {
	c := newCache()
	now := time.Unix(0, 0)
	tool, system := seg("tool", 300, "5m"), seg("system", 300, "5m")
	// Request 1: the tool's prefix (300) is under the minimum (512), so
	// only the system and user breakpoints write.
	o := c.apply(anth(tool, system, seg("user1", 100, "5m")), now)
	if o.read != 0 || o.write != 700 || o.ideal != 0 {
		t.Fatalf("request 1: %+v", o)
	}
	// Request 2 extends request 1; its last breakpoint finds request 1's
	// entry three positions back.
	o = c.apply(anth(tool, system, seg("user1", 100, ""), seg("assistant1", 50, ""), seg("user2", 100, "5m")), now)
	if o.read != 700 || o.write != 150 || o.ideal != 700 {
		t.Fatalf("request 2: %+v", o)
	}
	// A different system prompt: only nothing matches (the tool alone is
	// under the minimum).
	o = c.apply(anth(tool, seg("system'", 300, "5m"), seg("user1", 100, "5m")), now)
	if o.read != 0 || o.ideal != 0 {
		t.Fatalf("changed system: %+v", o)
	}
	// Another workspace shares nothing.
	other := anth(tool, system, seg("user1", 100, "5m"))
	other.Namespace = "other"
	if o = c.apply(other, now); o.read != 0 || o.ideal != 0 {
		t.Fatalf("other namespace: %+v", o)
	}
}

func TestAnthropicLookbackWindow(t *testing.T) {
	c := newCache()
	now := time.Unix(0, 0)
	base := []Segment{seg("system", 600, "5m"), seg("user", 100, "5m")}
	c.apply(anth(base...), now)
	// 25 separate blocks after the last entry: the breakpoint's 20-position
	// walk misses it and falls back to the system entry.
	long := append([]Segment{seg("system", 600, "5m"), seg("user", 100, "")}, nil...)
	for i := range 25 {
		long = append(long, seg(fmt.Sprintf("block%d", i), 10, ""))
	}
	long[len(long)-1].Breakpoint = "5m"
	o := c.apply(anth(long...), now)
	if o.read != 600 || o.ideal != 700 {
		t.Fatalf("25 blocks later: %+v (want read 600, ideal 700)", o)
	}
	// A run of tool results counts as one position.
	c = newCache()
	c.apply(anth(base...), now)
	grouped := []Segment{seg("system", 600, "5m"), seg("user", 100, "")}
	for i := range 25 {
		s := seg(fmt.Sprintf("result%d", i), 10, "")
		s.Run = 1
		grouped = append(grouped, s)
	}
	grouped[len(grouped)-1].Breakpoint = "5m"
	if o := c.apply(anth(grouped...), now); o.read != 700 {
		t.Fatalf("a run of 25 tool results: %+v (want read 700)", o)
	}
}

func TestAnthropicLifetimes(t *testing.T) {
	c := newCache()
	start := time.Unix(0, 0)
	c.apply(anth(seg("system", 600, "1h"), seg("user", 100, "5m")), start)
	o := c.apply(anth(seg("system", 600, "1h"), seg("user", 100, "5m")), start.Add(6*time.Minute))
	if o.read != 600 {
		t.Fatalf("after 6 minutes the 5m entry expired and the 1h one holds: %+v", o)
	}
	if o.write != 100 || o.writeShort != 100 || o.writeLong != 0 {
		t.Errorf("rewrite of the 5m entry: %+v", o)
	}
	// A read refreshes: 50 minutes after the read the 1h entry is alive.
	if o := c.apply(anth(seg("system", 600, "1h"), seg("user2", 100, "5m")), start.Add(56*time.Minute)); o.read != 600 {
		t.Fatalf("refreshed entry: %+v", o)
	}
	if o := c.apply(anth(seg("system", 600, "1h"), seg("user3", 100, "5m")), start.Add(3*time.Hour)); o.read != 0 {
		t.Fatalf("after 3 hours: %+v", o)
	}
	// Long writes are billed separately.
	c = newCache()
	o = c.apply(anth(seg("system", 600, "1h"), seg("user", 100, "5m")), start)
	if o.writeLong != 600 || o.writeShort != 100 || o.write != 700 {
		t.Errorf("1h then 5m writes: %+v", o)
	}
}

func TestAnthropicAutomaticBreakpoint(t *testing.T) {
	c := newCache()
	now := time.Unix(0, 0)
	ex := anth(seg("system", 600, ""), seg("user", 100, ""))
	ex.AutoBreakpoint = "5m"
	if o := c.apply(ex, now); o.write != 700 {
		t.Fatalf("automatic caching writes at the last block: %+v", o)
	}
	ex2 := anth(seg("system", 600, ""), seg("user", 100, ""), seg("assistant", 20, ""), seg("user2", 30, ""))
	ex2.AutoBreakpoint = "5m"
	if o := c.apply(ex2, now); o.read != 700 || o.write != 50 {
		t.Fatalf("the automatic breakpoint moves forward: %+v", o)
	}
}

func TestOpenAIAutomaticRounding(t *testing.T) {
	c := newCache()
	now := time.Unix(0, 0)
	ex := func(segs ...Segment) *Exchange {
		return &Exchange{API: OpenAIResponses, Model: "gpt-5.2", Namespace: "key", Segments: segs}
	}
	if o := c.apply(ex(seg("tools", 1500, ""), seg("user", 500, "")), now); o.read != 0 || o.write != 0 {
		t.Fatalf("first request: %+v", o)
	}
	o := c.apply(ex(seg("tools", 1500, ""), seg("user", 500, ""), seg("more", 300, "")), now)
	if want := 1024 + (2000-1024)/128*128; o.read != want || o.ideal != want {
		t.Fatalf("second request read %d ideal %d, want %d (128-token steps)", o.read, o.ideal, want)
	}
	if o := c.apply(ex(seg("short", 900, "")), now); o.read != 0 {
		t.Fatalf("under 1,024 tokens nothing is cached: %+v", o)
	}
	keyed := ex(seg("tools", 1500, ""), seg("user", 500, ""))
	keyed.Namespace = "key\x00another prompt_cache_key"
	if o := c.apply(keyed, now); o.read != 0 {
		t.Fatalf("a different prompt_cache_key shares nothing: %+v", o)
	}
}

func TestOpenAIBreakpointModels(t *testing.T) {
	c := newCache()
	now := time.Unix(0, 0)
	ex := func(segs ...Segment) *Exchange {
		return &Exchange{API: OpenAIResponses, Model: "gpt-5.6-sol", Segments: segs}
	}
	if o := c.apply(ex(seg("tools", 1500, ""), seg("user", 500, "30m")), now); o.write != 2000 {
		t.Fatalf("first request: %+v", o)
	}
	o := c.apply(ex(seg("tools", 1500, ""), seg("user", 500, ""), seg("call", 40, ""), seg("result", 70, "30m")), now)
	if o.read != 2000 || o.write != 110 || o.ideal != 2000 {
		t.Fatalf("second request: %+v (exact, no rounding)", o)
	}
	// The 30-minute entry is read before it expires, and not after (a
	// request without a breakpoint would read nothing either way).
	later := now.Add(29 * time.Minute)
	if o := c.apply(ex(seg("tools", 1500, ""), seg("user", 500, "30m")), later); o.read != 2000 {
		t.Fatalf("after 29 minutes: %+v", o)
	}
	if o := c.apply(ex(seg("tools", 1500, ""), seg("user", 500, "30m")), later.Add(31*time.Minute)); o.read != 0 {
		t.Fatalf("31 minutes after the last use: %+v", o)
	}
}
