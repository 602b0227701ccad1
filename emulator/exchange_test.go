package emulator

import "testing"

// TestCallSeqKeepsCallIDsUnique: a conversation continued on a new
// emulator (a resumed session) already holds calls numbered from 1; the
// reply's calls must not reuse their ids.
func TestCallSeqKeepsCallIDsUnique(t *testing.T) {
	history := []Turn{
		{Role: "user", Text: "go"},
		{Role: "assistant", Calls: []Call{{ID: "toolu_emu_1_1"}, {ID: "toolu_emu_1_2"}}},
		{Role: "tool", CallID: "toolu_emu_1_1"},
		{Role: "assistant", Calls: []Call{{ID: "call_emu_4_0"}}},
		{Role: "assistant", Calls: []Call{{ID: "toolu_01AbC"}, {ID: "call_emu_x_1"}}},
	}
	for _, c := range []struct {
		seq   int
		turns []Turn
		want  int
	}{
		{seq: 1, want: 1},
		{seq: 9, want: 1}, // the emulator's request count does not matter
		{seq: 1, turns: history[:1], want: 1},
		{seq: 1, turns: history[:2], want: 2},
		{seq: 1, turns: history, want: 5}, // call_emu_4_0 is taken
		{seq: 7, turns: history, want: 5},
		{seq: 1, turns: []Turn{{Role: "assistant", Calls: []Call{{ID: "toolu_01X"}}}, {Role: "assistant"}}, want: 3},
	} {
		ex := &Exchange{Seq: c.seq, Turns: c.turns}
		if got := ex.callSeq(); got != c.want {
			t.Errorf("Seq %d with %d turns: callSeq = %d, want %d", c.seq, len(c.turns), got, c.want)
		}
	}
}
