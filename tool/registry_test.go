package tool_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolshelf/toolshelf/tool"
)

// register registers tools and fails the test on error.
func register(t *testing.T, r *tool.Registry, tools ...tool.Tool) {
	t.Helper()
	if err := r.Register(tools...); err != nil {
		t.Fatalf("Register: %v", err)
	}
}

// named returns tools of the given names and exposure.
func named(e tool.Exposure, names ...string) []tool.Tool {
	out := make([]tool.Tool, len(names))
	for i, n := range names {
		out[i] = tool.Tool{Name: n, Exposure: e}
	}
	return out
}

// checkState compares the registry's tools, active names and pending names.
func checkState(t *testing.T, r *tool.Registry, wantTools, wantActive, wantPending []string) {
	t.Helper()
	if diff := cmp.Diff(wantTools, toolNames(r.Tools()), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Tools() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantActive, r.ActiveNames(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ActiveNames() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantActive, toolNames(r.Active()), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Active() (-want +got):\n%s", diff)
	}
	for _, n := range wantActive {
		if !r.IsActive(n) {
			t.Errorf("IsActive(%q) = false, want true", n)
		}
	}
	for _, n := range wantTools {
		if !slices.Contains(wantActive, n) && r.IsActive(n) {
			t.Errorf("IsActive(%q) = true, want false", n)
		}
	}
	if diff := cmp.Diff(wantPending, r.Pending(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Pending() (-want +got):\n%s", diff)
	}
	if got, want := r.Len(), len(wantTools); got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
}

func TestNewRegistryEmpty(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	checkState(t, r, nil, nil, nil)
	if v := r.Version(); v != 0 {
		t.Errorf("Version() = %d, want 0", v)
	}
	if got, rev := r.ChangedSince(0); len(got) != 0 || rev != 0 {
		t.Errorf("ChangedSince(0) = %v, %d, want nothing, 0", toolNames(got), rev)
	}
	if _, ok := r.Get("x"); ok {
		t.Error("Get on an empty registry found a tool")
	}
	if r.IsActive("x") {
		t.Error("IsActive on an empty registry = true")
	}
}

func TestRegisterKeepsOrderOnReplace(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	register(t, r, named(tool.Direct, "a", "b", "c")...)
	register(t, r, tool.Tool{Name: "b", Description: "second", Exposure: tool.Deferred})
	register(t, r, tool.Tool{Name: "d"}, tool.Tool{Name: "a", Description: "again"})
	checkState(t, r, []string{"a", "b", "c", "d"}, []string{"a", "b", "c", "d"}, nil)
	for name, want := range map[string]string{"a": "again", "b": "second", "c": ""} {
		got, ok := r.Get(name)
		if !ok || got.Description != want {
			t.Errorf("Get(%q) = %q, %v, want description %q", name, got.Description, ok, want)
		}
	}
	if got, _ := r.Get("b"); got.Exposure != tool.Deferred {
		t.Errorf("replaced tool b has exposure %q, want %q", got.Exposure, tool.Deferred)
	}
}

func TestRegisterActiveState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		exposure      tool.Exposure
		startInactive bool
		wantActive    bool
	}{
		{"", false, true},
		{"", true, false},
		{tool.Direct, false, true},
		{tool.Direct, true, false},
		{tool.ModelOnly, false, true},
		{tool.ModelOnly, true, false},
		{tool.Codemode, false, false},
		{tool.Codemode, true, false},
		{tool.Deferred, false, false},
		{tool.Deferred, true, false},
		{tool.Hidden, false, false},
		{tool.Hidden, true, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/startInactive=%v", tt.exposure, tt.startInactive), func(t *testing.T) {
			r := tool.NewRegistry()
			register(t, r, tool.Tool{Name: "t", Exposure: tt.exposure, StartInactive: tt.startInactive})
			if got := r.IsActive("t"); got != tt.wantActive {
				t.Errorf("IsActive after Register = %v, want %v", got, tt.wantActive)
			}
			// A tool that is activatable can still be activated by name;
			// only hidden tools cannot.
			wantActivated := []string{"t"}
			if tt.wantActive || tt.exposure == tool.Hidden {
				wantActivated = nil
			}
			if diff := cmp.Diff(wantActivated, r.Activate("t"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Activate(t) (-want +got):\n%s", diff)
			}
			if got, want := r.IsActive("t"), tt.exposure != tool.Hidden; got != want {
				t.Errorf("IsActive after Activate = %v, want %v", got, want)
			}
		})
	}
}

func TestReRegister(t *testing.T) {
	t.Parallel()
	type reg struct {
		exposure      tool.Exposure
		startInactive bool
	}
	tests := []struct {
		name       string
		first      reg
		activate   bool // Activate the tool after the first registration
		deactivate bool // Deactivate it after the first registration
		second     reg
		wantActive bool
	}{
		{name: "direct to direct stays active", first: reg{tool.Direct, false}, second: reg{tool.Direct, false}, wantActive: true},
		{name: "direct to deferred stays active", first: reg{tool.Direct, false}, second: reg{tool.Deferred, false}, wantActive: true},
		{name: "direct to codemode stays active", first: reg{tool.Direct, false}, second: reg{tool.Codemode, false}, wantActive: true},
		{name: "direct to model-only stays active", first: reg{tool.Direct, false}, second: reg{tool.ModelOnly, false}, wantActive: true},
		{name: "direct to hidden is deactivated", first: reg{tool.Direct, false}, second: reg{tool.Hidden, false}, wantActive: false},
		{name: "model-only to hidden is deactivated", first: reg{tool.ModelOnly, false}, second: reg{tool.Hidden, false}, wantActive: false},
		{name: "activated deferred to hidden is deactivated", first: reg{tool.Deferred, false}, activate: true, second: reg{tool.Hidden, false}, wantActive: false},
		{name: "deferred to direct is activated", first: reg{tool.Deferred, false}, second: reg{tool.Direct, false}, wantActive: true},
		{name: "deferred to zero exposure is activated", first: reg{tool.Deferred, false}, second: reg{"", false}, wantActive: true},
		{name: "deferred to model-only is activated", first: reg{tool.Deferred, false}, second: reg{tool.ModelOnly, false}, wantActive: true},
		{name: "codemode to direct is activated", first: reg{tool.Codemode, false}, second: reg{tool.Direct, false}, wantActive: true},
		{name: "hidden to direct is activated", first: reg{tool.Hidden, false}, second: reg{tool.Direct, false}, wantActive: true},
		{name: "deferred to direct StartInactive stays inactive", first: reg{tool.Deferred, false}, second: reg{tool.Direct, true}, wantActive: false},
		{name: "hidden to deferred stays inactive", first: reg{tool.Hidden, false}, second: reg{tool.Deferred, false}, wantActive: false},
		{name: "deferred to codemode stays inactive", first: reg{tool.Deferred, false}, second: reg{tool.Codemode, false}, wantActive: false},
		{name: "activated deferred to deferred stays active", first: reg{tool.Deferred, false}, activate: true, second: reg{tool.Deferred, false}, wantActive: true},
		{name: "activated codemode to direct stays active", first: reg{tool.Codemode, false}, activate: true, second: reg{tool.Direct, false}, wantActive: true},
		{name: "deactivated direct to direct stays inactive", first: reg{tool.Direct, false}, deactivate: true, second: reg{tool.Direct, false}, wantActive: false},
		{name: "deactivated direct to model-only stays inactive", first: reg{tool.Direct, false}, deactivate: true, second: reg{tool.ModelOnly, false}, wantActive: false},
		{name: "inactive direct to direct stays inactive", first: reg{tool.Direct, true}, second: reg{tool.Direct, false}, wantActive: false},
		{name: "active direct to direct StartInactive stays active", first: reg{tool.Direct, false}, second: reg{tool.Direct, true}, wantActive: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.NewRegistry()
			register(t, r, tool.Tool{Name: "x"}, tool.Tool{Name: "t", Exposure: tt.first.exposure, StartInactive: tt.first.startInactive}, tool.Tool{Name: "y"})
			if tt.activate {
				r.Activate("t")
			}
			if tt.deactivate {
				r.Deactivate("t")
			}
			register(t, r, tool.Tool{Name: "t", Description: "2", Exposure: tt.second.exposure, StartInactive: tt.second.startInactive})
			if got := r.IsActive("t"); got != tt.wantActive {
				t.Errorf("IsActive(t) = %v, want %v", got, tt.wantActive)
			}
			if diff := cmp.Diff([]string{"x", "t", "y"}, toolNames(r.Tools())); diff != "" {
				t.Errorf("Tools() (-want +got):\n%s", diff)
			}
			if got, _ := r.Get("t"); got.Description != "2" {
				t.Errorf("Get(t).Description = %q, want the replacement's", got.Description)
			}
		})
	}
}

func TestHiddenCannotBeActivated(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	register(t, r, named(tool.Hidden, "h")...)
	register(t, r, named(tool.Deferred, "d")...)
	if got := r.Activate("h"); len(got) != 0 {
		t.Errorf("Activate(h) = %v, want nothing", got)
	}
	activated, deactivated := r.SetActive("h", "d")
	if diff := cmp.Diff([]string{"d"}, activated); diff != "" {
		t.Errorf("SetActive activated (-want +got):\n%s", diff)
	}
	if len(deactivated) != 0 {
		t.Errorf("SetActive deactivated %v, want nothing", deactivated)
	}
	if got := r.Restore("h", "d"); len(got) != 0 {
		t.Errorf("Restore(h, d) = %v, want nothing", got)
	}
	// h is registered, so Restore does not make it pending either.
	checkState(t, r, []string{"h", "d"}, []string{"d"}, nil)
}

func TestActivate(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	register(t, r, named(tool.Direct, "a")...)
	register(t, r, named(tool.Deferred, "d1", "d2", "d3")...)
	register(t, r, named(tool.Codemode, "c")...)
	register(t, r, named(tool.Hidden, "h")...)

	got := r.Activate("d2", "unknown", "a", "h", "c", "d2")
	if diff := cmp.Diff([]string{"d2", "c"}, got); diff != "" {
		t.Errorf("Activate (-want +got):\n%s", diff)
	}
	checkState(t, r, []string{"a", "d1", "d2", "d3", "c", "h"}, []string{"a", "d2", "c"}, nil)

	// Activate is additive: what was active stays active, in its place.
	got = r.Activate("d1")
	if diff := cmp.Diff([]string{"d1"}, got); diff != "" {
		t.Errorf("second Activate (-want +got):\n%s", diff)
	}
	checkState(t, r, []string{"a", "d1", "d2", "d3", "c", "h"}, []string{"a", "d2", "c", "d1"}, nil)

	if got := r.Activate(); got != nil {
		t.Errorf("Activate() = %v, want nil", got)
	}
	if got := r.Activate("a", "d1"); got != nil {
		t.Errorf("Activate of active tools = %v, want nil", got)
	}
}

func TestActivateKeepsPending(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	register(t, r, named(tool.Deferred, "d")...)
	r.Restore("p1", "p2")
	r.Activate("d")
	checkState(t, r, []string{"d"}, []string{"d"}, []string{"p1", "p2"})
}

func TestDeactivate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		deactivate      []string
		want            []string
		wantActive      []string
		wantPendingKept bool
	}{
		{"one", []string{"b"}, []string{"b"}, []string{"a", "c"}, false},
		{"several in call order", []string{"c", "a"}, []string{"c", "a"}, []string{"b"}, false},
		{"inactive only", []string{"d"}, nil, []string{"a", "b", "c"}, true},
		{"unknown only", []string{"zzz"}, nil, []string{"a", "b", "c"}, true},
		{"nothing", nil, nil, []string{"a", "b", "c"}, true},
		{"mixed", []string{"zzz", "d", "a", "a"}, []string{"a"}, []string{"b", "c"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.NewRegistry()
			register(t, r, named(tool.Direct, "a", "b", "c")...)
			register(t, r, named(tool.Deferred, "d")...)
			r.Restore("a", "b", "c", "p")
			got := r.Deactivate(tt.deactivate...)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Deactivate (-want +got):\n%s", diff)
			}
			var wantPending []string
			if tt.wantPendingKept {
				wantPending = []string{"p"}
			}
			checkState(t, r, []string{"a", "b", "c", "d"}, tt.wantActive, wantPending)
		})
	}
}

func TestSetActive(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		set             []string
		wantActivated   []string
		wantDeactivated []string
		wantActive      []string
		wantPendingKept bool
	}{
		{
			name:            "same set",
			set:             []string{"a", "b"},
			wantActive:      []string{"a", "b"},
			wantPendingKept: true,
		},
		{
			// Tools that stay active keep their place; the others follow
			// in the given order.
			name:            "same set reordered",
			set:             []string{"b", "a"},
			wantActive:      []string{"a", "b"},
			wantPendingKept: true,
		},
		{
			name:            "additive",
			set:             []string{"e", "a", "b", "d"},
			wantActivated:   []string{"e", "d"},
			wantActive:      []string{"a", "b", "e", "d"},
			wantPendingKept: true,
		},
		{
			name:            "replace",
			set:             []string{"d", "c", "b"},
			wantActivated:   []string{"d", "c"},
			wantDeactivated: []string{"a"},
			wantActive:      []string{"b", "d", "c"},
		},
		{
			name:            "empty",
			set:             nil,
			wantDeactivated: []string{"a", "b"},
		},
		{
			name:            "unknown hidden and duplicate names skipped",
			set:             []string{"zzz", "h", "c", "c", "a"},
			wantActivated:   []string{"c"},
			wantDeactivated: []string{"b"},
			wantActive:      []string{"a", "c"},
		},
		{
			name:            "only unknown names",
			set:             []string{"zzz"},
			wantDeactivated: []string{"a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.NewRegistry()
			register(t, r, named(tool.Direct, "a", "b")...)
			register(t, r, named(tool.Deferred, "c", "d")...)
			register(t, r, named(tool.Codemode, "e")...)
			register(t, r, named(tool.Hidden, "h")...)
			r.Restore("a", "b", "p")
			activated, deactivated := r.SetActive(tt.set...)
			if diff := cmp.Diff(tt.wantActivated, activated, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("SetActive activated (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDeactivated, deactivated, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("SetActive deactivated (-want +got):\n%s", diff)
			}
			var wantPending []string
			if tt.wantPendingKept {
				wantPending = []string{"p"}
			}
			checkState(t, r, []string{"a", "b", "c", "d", "e", "h"}, tt.wantActive, wantPending)
		})
	}
}

func TestRestore(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	register(t, r, named(tool.Direct, "a")...)
	register(t, r, named(tool.Deferred, "d1", "d2")...)
	register(t, r, named(tool.Hidden, "h")...)

	got := r.Restore("d2", "p1", "a", "h", "p2", "p1", "d2")
	if diff := cmp.Diff([]string{"d2"}, got); diff != "" {
		t.Errorf("Restore (-want +got):\n%s", diff)
	}
	checkState(t, r, []string{"a", "d1", "d2", "h"}, []string{"a", "d2"}, []string{"p1", "p2"})

	// A pending name becomes active when it registers, whatever its
	// exposure, and leaves the pending set.
	register(t, r, named(tool.Deferred, "p2")...)
	checkState(t, r, []string{"a", "d1", "d2", "h", "p2"}, []string{"a", "d2", "p2"}, []string{"p1"})

	// A pending direct tool registered StartInactive is activated too: the
	// restored loadout says the model was told about it.
	register(t, r, tool.Tool{Name: "p1", StartInactive: true})
	checkState(t, r, []string{"a", "d1", "d2", "h", "p2", "p1"}, []string{"a", "d2", "p2", "p1"}, nil)
}

func TestRestoreReplacesTheActiveSet(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	register(t, r, named(tool.Direct, "a", "b")...)
	register(t, r, named(tool.Deferred, "d")...)
	// The transcript says the model knows d and b (in that order) and a
	// tool still to register; a was withdrawn and stays inactive.
	got := r.Restore("d", "b", "later")
	if diff := cmp.Diff([]string{"d"}, got); diff != "" {
		t.Errorf("Restore (-want +got):\n%s", diff)
	}
	checkState(t, r, []string{"a", "b", "d"}, []string{"b", "d"}, []string{"later"})
}

func TestRestoreReplacesPending(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	r.Restore("p1", "p2")
	r.Restore("p3")
	checkState(t, r, nil, nil, []string{"p3"})
	r.Restore()
	checkState(t, r, nil, nil, nil)
}

func TestPendingRegisteredHidden(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	r.Restore("p", "q")
	register(t, r, named(tool.Hidden, "p")...)
	checkState(t, r, []string{"p"}, nil, []string{"q"})
	// Later registrations of p follow the ordinary rules: p is no longer
	// pending, so a deferred p stays inactive.
	register(t, r, named(tool.Deferred, "p")...)
	checkState(t, r, []string{"p"}, nil, []string{"q"})
}

func TestPendingCodemodeActivated(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	r.Restore("c")
	register(t, r, named(tool.Codemode, "c")...)
	checkState(t, r, []string{"c"}, []string{"c"}, nil)
}

func TestClearPending(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	register(t, r, named(tool.Deferred, "d")...)
	r.Restore("d", "p")
	v := r.Version()
	r.ClearPending()
	checkState(t, r, []string{"d"}, []string{"d"}, nil)
	if got := r.Version(); got != v+1 {
		t.Errorf("Version() after ClearPending = %d, want %d", got, v+1)
	}
	r.ClearPending()
	if got := r.Version(); got != v+1 {
		t.Errorf("Version() after a second ClearPending = %d, want %d (unchanged)", got, v+1)
	}
	// The cleared name no longer activates on registration.
	register(t, r, named(tool.Deferred, "p")...)
	checkState(t, r, []string{"d", "p"}, []string{"d"}, nil)
}

func TestServerCounts(t *testing.T) {
	t.Parallel()
	from := func(name, server string, e tool.Exposure) tool.Tool {
		return tool.Tool{Name: name, Exposure: e, Origin: tool.Origin{Server: server, Tool: name}}
	}
	// counted is ServerCounts computed from Tools, as callers did before.
	counted := func(r *tool.Registry) map[string]int {
		out := map[string]int{}
		for _, t := range r.Tools() {
			if t.Exposure != tool.Hidden && !t.Origin.IsZero() {
				out[t.Origin.Server]++
			}
		}
		return out
	}
	r := tool.NewRegistry()
	steps := []struct {
		tools []tool.Tool
		want  map[string]int
	}{
		{[]tool.Tool{from("a", "s1", tool.Deferred), from("b", "s1", tool.Direct), {Name: "local"}}, map[string]int{"s1": 2}},
		{[]tool.Tool{from("c", "s2", tool.Hidden), from("d", "s2", tool.Deferred)}, map[string]int{"s1": 2, "s2": 1}},
		// Re-registered hidden, then shown again, then moved to another server.
		{[]tool.Tool{from("a", "s1", tool.Hidden)}, map[string]int{"s1": 1, "s2": 1}},
		{[]tool.Tool{from("c", "s2", tool.Codemode)}, map[string]int{"s1": 1, "s2": 2}},
		{[]tool.Tool{from("b", "s3", tool.Direct)}, map[string]int{"s2": 2, "s3": 1}},
		// The same tool twice in one call counts once.
		{[]tool.Tool{from("e", "s3", tool.Deferred), from("e", "s3", tool.Deferred)}, map[string]int{"s2": 2, "s3": 2}},
		// A server whose tools are all hidden is left out.
		{[]tool.Tool{from("c", "s2", tool.Hidden), from("d", "s2", tool.Hidden)}, map[string]int{"s3": 2}},
	}
	for i, st := range steps {
		register(t, r, st.tools...)
		got := r.ServerCounts()
		if diff := cmp.Diff(st.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step %d: ServerCounts() (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(counted(r), got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step %d: ServerCounts() disagrees with Tools() (-Tools +ServerCounts):\n%s", i, diff)
		}
	}
	// An invalid tool is not registered, so not counted; the result is a
	// copy.
	if err := r.Register(from("bad name", "s9", tool.Deferred)); err == nil {
		t.Fatal("Register accepted an invalid name")
	}
	got := r.ServerCounts()
	got["s3"] = 100
	if diff := cmp.Diff(map[string]int{"s3": 2}, r.ServerCounts()); diff != "" {
		t.Errorf("after an invalid tool and a write to the result (-want +got):\n%s", diff)
	}
}

// BenchmarkRegister registers 10,000 tools of distinct names and small
// compact schemas, in one call, into a new registry (ns/tool).
func BenchmarkRegister(b *testing.B) {
	const n = 10000
	tools := make([]tool.Tool, n)
	for i := range tools {
		tools[i] = tool.Tool{
			Name:        fmt.Sprintf("server_%d__get_item_%05d", i%20, i),
			Description: "Get one item by its id.",
			Parameters:  []byte(fmt.Sprintf(`{"type":"object","properties":{"id_%d":{"type":"string","description":"The item's id."}},"required":["id_%d"]}`, i, i)),
			Exposure:    tool.Deferred,
		}
	}
	for b.Loop() {
		r := tool.NewRegistry()
		if err := r.Register(tools...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/tool")
}
