package openai

import "testing"

func TestShortHash(t *testing.T) {
	// The expected values come from the reference algorithm (pi's
	// packages/ai/src/utils/hash.ts, as pi-behaviour §6.2 gives it) run in
	// JavaScript (node v20), whose strings are UTF-16: the non-BMP inputs
	// check that surrogate pairs are hashed as two code units.
	tests := []struct{ in, want string }{
		{"", "k4n83c7h0j2b"},
		{"a", "m8735310ae7sx"},
		{"system:2:write", "crxpb21e2m53w"},
		{"system:1:late_tool", "uz9s1ywa62uw"},
		{"system:2:late_tool", "1x3ncrr1tyw2uk"},
		{"system:3:alpha,beta,gamma", "1l0eytzjawhx6"},
		{"system:12:mcp__github__create_issue,mcp__slack__post_message", "l1z4bj1rprdqa"},
		{"héllo wörld", "1slrdvn1t61j5h"},
		{"日本語のツール", "1oq5bdt1uk1lk"},
		{"emoji 😀 tool", "1ggsyjb11nk6eh"},
		{"𝄞𝄞", "1e5ki5vkowf8u"},
	}
	for _, tt := range tests {
		if got := shortHash(tt.in); got != tt.want {
			t.Errorf("shortHash(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestToolLoadCallID(t *testing.T) {
	// The reference's seed is "system:<index>:<names joined by ,>".
	if got, want := toolLoadCallID(2, []string{"late_tool"}), "toolshelf_load_1x3ncrr1tyw2uk"; got != want {
		t.Errorf("toolLoadCallID = %q, want %q", got, want)
	}
	if got, want := toolLoadCallID(3, []string{"alpha", "beta", "gamma"}), "toolshelf_load_1l0eytzjawhx6"; got != want {
		t.Errorf("toolLoadCallID = %q, want %q", got, want)
	}
}
