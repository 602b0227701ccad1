package usage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/tool"
)

// Action is what a [Suggestion] proposes.
type Action string

// The actions of a suggestion.
const (
	// AlwaysLoad declares the tool from a session's first request, so
	// that no search has to find it.
	AlwaysLoad Action = "always-load"
	// Defer leaves a tool declared from the start on the shelf, for
	// tool_search to load when a session needs it.
	Defer Action = "defer"
	// Remove takes a tool ("toolExposure": "hidden") or a whole server
	// ("enabled": false) out of the servers file: the window never
	// called it.
	Remove Action = "remove"
)

// MostShare is the share of sessions from which a tool counts as used in
// most sessions, and so is worth loading always.
const MostShare = 0.5

// Suggestion is one proposed change to a servers file.
type Suggestion struct {
	Action Action `json:"action"`
	// Tool is the model-facing name of the tool; empty when the
	// suggestion is about a whole server.
	Tool string `json:"tool,omitempty"`
	// Server is the server's name in the servers file, when known.
	Server string `json:"server,omitempty"`
	// Saves is the tokens the change saves per session, by the window's
	// means; 0 when it saves none (a server whose tools are deferred
	// costs a connection, not tokens).
	Saves int `json:"saves"`
	// Why says where Saves comes from, in a sentence.
	Why string `json:"why"`
}

// Suggest proposes changes from a report. servers names the servers of the
// servers file; a server none of whose tools the window called is proposed
// for removal. The suggestions come always-load first, then defer, then
// remove, each by the tokens saved, most first, then by name.
//
// The cost model, per session, from the window's means: a round trip is
// one more request, which sends RequestTokens; a declared tool adds its
// Tokens to every request that declares it.
//   - always-load, for a tool called in at least MostShare of the
//     sessions: it saves its round trips (at least one search in each
//     session that had it from the start, so that an applied suggestion
//     stays suggested) and costs its tokens in the requests that did not
//     declare it yet;
//   - defer, for a tool declared from the first request of most sessions
//     but called in fewer than MostShare of them: it saves its tokens in
//     the requests of the sessions that do not call it, and costs one
//     search in each session that does;
//   - remove, for a tool never called: it saves its tokens in the requests
//     that declared it.
func Suggest(r Report, servers []string) []Suggestion {
	var out []Suggestion
	if r.Sessions == 0 {
		return out
	}
	sessions := float64(r.Sessions)
	perSession := float64(r.Requests) / sessions
	calledServer := map[string]bool{}
	for _, t := range r.Tools {
		server := serverOf(t.Name, servers)
		if t.Used > 0 {
			calledServer[server] = true
		}
		s := Suggestion{Tool: t.Name, Server: server}
		switch {
		case t.Used == 0:
			s.Action = Remove
			s.Saves = int(float64(t.Tokens*t.DeclaredRequests) / sessions)
			s.Why = fmt.Sprintf("never called in %s; declared in %s at %d tokens", count(r.Sessions, "session"), count(t.DeclaredRequests, "request"), t.Tokens)
		case t.Share >= MostShare && t.Tokens > 0:
			// A session that declared it from the start (an applied
			// suggestion) would have searched for it at least once.
			searches := t.RoundTrips + min(t.AtStart, t.Used)
			trips := float64(searches) / sessions * float64(r.RequestTokens)
			extra := float64(t.Tokens) * float64(r.Requests-t.DeclaredRequests) / sessions
			if trips <= extra {
				continue
			}
			s.Action, s.Saves = AlwaysLoad, int(trips-extra)
			s.Why = fmt.Sprintf("called in %d of %s after %s (%d tokens a request); declaring its %d tokens from the start costs %d a session",
				t.Used, count(r.Sessions, "session"), count(searches, "search"), r.RequestTokens, t.Tokens, int(extra))
		case t.Share < MostShare && 2*t.AtStart > r.Sessions && t.Tokens > 0:
			kept := float64(t.Tokens) * perSession * (1 - t.Share)
			search := t.Share * float64(r.RequestTokens)
			if kept <= search {
				continue
			}
			s.Action, s.Saves = Defer, int(kept-search)
			s.Why = fmt.Sprintf("declared from the start of %d sessions but called in %d of %d; a search costs %d tokens where it is needed",
				t.AtStart, t.Used, r.Sessions, r.RequestTokens)
		default:
			continue
		}
		out = append(out, s)
	}
	for _, name := range servers {
		if calledServer[name] {
			continue
		}
		saves := 0
		for _, s := range out {
			if s.Action == Remove && s.Server == name {
				saves += s.Saves
			}
		}
		out = append(out, Suggestion{Action: Remove, Server: name, Saves: saves,
			Why: fmt.Sprintf("none of its tools called in %s", count(r.Sessions, "session"))})
	}
	rank := map[Action]int{AlwaysLoad: 0, Defer: 1, Remove: 2}
	slices.SortStableFunc(out, func(a, b Suggestion) int {
		return cmp.Or(rank[a.Action]-rank[b.Action], boolOrder(a.Tool == "", b.Tool == ""), b.Saves-a.Saves,
			strings.Compare(a.Tool, b.Tool), strings.Compare(a.Server, b.Server))
	})
	return out
}

// boolOrder puts false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// serverOf returns the server of servers whose namespace prefixes name
// (mcp__<server>__), the longest when several do; "" when none does.
func serverOf(name string, servers []string) string {
	best := ""
	for _, s := range servers {
		if strings.HasPrefix(name, tool.NamespaceName(s)+"__") && len(s) > len(best) {
			best = s
		}
	}
	return best
}

// ToolName returns the tool's name as its server lists it, for a
// toolExposure entry: the model-facing name without mcp__<server>__. It
// is exact unless the name was shortened or had characters replaced; ok
// is false when the name does not start with the server's prefix.
func ToolName(name, server string) (string, bool) {
	return strings.CutPrefix(name, tool.NamespaceName(server)+"__")
}

// count writes n and a noun, in the plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "h") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
