package usage

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/tokens"
)

const servers = "/home/u/project/.toolshelf/mcp.json"

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixture is ten sessions of three requests each. mcp__git__status is
// found by a search and called in eight of them; mcp__git__push is
// declared in every request and never called; a record of another
// servers file and one of no session are left out.
func fixture() []tokens.Record {
	var recs []tokens.Record
	for i := range 10 {
		id := fmt.Sprintf("s%02d", i)
		at := t0.Add(time.Duration(i) * time.Hour)
		rec := func(min int, declared []string, toks []int, called ...string) tokens.Record {
			return tokens.Record{Time: at.Add(time.Duration(min) * time.Minute), Session: id, Servers: servers,
				Input: 500, CacheRead: 1500, Declared: declared, DeclaredTokens: toks, Called: called}
		}
		base, baseTok := []string{"tool_search", "mcp__git__push"}, []int{80, 300}
		withStatus, withTok := append(base[:2:2], "mcp__git__status"), append(baseTok[:2:2], 120)
		if i < 8 {
			recs = append(recs, rec(0, base, baseTok, "tool_search"),
				rec(1, withStatus, withTok, "mcp__git__status"),
				rec(2, withStatus, withTok))
		} else {
			recs = append(recs, rec(0, base, baseTok), rec(1, base, baseTok), rec(2, base, baseTok))
		}
	}
	recs = append(recs,
		tokens.Record{Time: t0, Session: "other", Servers: "/elsewhere/mcp.json", Called: []string{"mcp__git__push"}},
		tokens.Record{Time: t0, Servers: servers, Called: []string{"mcp__git__push"}})
	return recs
}

func TestReport(t *testing.T) {
	got := NewReport(fixture(), servers, Window{})
	want := Report{Servers: servers, Sessions: 10, Requests: 30, RequestTokens: 2000, Unsaved: 1, Tools: []Tool{
		{Name: "mcp__git__status", Used: 8, Share: 0.8, Tokens: 120, DeclaredRequests: 16, RoundTrips: 8},
		{Name: "mcp__git__push", Tokens: 300, DeclaredRequests: 30, AtStart: 10},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

func TestSuggest(t *testing.T) {
	got := Suggest(NewReport(fixture(), servers, Window{}), []string{"git", "notes"})
	// status: 8 searches over 10 sessions at 2,000 tokens a request is
	// 1,600 a session; declaring its 120 tokens in the 14 requests that
	// lacked it costs 168. push: 300 tokens in 3 requests a session.
	want := []Suggestion{
		{Action: AlwaysLoad, Tool: "mcp__git__status", Server: "git", Saves: 1432},
		{Action: Remove, Tool: "mcp__git__push", Server: "git", Saves: 900},
		{Action: Remove, Server: "notes", Saves: 0},
	}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Why" }, cmp.Ignore())); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
	for _, s := range got {
		if s.Why == "" {
			t.Errorf("%+v: no explanation", s)
		}
	}
	if name, ok := ToolName("mcp__git__push", "git"); !ok || name != "push" {
		t.Errorf("ToolName = %q, %v; want push", name, ok)
	}
}

// A tool declared from the start of every session and called in one of
// ten is proposed for deferral.
func TestSuggestDefer(t *testing.T) {
	var recs []tokens.Record
	for i := range 10 {
		var called []string
		if i == 0 {
			called = []string{"mcp__db__query"}
		}
		for j := range 4 {
			recs = append(recs, tokens.Record{Time: t0.Add(time.Duration(10*i+j) * time.Minute), Session: fmt.Sprint(i),
				Input: 1000, Declared: []string{"mcp__db__query"}, DeclaredTokens: []int{400}, Called: called})
		}
	}
	got := Suggest(NewReport(recs, "", Window{}), []string{"db"})
	// 400 tokens × 4 requests × 0.9 of the sessions, less a search of
	// 1,000 tokens in 0.1 of them.
	want := []Suggestion{{Action: Defer, Tool: "mcp__db__query", Server: "db", Saves: 1340}}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Why" }, cmp.Ignore())); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
}

func TestWindow(t *testing.T) {
	recs := fixture()
	// The three latest sessions are s07 (a use) and s08, s09 (none).
	got := NewReport(recs, servers, Window{Sessions: 3})
	if got.Sessions != 3 || got.Tools[0].Name != "mcp__git__status" || got.Tools[0].Used != 1 {
		t.Errorf("last 3 sessions: %d sessions, %+v", got.Sessions, got.Tools)
	}
	// Sessions more than a day before Now are out.
	now := t0.Add(9*time.Hour + 24*time.Hour)
	got = NewReport(recs, servers, Window{Days: 1, Now: now})
	if got.Sessions != 1 {
		t.Errorf("last day: %d sessions, want 1 (s09)", got.Sessions)
	}
	// Sessions after Now are out too.
	if got := NewReport(recs, servers, Window{Now: t0.Add(-time.Hour)}); got.Sessions != 0 || len(got.Tools) != 0 {
		t.Errorf("before every session: %+v", got)
	}
	if got := Suggest(NewReport(nil, servers, Window{}), []string{"git"}); len(got) != 0 {
		t.Errorf("no sessions: %+v, want no suggestion", got)
	}
}

// A tool declared from the start of every session, as an applied
// suggestion makes it, and called in most stays suggested, so that
// applying again keeps it; a name no tool has is left out.
func TestSuggestKeepsAnAppliedTool(t *testing.T) {
	var recs []tokens.Record
	for i := range 4 {
		for j := range 3 {
			var called []string
			if i < 3 && j == 1 {
				called = []string{"mcp__git__status", "mcp__git__\x1b[2J"}
			}
			recs = append(recs, tokens.Record{Time: t0.Add(time.Duration(10*i+j) * time.Minute), Session: fmt.Sprint(i),
				Input: 2000, Declared: []string{"mcp__git__status"}, DeclaredTokens: []int{120}, Called: called})
		}
	}
	rep := NewReport(recs, "", Window{})
	if len(rep.Tools) != 1 {
		t.Fatalf("tools %+v, want mcp__git__status alone", rep.Tools)
	}
	got := Suggest(rep, []string{"git"})
	// 3 sessions of 4 would each have searched once, at 2,000 tokens;
	// the tool is declared in every request already.
	want := []Suggestion{{Action: AlwaysLoad, Tool: "mcp__git__status", Server: "git", Saves: 1500}}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Why" }, cmp.Ignore())); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
}
