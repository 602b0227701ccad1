package usage

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
)

// The window's defaults: the last DefaultSessions sessions of the last
// DefaultDays days.
const (
	DefaultSessions = 50
	DefaultDays     = 30
)

// searchName is the model-facing name of tool_search, whose calls are the
// round trips a deferred tool costs.
const searchName = "tool_search"

// serverPrefix starts the names of MCP servers' tools, the only tools a
// servers file configures and so the only ones a report covers.
const serverPrefix = "mcp__"

// Window bounds the records a report reads: the last Sessions sessions
// whose last request is at most Days days before Now. A zero or negative
// Sessions or Days means its default; a zero Now means the latest record's
// time, so that a report of an old log still shows its last sessions.
type Window struct {
	Sessions int
	Days     int
	Now      time.Time
}

// Report is what the sessions of one servers file in a window did with
// their tools.
type Report struct {
	// Servers is the servers file the report covers ("" for sessions
	// without one).
	Servers string `json:"servers"`
	// Sessions counts the sessions in the window, Requests their
	// requests.
	Sessions int `json:"sessions"`
	Requests int `json:"requests"`
	// RequestTokens is the mean input tokens of a request (cache reads
	// and writes included): what one more round trip sends.
	RequestTokens int `json:"requestTokens"`
	// Unsaved counts the records of the servers file left out because
	// they belong to no saved session (run --no-session, the gateway).
	Unsaved int `json:"unsaved"`
	// Tools are the servers' tools the window's sessions declared or
	// called, the most used first, then by name.
	Tools []Tool `json:"tools"`
}

// Tool is what the window's sessions did with one tool.
type Tool struct {
	// Name is the model-facing name (mcp__server__tool).
	Name string `json:"name"`
	// Used counts the sessions that called it, Share their part of the
	// window's sessions.
	Used  int     `json:"used"`
	Share float64 `json:"share"`
	// Tokens is its definition tokens (o200k) as the records declared
	// it, 0 when it was never declared.
	Tokens int `json:"tokens"`
	// DeclaredRequests counts the window's requests that declared it;
	// AtStart the sessions that declared it from their first request.
	DeclaredRequests int `json:"declaredRequests"`
	AtStart          int `json:"atStart"`
	// RoundTrips counts, over the sessions that called it, the
	// tool_search calls made before the first request that declared it:
	// the searches its deferral cost.
	RoundTrips int `json:"roundTrips"`
}

// session is one session's records, in log order.
type session struct {
	id      string
	last    time.Time
	records []tokens.Record
}

// NewReport summarizes the records of the servers file servers within w.
// Records of other servers files, and of no saved session, are left out.
func NewReport(records []tokens.Record, servers string, w Window) Report {
	w = w.withDefaults(records)
	rep := Report{Servers: servers, Tools: []Tool{}}
	byID := map[string]*session{}
	var order []*session
	for _, r := range records {
		if r.Servers != servers {
			continue
		}
		if r.Session == "" {
			rep.Unsaved++
			continue
		}
		s := byID[r.Session]
		if s == nil {
			s = &session{id: r.Session}
			byID[r.Session] = s
			order = append(order, s)
		}
		s.records = append(s.records, r)
		if r.Time.After(s.last) {
			s.last = r.Time
		}
	}
	oldest := w.Now.AddDate(0, 0, -w.Days)
	order = slices.DeleteFunc(order, func(s *session) bool { return s.last.Before(oldest) || s.last.After(w.Now) })
	// The latest sessions first; ties by id, so the window never depends
	// on the order of a map.
	slices.SortFunc(order, func(a, b *session) int {
		return cmp.Or(b.last.Compare(a.last), strings.Compare(a.id, b.id))
	})
	if len(order) > w.Sessions {
		order = order[:w.Sessions]
	}
	tools := map[string]*Tool{}
	get := func(name string) *Tool {
		t := tools[name]
		if t == nil {
			t = &Tool{Name: name}
			tools[name] = t
		}
		return t
	}
	input := 0
	for _, s := range order {
		rep.Sessions++
		firstDeclared := map[string]int{} // tool → index of its first declaring record
		searchesBefore := map[string]int{}
		searches := 0
		called := map[string]bool{}
		for i, r := range s.records {
			rep.Requests++
			input += r.TotalInput()
			for j, name := range r.Declared {
				if !serverTool(name) {
					continue
				}
				t := get(name)
				t.DeclaredRequests++
				if j < len(r.DeclaredTokens) {
					t.Tokens = r.DeclaredTokens[j]
				}
				if _, ok := firstDeclared[name]; !ok {
					firstDeclared[name] = i
					searchesBefore[name] = searches
					if i == 0 {
						t.AtStart++
					}
				}
			}
			for _, name := range slices.Concat(r.Called, r.Inner) {
				switch {
				case name == searchName:
					searches++
				case serverTool(name):
					get(name)
					if _, ok := firstDeclared[name]; !ok {
						// Called without being declared: from a
						// script, or before the log knew.
						firstDeclared[name] = i
						searchesBefore[name] = 0
					}
					called[name] = true
				}
			}
		}
		for name := range called {
			t := tools[name]
			t.Used++
			t.RoundTrips += searchesBefore[name]
		}
	}
	if rep.Requests > 0 {
		rep.RequestTokens = input / rep.Requests
	}
	for _, t := range tools {
		if rep.Sessions > 0 {
			t.Share = float64(t.Used) / float64(rep.Sessions)
		}
		rep.Tools = append(rep.Tools, *t)
	}
	slices.SortFunc(rep.Tools, func(a, b Tool) int { return cmp.Or(b.Used-a.Used, strings.Compare(a.Name, b.Name)) })
	return rep
}

// serverTool reports whether name is a server's tool name, the only names
// a report keeps: a log line may hold anything.
func serverTool(name string) bool {
	return strings.HasPrefix(name, serverPrefix) && tool.ValidName(name)
}

// withDefaults fills in the window's zero fields.
func (w Window) withDefaults(records []tokens.Record) Window {
	if w.Sessions <= 0 {
		w.Sessions = DefaultSessions
	}
	if w.Days <= 0 {
		w.Days = DefaultDays
	}
	if w.Now.IsZero() {
		for _, r := range records {
			if r.Time.After(w.Now) {
				w.Now = r.Time
			}
		}
	}
	return w
}
