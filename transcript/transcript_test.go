package transcript_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/transcript"
)

func tl(name, desc string) llm.Tool {
	return llm.Tool{Name: name, Description: desc, Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func names(ts []llm.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func sys(added []llm.Tool, removed ...string) llm.Message {
	m := llm.Message{Role: llm.RoleSystem, ToolsAdded: added}
	for _, r := range removed {
		m.ToolsRemoved = append(m.ToolsRemoved, llm.ToolRef{Name: r})
	}
	return m
}

// cmpMsgs compares messages treating nil and empty slices alike.
var cmpMsgs = []cmp.Option{cmpopts.EquateEmpty()}

func TestCurrentToolsReplaySemantics(t *testing.T) {
	a, b, c := tl("a", "A"), tl("b", "B"), tl("c", "C")
	tests := []struct {
		name string
		msgs []llm.Message
		want []string
		desc map[string]string
	}{
		{"additions in order", []llm.Message{sys([]llm.Tool{a, b}), sys([]llm.Tool{c})}, []string{"a", "b", "c"}, nil},
		{"redefinition keeps position", []llm.Message{sys([]llm.Tool{a, b}), sys([]llm.Tool{tl("a", "changed")})},
			[]string{"a", "b"}, map[string]string{"a": "changed"}},
		{"removal then later re-add moves to the end", []llm.Message{sys([]llm.Tool{a, b}), sys(nil, "a"), sys([]llm.Tool{a})},
			[]string{"b", "a"}, nil},
		{"remove and add in one message is a redefinition at the end", []llm.Message{sys([]llm.Tool{a, b}), sys([]llm.Tool{tl("a", "new")}, "a")},
			[]string{"b", "a"}, map[string]string{"a": "new"}},
		{"removing an unknown tool is harmless", []llm.Message{sys([]llm.Tool{a}), sys(nil, "zzz")}, []string{"a"}, nil},
		{"non-system messages are ignored", []llm.Message{sys([]llm.Tool{a}), llm.UserText("hi", 1), {Role: "custom"}}, []string{"a"}, nil},
		{"legacy replace clears", []llm.Message{sys([]llm.Tool{a, b}), {Role: llm.RoleSystem, Replace: true, ToolsAdded: []llm.Tool{c}}},
			[]string{"c"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := transcript.CurrentTools(tt.msgs)
			if diff := cmp.Diff(tt.want, names(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, g := range got {
				if d, ok := tt.desc[g.Name]; ok && g.Description != d {
					t.Errorf("%s description %q, want %q", g.Name, g.Description, d)
				}
			}
		})
	}
}

func TestCurrentSystemMessage(t *testing.T) {
	head := llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("base")},
		Sections: llm.Sections{llm.Set("rules", "be kind"), llm.Set("docs", "read docs")}, Timestamp: 0}
	update := llm.Message{Role: llm.RoleSystem, Sections: llm.Sections{llm.Delete("docs"), llm.Set("rules", "be brief"),
		llm.Set("cwd", "/x")}, ToolsAdded: []llm.Tool{tl("a", "A")}, Timestamp: 5}
	more := llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("extra")}, Sections: llm.Sections{llm.Set("docs", "again")}, Timestamp: 9}
	got, ok := transcript.CurrentSystemMessage([]llm.Message{head, llm.UserText("q", 1), update, more})
	if !ok {
		t.Fatal("no system message")
	}
	want := llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("base\n\nextra")},
		Sections:   llm.Sections{llm.Set("rules", "be brief"), llm.Set("cwd", "/x"), llm.Set("docs", "again")},
		ToolsAdded: []llm.Tool{tl("a", "A")}, Timestamp: 0}
	if diff := cmp.Diff(want, got, cmpMsgs...); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := transcript.SystemText(&got); got != "base\n\nextra\n\nbe brief\n\n/x\n\nagain" {
		t.Errorf("SystemText = %q", got)
	}
	if _, ok := transcript.CurrentSystemMessage([]llm.Message{llm.UserText("q", 1)}); ok {
		t.Error("a transcript without system messages has a system message")
	}
}

func TestRenderUpdate(t *testing.T) {
	m := llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("updated guidance")},
		Sections: llm.Sections{llm.Set("skills", "x"), llm.Delete("docs")}}
	want := "updated guidance\n\nUpdated system prompt section \"skills\":\n\nx\n\nRemoved system prompt section \"docs\"."
	if got := transcript.RenderUpdate(&m); got != want {
		t.Errorf("RenderUpdate = %q", got)
	}
	if got := transcript.RenderUpdate(&llm.Message{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{tl("a", "")}}); got != "" {
		t.Errorf("tools-only update renders %q", got)
	}
}

func TestDeclarationEqualityIsKeyOrderSensitive(t *testing.T) {
	x := llm.Tool{Name: "t", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{},"b":{}}}`)}
	y := llm.Tool{Name: "t", Parameters: json.RawMessage(`{"properties":{"a":{},"b":{}},"type":"object"}`)}
	z := llm.Tool{Name: "t", Parameters: json.RawMessage("{ \"type\": \"object\",\n \"properties\": {\"a\":{}, \"b\":{}}}")}
	if x.Equal(y) {
		t.Error("declarations with other key order are equal")
	}
	if !x.Equal(z) {
		t.Error("declarations that differ only in white space are not equal")
	}
}

func TestToolStateChanges(t *testing.T) {
	a, b, c := tl("a", "A"), tl("b", "B"), tl("c", "C")
	added, removed := transcript.ToolStateChanges([]llm.Tool{a, b}, []llm.Tool{c, tl("b", "changed")})
	if diff := cmp.Diff([]string{"c", "b"}, names(added)); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]llm.ToolRef{{Name: "a"}, {Name: "b"}}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
}

func TestDiffSections(t *testing.T) {
	prev := llm.Sections{llm.Set("a", "1"), llm.Set("b", "2"), llm.Set("c", "3")}
	desired := llm.Sections{llm.Set("c", "3"), llm.Set("b", "two"), llm.Set("d", "4")}
	want := llm.Sections{llm.Set("b", "two"), llm.Set("d", "4"), llm.Delete("a")}
	if diff := cmp.Diff(want, transcript.DiffSections(prev, desired)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := transcript.DiffSections(prev, prev); got != nil {
		t.Errorf("no change gave %v", got)
	}
}

// withUpdate is a head, a user message, a mid-conversation update that
// adds a tool and another user message.
func withUpdate() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("base")}, ToolsAdded: []llm.Tool{tl("a", "A")}},
		llm.UserText("q", 1),
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("more")}, ToolsAdded: []llm.Tool{tl("b", "B")}, Timestamp: 2},
		llm.UserText("r", 3),
	}
}

func TestCollapse(t *testing.T) {
	msgs := withUpdate()
	got := transcript.Collapse(msgs)
	if len(got) != 3 || got[0].Role != llm.RoleSystem || got[1].Role != llm.RoleUser || got[2].Role != llm.RoleUser {
		t.Fatalf("collapse = %+v", got)
	}
	if diff := cmp.Diff([]string{"a", "b"}, names(got[0].ToolsAdded)); diff != "" {
		t.Errorf("collapsed tools (-want +got):\n%s", diff)
	}
}

func TestNewHead(t *testing.T) {
	if _, ok := transcript.NewHead("", nil, nil); ok {
		t.Error("an empty head was made")
	}
	h, ok := transcript.NewHead("prompt", nil, []llm.Tool{tl("a", "A")})
	if !ok || h.Timestamp != 0 || llm.ContentText(h.Content, "") != "prompt" || len(h.ToolsAdded) != 1 {
		t.Errorf("head = %+v", h)
	}
}

// TestReplayProperty appends, for random histories of tool sets, the
// declared difference before each request and checks that replaying the
// transcript yields exactly the target set each time, through both the
// incremental state and a full replay.
func TestReplayProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	pool := make([]llm.Tool, 12)
	for i := range pool {
		pool[i] = tl(fmt.Sprintf("t%d", i), fmt.Sprintf("tool %d", i))
	}
	for history := range 300 {
		var msgs []llm.Message
		state := &transcript.State{}
		appendMsg := func(m llm.Message) {
			msgs = append(msgs, m)
			state.Apply(&msgs[len(msgs)-1])
		}
		for step := range 1 + rng.IntN(15) {
			// A random target set in a random order, some tools with a
			// changed definition.
			var target []llm.Tool
			for _, i := range rng.Perm(len(pool)) {
				if rng.IntN(3) == 0 {
					tool := pool[i]
					if rng.IntN(5) == 0 {
						tool.Description = fmt.Sprintf("changed %d", rng.IntN(3))
					}
					target = append(target, tool)
				}
			}
			var pending []llm.Message
			if rng.IntN(3) == 0 {
				// A pending system message with stale tool fields.
				pending = append(pending, sys([]llm.Tool{pool[rng.IntN(len(pool))]}, pool[rng.IntN(len(pool))].Name))
			}
			pending = append(pending, llm.UserText("step", int64(step)))
			for _, m := range transcript.Declare(state, pending, target, int64(step)) {
				appendMsg(m)
			}
			got := state.Tools()
			if added, removed := transcript.ToolStateChanges(got, target); len(added)+len(removed) != 0 {
				t.Fatalf("history %d step %d: state %v, target %v", history, step, names(got), names(target))
			}
			full := transcript.CurrentTools(msgs)
			if diff := cmp.Diff(names(got), names(full), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("history %d step %d: incremental and full replay differ (-inc +full):\n%s", history, step, diff)
			}
			for _, tool := range full {
				if i := indexOf(target, tool.Name); i < 0 || !tool.Equal(target[i]) {
					t.Fatalf("history %d step %d: replayed %s is not the target's", history, step, tool.Name)
				}
			}
		}
	}
}

func indexOf(ts []llm.Tool, name string) int {
	for i, t := range ts {
		if t.Name == name {
			return i
		}
	}
	return -1
}

func TestLateReplace(t *testing.T) {
	msgs := withUpdate()
	if transcript.LateReplace(msgs) {
		t.Error("LateReplace without a replace message")
	}
	legacy := append(slices.Clone(msgs), llm.Message{Role: llm.RoleSystem, Replace: true})
	if !transcript.LateReplace(legacy) {
		t.Error("a replace message after the head is not late")
	}
	head := []llm.Message{{Role: llm.RoleSystem, Replace: true}}
	if transcript.LateReplace(head) || transcript.LateReplace(nil) {
		t.Error("a replace head is not late")
	}
}

func TestLastNonAdditive(t *testing.T) {
	head := sys([]llm.Tool{tl("a", "A")})
	user := llm.UserText("q", 1)
	tests := []struct {
		name      string
		msgs      []llm.Message
		index     int
		available []string
	}{
		{"additions only", []llm.Message{head, user, sys([]llm.Tool{tl("b", "B")})}, -1, nil},
		{"identical redeclaration stays additive (TR-3)", []llm.Message{head, user, sys([]llm.Tool{tl("a", "A"), tl("b", "B")})},
			-1, nil},
		{"removal", []llm.Message{head, user, sys([]llm.Tool{tl("b", "B")}), user, sys(nil, "a"), user},
			4, []string{"b"}},
		{"redefinition keeps its position", []llm.Message{head, user, sys([]llm.Tool{tl("b", "B")}), sys([]llm.Tool{tl("a", "changed")})},
			3, []string{"a", "b"}},
		{"the last of several", []llm.Message{head, sys(nil, "a"), user, sys([]llm.Tool{tl("a", "A")}), sys([]llm.Tool{tl("c", "C")}, "a")},
			4, []string{"c"}},
		{"removing what is not there changes nothing", []llm.Message{head, user, sys(nil, "zzz")}, -1, nil},
	}
	for _, tt := range tests {
		i, avail := transcript.LastNonAdditive(tt.msgs)
		if i != tt.index || !slices.Equal(names(avail), tt.available) {
			t.Errorf("%s: LastNonAdditive = %d %v, want %d %v", tt.name, i, names(avail), tt.index, tt.available)
		}
	}
}

func TestEverAdded(t *testing.T) {
	msgs := []llm.Message{sys([]llm.Tool{tl("a", "A"), tl("b", "B")}), llm.UserText("q", 1),
		sys(nil, "a"), sys([]llm.Tool{tl("c", "C"), tl("b", "changed")})}
	got := transcript.EverAdded(msgs)
	if diff := cmp.Diff([]string{"a", "b", "c"}, names(got)); diff != "" || got[1].Description != "changed" {
		t.Errorf("EverAdded: %v, b = %q (-want +got):\n%s", names(got), got[1].Description, diff)
	}
}
