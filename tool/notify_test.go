package tool_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolshelf/toolshelf/tool"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	steps := []struct {
		name    string
		do      func()
		changes bool
	}{
		{"register", func() { r.Register(named(tool.Direct, "a")...) }, true},
		{"register deferred", func() { r.Register(named(tool.Deferred, "d", "e")...) }, true},
		{"register invalid", func() { r.Register(tool.Tool{Name: "bad name"}) }, false},
		{"register nothing", func() { r.Register() }, false},
		{"replace with the same tool", func() { r.Register(named(tool.Direct, "a")...) }, true},
		{"activate", func() { r.Activate("d") }, true},
		{"activate active", func() { r.Activate("d", "a") }, false},
		{"activate unknown", func() { r.Activate("zzz") }, false},
		{"deactivate inactive", func() { r.Deactivate("e", "zzz") }, false},
		{"deactivate", func() { r.Deactivate("d") }, true},
		{"set active unchanged", func() { r.SetActive("a") }, false},
		{"set active", func() { r.SetActive("a", "e") }, true},
		{"restore the active set", func() { r.Restore("a", "e") }, false},
		{"restore pending", func() { r.Restore("a", "e", "p") }, true},
		{"restore the same in another order", func() { r.Restore("p", "e", "a") }, false},
		{"activate keeps pending", func() { r.Activate("zzz") }, false},
		{"clear pending", func() { r.ClearPending() }, true},
		{"clear empty pending", func() { r.ClearPending() }, false},
		{"restore nothing deactivates all", func() { r.Restore() }, true},
		{"restore nothing again", func() { r.Restore() }, false},
		{"subscribe", func() { r.Subscribe(func(tool.Change) {})() }, false},
	}
	for _, s := range steps {
		before := r.Version()
		s.do()
		after := r.Version()
		want := before
		if s.changes {
			want++
		}
		if after != want {
			t.Errorf("%s: Version() went from %d to %d, want %d", s.name, before, after, want)
		}
	}
}

func TestChangedSince(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	check := func(since uint64, wantNames []string, wantRev uint64) {
		t.Helper()
		got, rev := r.ChangedSince(since)
		if diff := cmp.Diff(wantNames, toolNames(got), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("ChangedSince(%d) tools (-want +got):\n%s", since, diff)
		}
		if rev != wantRev {
			t.Errorf("ChangedSince(%d) revision = %d, want %d", since, rev, wantRev)
		}
	}
	check(0, nil, 0)
	register(t, r, named(tool.Direct, "a", "b", "c")...) // revs 1, 2, 3
	check(0, []string{"a", "b", "c"}, 3)
	check(1, []string{"b", "c"}, 3)
	check(3, nil, 3)
	check(100, nil, 3)

	r.Activate("a")
	r.Deactivate("b")
	r.Restore("p")
	check(3, nil, 3) // activation is not registration

	register(t, r, tool.Tool{Name: "a", Description: "new", Exposure: tool.Hidden}) // rev 4
	check(0, []string{"a", "b", "c"}, 4)                                            // registration order, not revision order
	check(3, []string{"a"}, 4)
	register(t, r, named(tool.Deferred, "d", "b")...) // revs 5, 6
	check(0, []string{"a", "b", "c", "d"}, 6)
	check(4, []string{"b", "d"}, 6)
	check(5, []string{"b"}, 6)

	if r.Register(tool.Tool{Name: "bad name"}) == nil {
		t.Fatal("Register of an invalid tool succeeded")
	}
	check(6, nil, 6) // a rejected tool is not a registration

	got, _ := r.ChangedSince(3)
	if got[0].Description != "new" || got[0].Exposure != tool.Hidden {
		t.Errorf("ChangedSince returned %+v, want the current definition of a", got[0])
	}
}

// TestChangedSinceModel compares ChangedSince with a brute-force model over
// a long random sequence of registrations, enough to compact the log many
// times.
func TestChangedSinceModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	r := tool.NewRegistry()
	lastRev := map[string]uint64{}  // tool name -> revision of its last registration
	firstRev := map[string]uint64{} // tool name -> revision of its first registration
	desc := map[string]string{}
	var rev uint64
	var revs []uint64 // revisions observed, to query later
	const steps = 3000
	maxLog := 0
	for step := range steps {
		// Few names so that most registrations are replacements.
		nTools := 5 + step/300
		batch := make([]tool.Tool, 1+rng.IntN(4))
		for i := range batch {
			name := fmt.Sprintf("t%02d", rng.IntN(nTools))
			batch[i] = tool.Tool{Name: name, Description: fmt.Sprint(step, "/", i), Exposure: tool.Deferred}
		}
		if rng.IntN(10) == 0 {
			batch = append(batch, tool.Tool{Name: "not valid!"})
		}
		err := r.Register(batch...)
		for _, tl := range batch {
			if tl.Name == "not valid!" {
				continue
			}
			rev++
			lastRev[tl.Name] = rev
			if _, ok := firstRev[tl.Name]; !ok {
				firstRev[tl.Name] = rev
			}
			desc[tl.Name] = tl.Description
		}
		if (err != nil) != (batch[len(batch)-1].Name == "not valid!") {
			t.Fatalf("step %d: Register error %v", step, err)
		}
		if rng.IntN(5) == 0 {
			r.Activate(fmt.Sprintf("t%02d", rng.IntN(nTools)))
		}
		revs = append(revs, rev)
		maxLog = max(maxLog, tool.LogLen(r))

		// Query a few revisions, including 0, the current one and old ones.
		queries := []uint64{0, rev, revs[rng.IntN(len(revs))], uint64(rng.IntN(int(rev) + 2))}
		for _, since := range queries {
			got, gotRev := r.ChangedSince(since)
			if gotRev != rev {
				t.Fatalf("step %d: ChangedSince(%d) revision = %d, want %d", step, since, gotRev, rev)
			}
			want := modelChangedSince(lastRev, firstRev, since)
			if diff := cmp.Diff(want, toolNames(got), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("step %d: ChangedSince(%d) (-want +got):\n%s", step, since, diff)
			}
			for _, tl := range got {
				if tl.Description != desc[tl.Name] {
					t.Fatalf("step %d: ChangedSince(%d) returned %s with description %q, want the latest, %q",
						step, since, tl.Name, tl.Description, desc[tl.Name])
				}
			}
		}
	}
	if bound := 2*r.Len() + 64 + 1; maxLog > bound {
		t.Errorf("the ChangedSince log grew to %d records, want at most %d", maxLog, bound)
	}
	if got := tool.LogLen(r); got >= steps {
		t.Errorf("the ChangedSince log has %d records after %d batches; it was never compacted", got, steps)
	}
}

// modelChangedSince returns the names whose last registration is after
// since, in order of first registration.
func modelChangedSince(lastRev, firstRev map[string]uint64, since uint64) []string {
	var names []string
	for name, rev := range lastRev {
		if rev > since {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return int(firstRev[a]) - int(firstRev[b]) })
	return names
}

func TestSubscribeChanges(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	var got []tool.Change
	cancel := r.Subscribe(func(c tool.Change) { got = append(got, c) })
	defer cancel()

	register(t, r, tool.Tool{Name: "a"}, tool.Tool{Name: "d", Exposure: tool.Deferred}, tool.Tool{Name: "a"})
	register(t, r, tool.Tool{Name: "d", Exposure: tool.Deferred}, tool.Tool{Name: "n", Exposure: tool.Hidden})
	r.Activate("d", "zzz")
	r.Activate("d") // no change, no call
	r.Restore("a", "p", "d", "q")
	register(t, r, tool.Tool{Name: "p", Exposure: tool.Deferred})
	r.Deactivate("a")
	r.SetActive("a", "p")
	register(t, r, tool.Tool{Name: "a", Exposure: tool.Hidden})
	r.Restore("p", "q")
	r.ClearPending()
	r.ClearPending() // no change, no call
	register(t, r, tool.Tool{Name: "x", Exposure: tool.Deferred}, tool.Tool{Name: "x"}, tool.Tool{Name: "x", Exposure: tool.Hidden})

	want := []tool.Change{
		{Version: 1, Registered: []string{"a", "d"}, Activated: []string{"a"}},
		{Version: 2, Replaced: []string{"d"}, Registered: []string{"n"}},
		{Version: 3, Activated: []string{"d"}},
		{Version: 4, Pending: []string{"p", "q"}, PendingChanged: true},
		{Version: 5, Registered: []string{"p"}, Activated: []string{"p"}, Pending: []string{"q"}, PendingChanged: true},
		{Version: 6, Deactivated: []string{"a"}, PendingChanged: true},
		{Version: 7, Activated: []string{"a"}, Deactivated: []string{"d"}},
		{Version: 8, Replaced: []string{"a"}, Deactivated: []string{"a"}},
		{Version: 9, Pending: []string{"q"}, PendingChanged: true},
		{Version: 10, PendingChanged: true},
		// x is activated as a direct tool, then deactivated as a hidden
		// one within the same call: the net change shows neither.
		{Version: 11, Registered: []string{"x"}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if v := r.Version(); v != 11 {
		t.Errorf("Version() = %d, want 11", v)
	}
}

func TestSubscribeCancel(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	var first, second []uint64
	cancel1 := r.Subscribe(func(c tool.Change) { first = append(first, c.Version) })
	cancel2 := r.Subscribe(func(c tool.Change) { second = append(second, c.Version) })
	register(t, r, tool.Tool{Name: "a"})
	cancel1()
	register(t, r, tool.Tool{Name: "b"})
	cancel1() // cancelling twice is harmless
	cancel2()
	register(t, r, tool.Tool{Name: "c"})
	if diff := cmp.Diff([]uint64{1}, first); diff != "" {
		t.Errorf("first subscriber's versions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint64{1, 2}, second); diff != "" {
		t.Errorf("second subscriber's versions (-want +got):\n%s", diff)
	}
}

// TestSubscribeOrder checks that subscribers are called in the order they
// subscribed.
func TestSubscribeOrder(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	const n = 20
	var calls []int
	for i := range n {
		defer r.Subscribe(func(tool.Change) { calls = append(calls, i) })()
	}
	var want []int
	for _, name := range []string{"a", "b", "c"} {
		register(t, r, tool.Tool{Name: name})
		for i := range n {
			want = append(want, i)
		}
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("subscribers called (-want +got):\n%s", diff)
	}
}

// TestSubscribeReentrant checks that a subscriber may call back into the
// registry: here it loads every deferred tool as soon as it registers, and
// subscribes and cancels from inside the callback.
func TestSubscribeReentrant(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	var changes []tool.Change
	defer r.Subscribe(func(c tool.Change) {
		changes = append(changes, c)
		for _, name := range c.Registered {
			if tl, ok := r.Get(name); ok && tl.Exposure.Loadable() {
				r.Activate(name)
			}
		}
		_ = r.Tools()
		_, _ = r.ChangedSince(0)
		r.Subscribe(func(tool.Change) {})()
	})()
	register(t, r, tool.Tool{Name: "d", Exposure: tool.Deferred}, tool.Tool{Name: "a"})
	checkState(t, r, []string{"d", "a"}, []string{"a", "d"}, nil)
	want := []tool.Change{
		{Version: 1, Registered: []string{"d", "a"}, Activated: []string{"a"}},
		{Version: 2, Activated: []string{"d"}},
	}
	if diff := cmp.Diff(want, changes, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}

	// A subscriber can cancel itself from inside its callback.
	r = tool.NewRegistry()
	calls := 0
	var cancel func()
	cancel = r.Subscribe(func(tool.Change) {
		calls++
		cancel()
	})
	register(t, r, tool.Tool{Name: "a"})
	register(t, r, tool.Tool{Name: "b"})
	if calls != 1 {
		t.Errorf("self-cancelling subscriber called %d times, want 1", calls)
	}
}

// TestSubscribeMutatingChange checks that a subscriber that modifies the
// slices of its Change affects neither the registry nor what the mutating
// call returns.
func TestSubscribeMutatingChange(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	register(t, r, named(tool.Deferred, "d", "e")...)
	r.Restore("p", "q")
	defer r.Subscribe(func(c tool.Change) {
		for _, s := range [][]string{c.Registered, c.Replaced, c.Activated, c.Deactivated, c.Pending} {
			for i := range s {
				s[i] = "mutated"
			}
		}
	})()
	register(t, r, tool.Tool{Name: "x"}, tool.Tool{Name: "p"})
	checkState(t, r, []string{"d", "e", "x", "p"}, []string{"x", "p"}, []string{"q"})
	if diff := cmp.Diff([]string{"d", "e"}, r.Activate("d", "e")); diff != "" {
		t.Errorf("Activate (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x", "d"}, r.Deactivate("x", "d")); diff != "" {
		t.Errorf("Deactivate (-want +got):\n%s", diff)
	}
	activated, deactivated := r.SetActive("x")
	if diff := cmp.Diff([]string{"x"}, activated); diff != "" {
		t.Errorf("SetActive activated (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"p", "e"}, deactivated); diff != "" {
		t.Errorf("SetActive deactivated (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"d"}, r.Restore("x", "d", "later")); diff != "" {
		t.Errorf("Restore (-want +got):\n%s", diff)
	}
	checkState(t, r, []string{"d", "e", "x", "p"}, []string{"x", "d"}, []string{"later"})
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	var mu sync.Mutex
	versions := map[uint64]bool{}
	defer r.Subscribe(func(c tool.Change) {
		mu.Lock()
		defer mu.Unlock()
		versions[c.Version] = true
	})()

	const workers, perWorker = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				name := fmt.Sprintf("w%d_t%d", w, i%20)
				e := tool.Deferred
				if i%3 == 0 {
					e = tool.Direct
				}
				if err := r.Register(tool.Tool{Name: name, Exposure: e, Description: fmt.Sprint(i)}); err != nil {
					t.Errorf("Register(%s): %v", name, err)
					return
				}
				switch i % 7 {
				case 0:
					r.Activate(name, fmt.Sprintf("w%d_t%d", (w+1)%workers, i%20))
				case 1:
					r.Deactivate(name)
				case 2:
					r.Restore(name, fmt.Sprintf("later_%d_%d", w, i))
				case 3:
					r.ClearPending()
				case 4:
					r.SetActive(r.ActiveNames()...)
				case 5:
					_, _ = r.ChangedSince(r.Version() / 2)
				case 6:
					_ = r.Active()
					_ = r.Tools()
					_, _ = r.Get(name)
					_ = r.Pending()
					_ = r.IsActive(name)
					_ = r.Len()
				}
			}
		})
	}
	wg.Wait()

	if got, want := r.Len(), workers*20; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	got, rev := r.ChangedSince(0)
	if len(got) != workers*20 {
		t.Errorf("ChangedSince(0) returned %d tools, want %d", len(got), workers*20)
	}
	if rev != workers*perWorker {
		t.Errorf("revision = %d, want %d registrations", rev, workers*perWorker)
	}
	active := r.ActiveNames()
	seen := map[string]bool{}
	for _, n := range active {
		if seen[n] {
			t.Errorf("%s is active twice", n)
		}
		seen[n] = true
		if !r.IsActive(n) {
			t.Errorf("%s is listed active but IsActive = false", n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	v := r.Version()
	if uint64(len(versions)) != v {
		t.Errorf("subscribers saw %d distinct versions, want %d", len(versions), v)
	}
	for i := uint64(1); i <= v; i++ {
		if !versions[i] {
			t.Errorf("no change with version %d was delivered", i)
			break
		}
	}
}
