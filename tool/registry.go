package tool

import (
	"errors"
	"maps"
	"slices"
	"sort"
	"sync"
)

// Registry holds the registered tools, the active set and the pending names.
// It is safe for concurrent use.
//
// Tools are listed in registration order; a re-registered tool keeps its
// position. The active set is kept in activation order. Tools cannot be
// unregistered: re-register a tool as [Hidden] to withdraw it.
type Registry struct {
	mu       sync.RWMutex // guards every field below
	entries  map[string]*entry
	order    []*entry // registration order
	active   []string // activation order
	isActive map[string]bool
	pending  []string
	// version counts changes of any kind; rev counts registrations.
	version uint64
	rev     uint64
	// log lists registrations in rev order for ChangedSince; entries whose
	// current rev differs from the logged one are stale.
	log []logRecord
	// shown counts the tools that are not hidden, per origin server, for
	// tools with an origin (ServerCounts).
	shown   map[string]int
	subs    map[int]func(Change)
	nextSub int
}

type entry struct {
	tool Tool
	rev  uint64
	pos  int // position in registration order
}

type logRecord struct {
	rev uint64
	e   *entry
}

// Change describes one mutation of a [Registry], for subscribers.
type Change struct {
	// Version is the registry's version after the change; later changes
	// have larger versions.
	Version uint64
	// Registered lists tools registered for the first time.
	Registered []string
	// Replaced lists tools whose definition was registered again.
	Replaced []string
	// Activated lists tools that joined the active set.
	Activated []string
	// Deactivated lists tools that left the active set.
	Deactivated []string
	// Pending is the pending set after the change, when it changed.
	Pending []string
	// PendingChanged reports whether the pending set changed.
	PendingChanged bool
}

func (c *Change) empty() bool {
	return len(c.Registered) == 0 && len(c.Replaced) == 0 && len(c.Activated) == 0 &&
		len(c.Deactivated) == 0 && !c.PendingChanged
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		entries:  make(map[string]*entry),
		isActive: make(map[string]bool),
		shown:    make(map[string]int),
		subs:     make(map[int]func(Change)),
	}
}

// Register adds tools, replacing any registered tool of the same name in
// place. It registers every valid tool and returns the problems with the
// others, joined; each wraps [ErrInvalid].
//
// A new direct or model-only tool becomes active unless StartInactive is
// set; a tool whose name is pending becomes active when it registers (unless
// it is hidden). A replaced tool keeps its active state, except that a tool
// re-registered as hidden is deactivated and one that becomes direct or
// model-only is activated like a new one.
func (r *Registry) Register(tools ...Tool) error {
	var errs []error
	valid := make([]Tool, 0, len(tools))
	for _, t := range tools {
		v, err := validate(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		valid = append(valid, v)
	}
	if len(valid) > 0 {
		r.mu.Lock()
		var ch Change
		for _, t := range valid {
			r.registerLocked(t, &ch)
		}
		r.commitAndNotify(&ch)
	}
	return errors.Join(errs...)
}

func (r *Registry) registerLocked(t Tool, ch *Change) {
	r.rev++
	e, exists := r.entries[t.Name]
	if exists {
		old := e.tool
		r.count(old, -1)
		e.tool, e.rev = t, r.rev
		if !slices.Contains(ch.Registered, t.Name) {
			ch.Replaced = appendUnique(ch.Replaced, t.Name)
		}
		switch {
		case !t.Exposure.Activatable():
			r.deactivateLocked(t.Name, ch)
		case t.Exposure.ActiveOnRegister() && !old.Exposure.ActiveOnRegister() && !t.StartInactive:
			r.activateLocked(t.Name, ch)
		}
	} else {
		e = &entry{tool: t, rev: r.rev, pos: len(r.order)}
		r.entries[t.Name] = e
		r.order = append(r.order, e)
		ch.Registered = append(ch.Registered, t.Name)
		if t.Exposure.ActiveOnRegister() && !t.StartInactive {
			r.activateLocked(t.Name, ch)
		}
	}
	r.count(t, 1)
	if i := slices.Index(r.pending, t.Name); i >= 0 {
		r.pending = slices.Delete(r.pending, i, i+1)
		ch.PendingChanged = true
		if t.Exposure.Activatable() {
			r.activateLocked(t.Name, ch)
		}
	}
	r.log = append(r.log, logRecord{rev: r.rev, e: e})
	if len(r.log) > 2*len(r.order)+64 {
		r.compactLog()
	}
}

// count adds d to the shown count of t's server when t has an origin and
// is not hidden. Called with r.mu held.
func (r *Registry) count(t Tool, d int) {
	if t.Exposure == Hidden || t.Origin.IsZero() {
		return
	}
	if n := r.shown[t.Origin.Server] + d; n != 0 {
		r.shown[t.Origin.Server] = n
	} else {
		delete(r.shown, t.Origin.Server)
	}
}

// compactLog drops stale log records. Called with r.mu held.
func (r *Registry) compactLog() {
	live := r.log[:0]
	for _, rec := range r.log {
		if rec.e.rev == rec.rev {
			live = append(live, rec)
		}
	}
	clear(r.log[len(live):])
	r.log = live
}

func (r *Registry) activateLocked(name string, ch *Change) bool {
	e, ok := r.entries[name]
	if !ok || r.isActive[name] || !e.tool.Exposure.Activatable() {
		return false
	}
	r.isActive[name] = true
	r.active = append(r.active, name)
	if i := slices.Index(ch.Deactivated, name); i >= 0 {
		ch.Deactivated = slices.Delete(ch.Deactivated, i, i+1)
	} else {
		ch.Activated = append(ch.Activated, name)
	}
	return true
}

func (r *Registry) deactivateLocked(name string, ch *Change) bool {
	if !r.isActive[name] {
		return false
	}
	delete(r.isActive, name)
	r.active = slices.DeleteFunc(r.active, func(n string) bool { return n == name })
	if i := slices.Index(ch.Activated, name); i >= 0 {
		ch.Activated = slices.Delete(ch.Activated, i, i+1)
	} else {
		ch.Deactivated = append(ch.Deactivated, name)
	}
	return true
}

// commitAndNotify finishes a mutation: it bumps the version if anything
// changed, releases r.mu (which the caller holds) and calls the
// subscribers.
func (r *Registry) commitAndNotify(ch *Change) {
	if ch.empty() {
		r.mu.Unlock()
		return
	}
	r.version++
	ch.Version = r.version
	if ch.PendingChanged {
		ch.Pending = slices.Clone(r.pending)
	}
	subs := make([]func(Change), 0, len(r.subs))
	ids := make([]int, 0, len(r.subs))
	for id := range r.subs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		subs = append(subs, r.subs[id])
	}
	r.mu.Unlock()
	for _, fn := range subs {
		fn(*ch)
	}
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[name]
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.order)
}

// ServerCounts returns, per origin server (Origin.Server), the number of
// registered tools from that server that are not hidden. Tools without an
// origin are not counted. It costs one entry per server, not per tool.
func (r *Registry) ServerCounts() map[string]int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return maps.Clone(r.shown)
}

// Tools returns every registered tool in registration order.
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, len(r.order))
	for i, e := range r.order {
		out[i] = e.tool
	}
	return out
}

// Active returns the active tools in activation order: exactly what the
// model should have declared on its next request.
func (r *Registry) Active() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, len(r.active))
	for i, name := range r.active {
		out[i] = r.entries[name].tool
	}
	return out
}

// ActiveNames returns the names of the active tools in activation order.
func (r *Registry) ActiveNames() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.active)
}

// IsActive reports whether the tool named name is active.
func (r *Registry) IsActive(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.isActive[name]
}

// Activate adds the named tools to the active set and returns the names that
// were not active before. Unknown, hidden and already active names are
// skipped. Pending names are kept.
func (r *Registry) Activate(names ...string) []string {
	r.mu.Lock()
	var ch Change
	for _, n := range names {
		r.activateLocked(n, &ch)
	}
	activated := slices.Clone(ch.Activated)
	r.commitAndNotify(&ch)
	return activated
}

// Deactivate removes the named tools from the active set and returns the
// names that were active. Deactivating any tool clears the pending names,
// as an explicit choice of the active set supersedes a restored one.
func (r *Registry) Deactivate(names ...string) []string {
	r.mu.Lock()
	var ch Change
	for _, n := range names {
		r.deactivateLocked(n, &ch)
	}
	if len(ch.Deactivated) > 0 {
		r.clearPendingLocked(&ch)
	}
	deactivated := slices.Clone(ch.Deactivated)
	r.commitAndNotify(&ch)
	return deactivated
}

// SetActive replaces the active set by the named tools (unknown and hidden
// names are skipped) and reports what changed. Tools that stay active keep
// their position; newly active ones follow in the given order. If a
// previously active tool is deactivated, the pending names are cleared.
func (r *Registry) SetActive(names ...string) (activated, deactivated []string) {
	r.mu.Lock()
	var ch Change
	r.replaceActiveLocked(names, &ch)
	if len(ch.Deactivated) > 0 {
		r.clearPendingLocked(&ch)
	}
	activated, deactivated = slices.Clone(ch.Activated), slices.Clone(ch.Deactivated)
	r.commitAndNotify(&ch)
	return activated, deactivated
}

// replaceActiveLocked makes the named tools (those registered and
// activatable) the active set: others are deactivated, in place, and the
// named ones not yet active are appended in the given order.
func (r *Registry) replaceActiveLocked(names []string, ch *Change) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		if e, ok := r.entries[n]; ok && e.tool.Exposure.Activatable() {
			want[n] = true
		}
	}
	for _, n := range slices.Clone(r.active) {
		if !want[n] {
			r.deactivateLocked(n, ch)
		}
	}
	for _, n := range names {
		if want[n] {
			r.activateLocked(n, ch)
		}
	}
}

// Restore brings back a loadout recorded earlier, for example the tools a
// transcript says the model was told about: the active set becomes the
// registered names (tools active now but not named are deactivated, as
// with SetActive), and the names not registered yet replace the pending
// set, so each becomes active when it registers. It returns the names
// activated now.
func (r *Registry) Restore(names ...string) []string {
	r.mu.Lock()
	var ch Change
	r.replaceActiveLocked(names, &ch)
	var pending []string
	for _, n := range names {
		if _, ok := r.entries[n]; !ok && !slices.Contains(pending, n) {
			pending = append(pending, n)
		}
	}
	if !slices.Equal(pending, r.pending) {
		r.pending = pending
		ch.PendingChanged = true
	}
	activated := slices.Clone(ch.Activated)
	r.commitAndNotify(&ch)
	return activated
}

// Keep makes sure the named tools are declared, without taking anything
// away: the registered names are activated, and the names not registered
// yet join the pending set, so each becomes active when it registers. The
// agent calls it with the tools a resumed transcript declared. It returns
// the names activated now.
func (r *Registry) Keep(names ...string) []string {
	r.mu.Lock()
	var ch Change
	for _, n := range names {
		if _, ok := r.entries[n]; ok {
			r.activateLocked(n, &ch)
		} else if !slices.Contains(r.pending, n) {
			r.pending = append(r.pending, n)
			ch.PendingChanged = true
		}
	}
	activated := slices.Clone(ch.Activated)
	r.commitAndNotify(&ch)
	return activated
}

// Pending returns the names expected to become active when they register.
func (r *Registry) Pending() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.pending)
}

// ClearPending forgets the pending names, so a tool that never registers
// does not stay pending. The agent calls it at the start of every run.
func (r *Registry) ClearPending() {
	r.mu.Lock()
	var ch Change
	r.clearPendingLocked(&ch)
	r.commitAndNotify(&ch)
}

func (r *Registry) clearPendingLocked(ch *Change) {
	if len(r.pending) > 0 {
		r.pending = nil
		ch.PendingChanged = true
	}
}

// Version returns a number that grows with every change of the registry:
// registrations, activations and pending names.
func (r *Registry) Version() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.version
}

// ChangedSince returns the tools registered or re-registered after the
// registration revision rev, in registration order (as Tools lists them),
// and the current revision to pass next time. ChangedSince(0) returns every
// tool. The cost grows with the number of registrations since rev, not
// with the number of tools, so an index can follow the registry cheaply.
func (r *Registry) ChangedSince(rev uint64) ([]Tool, uint64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if rev >= r.rev {
		return nil, r.rev
	}
	i := sort.Search(len(r.log), func(i int) bool { return r.log[i].rev > rev })
	var changed []*entry
	for _, rec := range r.log[i:] {
		if rec.e.rev == rec.rev {
			changed = append(changed, rec.e)
		}
	}
	slices.SortFunc(changed, func(a, b *entry) int { return a.pos - b.pos })
	out := make([]Tool, len(changed))
	for j, e := range changed {
		out[j] = e.tool
	}
	return out, r.rev
}

// Subscribe calls fn after every change of the registry and returns a
// function that cancels the subscription.
//
// fn runs on the goroutine that made the change, after the registry's lock
// is released, so it may call back into the registry. Subscribers share the
// Change value's slices and must not modify them. Changes made
// concurrently by several goroutines may be delivered concurrently and out
// of order; [Change.Version] orders them.
func (r *Registry) Subscribe(fn func(Change)) (cancel func()) {
	r.mu.Lock()
	id := r.nextSub
	r.nextSub++
	r.subs[id] = fn
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.subs, id)
		r.mu.Unlock()
	}
}

func appendUnique(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
