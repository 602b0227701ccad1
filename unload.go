package toolshelf

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
)

// The prices of the unload cost model, as multiples of the price of an
// uncached input token: a cache read, and a cache write (Anthropic's
// five-minute write and OpenAI's from gpt-5.6 on; an API that reports no
// writes charges a rewritten prefix as uncached input, which costs less).
const (
	DefaultCacheReadPrice  = 0.1
	DefaultCacheWritePrice = 1.25
)

// DefaultCacheTTL is how long a prompt cache is taken to live after the
// request that last read or wrote it: Anthropic's five minutes. A longer
// lifetime (one hour on Anthropic with long retention; OpenAI evicts
// within an hour) is set with [UnloadConfig.TTL]: a lifetime set too
// short would unload while the cache still holds the prefix.
const DefaultCacheTTL = 5 * time.Minute

// UnloadConfig turns on cache-aware unloading ([AgentConfig.Unload]): when
// the tools loaded from the shelf push the declared definitions past a
// budget of tokens, the least recently used loaded tools are put back on
// the shelf at the point where the class pays least for it.
type UnloadConfig struct {
	// Budget is the most o200k tokens of tool definitions the model
	// should have declared. Direct and always-loaded tools count but are
	// never unloaded. Zero or less turns unloading off.
	Budget int
	// Class is the tool class the model renders; empty means the one the
	// provider resolved to, and for a caller's own Model, none (the class
	// that pays most for a removal).
	Class llm.ToolSupport
	// TTL is the prompt cache's lifetime after a request; zero means
	// [DefaultCacheTTL].
	TTL time.Duration
	// ReadPrice and WritePrice are the prices of a cached token read and
	// written, as multiples of an uncached one; zero means
	// [DefaultCacheReadPrice] and [DefaultCacheWritePrice].
	ReadPrice, WritePrice float64
}

// UnloadReason says why an unload happened where it did.
type UnloadReason string

// The points at which tools are unloaded.
const (
	// UnloadFree: the class removes a tool without rewriting the cached
	// prefix (changes, bridge), so the tools go as soon as the budget is
	// passed.
	UnloadFree UnloadReason = "free"
	// UnloadWithLoad: the next request rewrites the head anyway, for the
	// tools just loaded (none and text declare every change at the top),
	// so the removal adds nothing to the rewrite.
	UnloadWithLoad UnloadReason = "with-load"
	// UnloadExpired: the cache lifetime has lapsed since the last request,
	// so nothing cached is left to lose.
	UnloadExpired UnloadReason = "expired"
	// UnloadCompacted: the conversation continues from a compaction, whose
	// new context is written to the cache anyway.
	UnloadCompacted UnloadReason = "compacted"
	// UnloadCarry: carrying the tokens over the budget has cost, at the
	// cache-read price, as much as rewriting the prompt once would.
	UnloadCarry UnloadReason = "carry"
)

// Unload is one unload point: the tools put back together, declared as
// one removal in the next request's update.
type Unload struct {
	// Reason says why the tools went here.
	Reason UnloadReason
	// Tools are the names unloaded, least recently used first.
	Tools []string
	// Freed is the o200k tokens of their definitions.
	Freed int
	// Declared is the tokens of the tool definitions left declared.
	Declared int
	// Rewrite estimates the prompt tokens the removal makes the provider
	// write again that it would otherwise have read from the cache: the
	// last request's prompt for additions (promote once) and for none and
	// text, zero for the free points, for a lapsed cache and after a
	// compaction.
	Rewrite int
}

// UnloadStats sums a conversation's unload points ([Agent.Unloads]).
type UnloadStats struct {
	// Points lists each unload point, in order.
	Points []Unload
	// Tools counts the tools unloaded, Freed their tokens, Rewrite the
	// estimated prompt tokens rewritten because of the removals.
	Tools, Freed, Rewrite int
	// Over counts the checks that found the budget passed and waited for a
	// cheaper point.
	Over int
}

// NoteUnload: tools were put back on the shelf to keep the declared
// definitions within [UnloadConfig.Budget].
const NoteUnload NoteKind = "unload"

// unloader keeps one conversation's unload state.
type unloader struct {
	cfg     UnloadConfig
	class   llm.ToolSupport
	counter *tokens.Counter
	// last is when the last request started (its turn's start), zero
	// before the first request of this Agent; prompt is its prompt's
	// tokens.
	last   time.Time
	prompt int
	// carry is what carrying the tokens over the budget has cost since the
	// last unload, in uncached input tokens.
	carry float64
	// compacted is set while the conversation continues from a compaction
	// with no request answered since.
	compacted bool
	stats     UnloadStats
}

// newUnloader returns the unload state of a conversation, nil when cfg
// turns unloading off.
func newUnloader(cfg *UnloadConfig, class string, s *session.Session, msgs []llm.Message) (*unloader, error) {
	if cfg == nil || cfg.Budget <= 0 {
		return nil, nil
	}
	counter, err := tokens.Default()
	if err != nil {
		return nil, err
	}
	u := &unloader{cfg: *cfg, class: cfg.Class, counter: counter}
	if u.class == "" {
		u.class = llm.ToolSupport(class)
	}
	if u.class == "" {
		u.class = llm.ToolsNone
	}
	if u.cfg.TTL <= 0 {
		u.cfg.TTL = DefaultCacheTTL
	}
	if u.cfg.ReadPrice <= 0 {
		u.cfg.ReadPrice = DefaultCacheReadPrice
	}
	if u.cfg.WritePrice <= 0 {
		u.cfg.WritePrice = DefaultCacheWritePrice
	}
	u.compacted = continuesCompaction(s)
	// A resumed conversation's cache dates from its last answer.
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant && msgs[i].Timestamp > 0 {
			u.last = time.UnixMilli(msgs[i].Timestamp)
			break
		}
	}
	return u, nil
}

// continuesCompaction reports whether the session's branch ends in a
// compaction no answer has followed.
func continuesCompaction(s *session.Session) bool {
	if s == nil {
		return false
	}
	branch := s.Branch()
	for i := len(branch) - 1; i >= 0; i-- {
		switch e := branch[i]; {
		case e.Type == session.TypeCompaction:
			return true
		case e.Message != nil && e.Message.Role == llm.RoleAssistant:
			return false
		}
	}
	return false
}

// Unloads returns the conversation's unload points so far; empty without
// [AgentConfig.Unload].
func (a *Agent) Unloads() UnloadStats {
	if a.unload == nil {
		return UnloadStats{}
	}
	st := a.unload.stats
	st.Points = slices.Clone(st.Points)
	return st
}

// observeUnload follows the agent's events: a turn's start is the time of
// its request, and a turn's end the point where the tools its calls
// loaded are checked against the budget, before the next request
// declares them.
func (a *Agent) observeUnload(ev agent.Event) {
	u := a.unload
	if u == nil {
		return
	}
	switch ev.Type {
	case agent.EventTurnStart:
		u.last = a.now()
	case agent.EventTurnEnd:
		if ev.Message == nil {
			return
		}
		if ev.Message.Usage != nil {
			u.prompt = ev.Message.Usage.TotalInput()
			u.compacted = false
		}
		var calling []string
		for _, c := range ev.Message.ToolCalls() {
			calling = append(calling, c.Name)
		}
		a.checkBudget(calling, true)
	}
}

// now returns the conversation's time.
func (a *Agent) now() time.Time {
	if a.cfg.Now != nil {
		return a.cfg.Now()
	}
	return time.Now()
}

// checkBudget unloads, if the budget is passed and this is a cheap point
// for the class, the least recently used tools loaded from the shelf,
// until the declared definitions fit. calling names the tools of the
// answer just run, which stay. At a turn's end (turnEnd), the tokens over
// the budget that stay count as carried by the next request.
func (a *Agent) checkBudget(calling []string, turnEnd bool) {
	u := a.unload
	s := a.shelf
	declared := a.loop.DeclaredTools()
	isDeclared := map[string]bool{}
	for _, t := range declared {
		isDeclared[t.Name] = true
	}
	// What the next request declares, and which of it was loaded since
	// the last one (its declaration is still to come).
	total, loading := 0, false
	cost := map[string]int{}
	for _, t := range s.reg.Active() {
		d, ok := s.declaration(t)
		if !ok {
			continue
		}
		n := u.counter.Tool(d)
		total += n
		cost[t.Name] = n
		if !isDeclared[t.Name] {
			loading = true
		}
	}
	if total <= u.cfg.Budget {
		u.carry = 0
		return
	}
	var candidates []string
	for _, name := range a.recency() {
		t, ok := s.reg.Get(name)
		if !ok || !t.Exposure.Loadable() || !s.reg.IsActive(name) || !isDeclared[name] ||
			slices.Contains(calling, name) || s.alwaysLoaded(t) {
			continue
		}
		candidates = append(candidates, name)
	}
	var pick []string
	freed := 0
	for _, name := range candidates {
		if total-freed <= u.cfg.Budget {
			break
		}
		pick = append(pick, name)
		freed += cost[name]
	}
	if len(pick) == 0 {
		return
	}
	// Where the removal starts rewriting the prompt: every API renders
	// the tools first, in the order they were declared, so the prefix
	// holds until the first tool unloaded; a load already rewrites from
	// the end of the tools declared so far.
	before, declaredEnd := 0, 0
	first := true
	for _, t := range declared {
		if t.Name == pick[0] {
			first = false
		}
		if first {
			before += cost[t.Name]
		}
		declaredEnd += cost[t.Name]
	}
	// The prompt is at least its tools, whatever the usage said.
	u.prompt = max(u.prompt, declaredEnd)
	reason, rewrite, ok := u.point(a.now(), loading, before, declaredEnd)
	if !ok {
		// The next request carries the tokens over the budget.
		if turnEnd {
			u.stats.Over++
			u.carry += float64(total-u.cfg.Budget) * u.cfg.ReadPrice
		}
		return
	}
	s.reg.Deactivate(pick...)
	p := Unload{Reason: reason, Tools: pick, Freed: freed, Declared: total - freed, Rewrite: rewrite}
	u.stats.Points = append(u.stats.Points, p)
	u.stats.Tools += len(pick)
	u.stats.Freed += freed
	u.stats.Rewrite += rewrite
	u.carry = 0
	a.notify(NoteUnload, fmt.Sprintf("unloaded %d tools (%d tokens) to keep the tool definitions within %d tokens (%s): %s",
		len(pick), freed, u.cfg.Budget, reason, strings.Join(pick, ", ")))
}

// point says whether now is a point to unload at, why, and the prompt
// tokens the removal makes the provider write again that it would have
// read: the cost model of docs/ARCHITECTURE.md. loading reports that the
// next request declares tools loaded since the last; before is the tokens
// of the declared tools ahead of the first one unloaded, and declaredEnd
// of all the declared tools.
func (u *unloader) point(now time.Time, loading bool, before, declaredEnd int) (UnloadReason, int, bool) {
	switch u.class {
	case llm.ToolsChanges, llm.ToolsBridge:
		return UnloadFree, 0, true
	}
	switch {
	case u.compacted:
		return UnloadCompacted, 0, true
	case u.last.IsZero() || now.Sub(u.last) >= u.cfg.TTL:
		// Nothing is cached for this Agent yet, or the cache has lapsed.
		return UnloadExpired, 0, true
	}
	// The removal rewrites the prompt from the first tool unloaded on:
	// promote once (additions) and the head (none, text) list the tools
	// first. With a load, none and text rewrite from the end of the
	// declared tools anyway, so only the tools in between are extra.
	reason, rewrite := UnloadCarry, max(u.prompt-before, 0)
	if loading && u.class != llm.ToolsAdditions {
		reason, rewrite = UnloadWithLoad, max(declaredEnd-before, 0)
	}
	// Ski rental: rewriting costs (write - read) per token over reading;
	// carrying the tokens over the budget costs read per token per
	// request. Pay the rewrite once the carry has cost as much.
	if u.carry >= float64(rewrite)*(u.cfg.WritePrice-u.cfg.ReadPrice) {
		return reason, rewrite, true
	}
	return "", 0, false
}

// recency returns the names the transcript added or called, least
// recently used first: a tool's last use is the later of its last
// declaration and its last call.
func (a *Agent) recency() []string {
	last := map[string]int{}
	for i, m := range a.loop.Messages() {
		switch m.Role {
		case llm.RoleSystem:
			for _, t := range m.ToolsAdded {
				last[t.Name] = i
			}
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls() {
				last[c.Name] = i
			}
		}
	}
	names := make([]string, 0, len(last))
	for n := range last {
		names = append(names, n)
	}
	slices.SortFunc(names, func(x, y string) int {
		if last[x] != last[y] {
			return last[x] - last[y]
		}
		return strings.Compare(x, y)
	})
	return names
}

// alwaysLoaded reports whether t is a tool of a server configured to
// have its tools always loaded.
func (s *Shelf) alwaysLoaded(t tool.Tool) bool {
	for _, sc := range s.servers {
		if sc.AlwaysLoad && sc.Name == t.Origin.Server {
			return true
		}
	}
	return false
}
