package toolshelf

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// MetricsError is a failure of the metrics log: it could not be opened or
// written. The conversation goes on without the log, which reports the
// error once through the conversation's Notify.
type MetricsError struct {
	// Path is the log's file.
	Path string
	// Err is what went wrong.
	Err error
}

func (e *MetricsError) Error() string { return fmt.Sprintf("metrics not recorded: %v", e.Err) }

// Unwrap returns the cause.
func (e *MetricsError) Unwrap() error { return e.Err }

// NoteMetrics: the metrics log failed; the conversation goes on without it.
const NoteMetrics NoteKind = "metrics"

// metricsLog appends a [tokens.Record] per model request. It opens the
// file at the first record; a log that cannot be opened or written fails
// once and is off from then on.
type metricsLog struct {
	path string

	mu      sync.Mutex
	log     *tokens.Log
	counter *tokens.Counter
	off     bool
}

// append writes rec, opening the log first; it returns the error that
// turned the log off, once.
func (m *metricsLog) append(rec tokens.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.off {
		return nil
	}
	if err := m.openLocked(); err != nil {
		m.off = true
		return &MetricsError{Path: m.path, Err: err}
	}
	if err := m.log.Append(rec); err != nil {
		m.off = true
		return &MetricsError{Path: m.path, Err: err}
	}
	return nil
}

func (m *metricsLog) openLocked() error {
	if m.log != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return fmt.Errorf("creating the folder of the metrics log: %w", err)
	}
	counter, err := tokens.Default()
	if err != nil {
		return err
	}
	l, err := tokens.OpenLog(m.path)
	if err != nil {
		return err
	}
	m.log, m.counter = l, counter
	return nil
}

func (m *metricsLog) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.log == nil {
		return nil
	}
	err := m.log.Close()
	m.log = nil
	return err
}

// uses counts each tool's calls in the log, for ordering the selection
// catalog; nil without a log (or when it cannot be read).
func (m *metricsLog) uses() map[string]int {
	if m == nil {
		return nil
	}
	f, err := os.Open(m.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	records, _, err := tokens.ReadLog(f)
	if err != nil {
		return nil
	}
	uses := map[string]int{}
	for _, rec := range records {
		for _, c := range rec.Called {
			uses[c]++
		}
		for _, c := range rec.Inner {
			uses[c]++
		}
	}
	return uses
}

// observe counts the request an agent event closes, at each turn's end,
// in the conversation's usage, and records it in the metrics log: the
// answer's usage and tool calls with the tools the transcript declared
// for it (nothing is declared between a request and its turn's end).
//
// The tool calls of the answer's codemode scripts, which the tool results
// carry (codemode.Details), are counted in the same record (Inner), and
// so are their searchTools calls, after them, each as a call of
// tool_search: a search is counted as the model's tool_search calls are.
func (a *Agent) observe(ev agent.Event) {
	if ev.Type == agent.EventTurnEnd && ev.Message != nil && ev.Message.Usage != nil {
		a.count(1, *ev.Message.Usage)
	}
	m := a.shelf.metrics
	if m == nil {
		return
	}
	if ev.Type == agent.EventToolEnd && ev.Call != nil && ev.Call.Name == codemode.Name && ev.Message != nil {
		if d, ok := codemode.ReadDetails(ev.Message.Details); ok {
			a.inner = append(a.inner, d.Calls...)
			a.searches = append(a.searches, d.Searches...)
		}
		return
	}
	if ev.Type != agent.EventTurnEnd {
		return
	}
	inner, searches := a.inner, a.searches
	a.inner, a.searches = nil, nil
	if ev.Message == nil || ev.Message.Usage == nil {
		return
	}
	answer := ev.Message
	u := answer.Usage
	rec := a.record(u)
	rec.Model = answer.Model
	if rec.Model == "" {
		rec.Model = a.model
	}
	if a.sel != nil {
		rec.Strategy = "select+lock"
	}
	counter, err := tokens.Default()
	if err == nil {
		for _, t := range a.loop.DeclaredTools() {
			n := counter.Tool(t)
			rec.Declared = append(rec.Declared, t.Name)
			rec.DeclaredTokens = append(rec.DeclaredTokens, n)
			rec.ToolTokens += n
		}
	}
	rec.Tools = len(rec.Declared)
	for _, c := range answer.ToolCalls() {
		rec.Called = append(rec.Called, c.Name)
	}
	for _, c := range inner {
		rec.Inner = append(rec.Inner, c.Tool)
		rec.InnerTokens += c.ResultTokens
	}
	for range searches {
		rec.Inner = append(rec.Inner, toolsearch.Name)
	}
	a.appendRecord(rec)
}

// observeSelection counts the requests of a two-phase selection in the
// conversation's usage and records them as one record (strategy
// "selection"), so the log counts what selecting costs.
func (a *Agent) observeSelection(requests int, u llm.Usage) {
	a.count(requests, u)
	if a.shelf.metrics == nil || requests == 0 {
		return
	}
	rec := a.record(&u)
	rec.Model, rec.Strategy = a.model, "selection"
	a.appendRecord(rec)
}

// record starts a record of the conversation with a usage.
func (a *Agent) record(u *llm.Usage) tokens.Record {
	rec := tokens.Record{Time: time.Now(), API: a.api, Class: a.class, Servers: a.shelf.mcpFile,
		Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	if a.session != nil {
		rec.Session = a.session.ID()
	}
	return rec
}

func (a *Agent) appendRecord(rec tokens.Record) {
	if err := a.shelf.metrics.append(rec); err != nil {
		a.notify(NoteMetrics, err.Error())
	}
}
