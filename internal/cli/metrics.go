package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/internal/userdir"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tokens"
)

// metricsOff is the --metrics value that disables the metrics log.
const metricsOff = "off"

// defaultMetricsPath returns where run and chat append their metrics:
// $XDG_STATE_HOME/toolshelf/metrics.jsonl, else
// ~/.local/state/toolshelf/metrics.jsonl.
func defaultMetricsPath() (string, error) {
	dir, err := userdir.State() // shared with the MCP client's saved outputs
	if err != nil {
		return "", fmt.Errorf("the metrics log (or name one with --metrics): %w", err)
	}
	return filepath.Join(dir, "metrics.jsonl"), nil
}

// metricsRecorder appends a [tokens.Record] per model request of run and
// chat. It opens the log at the first answer; a log that cannot be opened
// or written is reported once on stderr and the agent goes on without it.
type metricsRecorder struct {
	// api and class are the provider API and the tool class rendered,
	// set when the adapter is built.
	api, class string

	log     *tokens.Log
	counter *tokens.Counter
	off     bool // disabled, or failed once
}

// observeMetrics records the request an agent event closes: at each turn's
// end, the answer's usage and tool calls with the tools the transcript
// declared for it (no declaration is appended between a request and its
// turn's end).
func (r *agentRun) observeMetrics(ev agent.Event) {
	m := &r.metrics
	if ev.Type != agent.EventTurnEnd || ev.Message == nil || ev.Message.Usage == nil || m.off || r.flags.metrics == metricsOff {
		return
	}
	if err := m.open(r); err != nil {
		m.off = true
		fmt.Fprintf(r.e.stderr, "toolshelf: warning: metrics not recorded: %v (--metrics FILE writes elsewhere, --metrics off disables them)\n", err)
		return
	}
	if err := m.log.Append(m.record(r, ev.Message)); err != nil {
		m.off = true
		fmt.Fprintf(r.e.stderr, "toolshelf: warning: metrics not recorded: %v (--metrics off disables them)\n", err)
	}
}

// observeSelection records the selection requests of a two-phase
// selection as one record (strategy "selection"), so the log counts what
// selecting costs.
func (r *agentRun) observeSelection(requests int, u llm.Usage) {
	m := &r.metrics
	if requests == 0 || m.off || r.flags.metrics == metricsOff {
		return
	}
	if err := m.open(r); err != nil {
		m.off = true
		fmt.Fprintf(r.e.stderr, "toolshelf: warning: metrics not recorded: %v (--metrics FILE writes elsewhere, --metrics off disables them)\n", err)
		return
	}
	rec := tokens.Record{Time: time.Now(), API: m.api, Model: r.modelID, Class: m.class, Strategy: "selection",
		Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	if r.session != nil {
		rec.Session = r.session.ID()
	}
	if err := m.log.Append(rec); err != nil {
		m.off = true
		fmt.Fprintf(r.e.stderr, "toolshelf: warning: metrics not recorded: %v (--metrics off disables them)\n", err)
	}
}

// metricsPath is the log --metrics names, or the default one.
func (r *agentRun) metricsPath() (string, error) {
	if r.flags.metrics != "" {
		return r.flags.metrics, nil
	}
	return defaultMetricsPath()
}

// toolUses counts each tool's calls in the metrics log, for ordering the
// selection catalog; nil when there is no log (or it cannot be read).
func (r *agentRun) toolUses() map[string]int {
	if r.flags.metrics == metricsOff {
		return nil
	}
	path, err := r.metricsPath()
	if err != nil {
		return nil
	}
	f, err := os.Open(path)
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
	}
	return uses
}

// open opens the log the flags name, once.
func (m *metricsRecorder) open(r *agentRun) error {
	if m.log != nil {
		return nil
	}
	path, err := r.metricsPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the folder of the metrics log: %w", err)
	}
	counter, err := tokens.Default()
	if err != nil {
		return err
	}
	l, err := tokens.OpenLog(path)
	if err != nil {
		return err
	}
	m.log, m.counter = l, counter
	r.closers = append(r.closers, func() { _ = l.Close() })
	return nil
}

// record builds the record of one answer.
func (m *metricsRecorder) record(r *agentRun, answer *llm.Message) tokens.Record {
	u := answer.Usage
	rec := tokens.Record{
		Time: time.Now(), API: m.api, Model: answer.Model, Class: m.class,
		Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
	}
	if rec.Model == "" {
		rec.Model = r.flags.model
	}
	if r.selection != nil {
		rec.Strategy = "select+lock"
	}
	if r.session != nil {
		rec.Session = r.session.ID()
	}
	for _, t := range r.agent.DeclaredTools() {
		n := m.counter.Tool(t)
		rec.Declared = append(rec.Declared, t.Name)
		rec.DeclaredTokens = append(rec.DeclaredTokens, n)
		rec.ToolTokens += n
	}
	rec.Tools = len(rec.Declared)
	for _, c := range answer.ToolCalls() {
		rec.Called = append(rec.Called, c.Name)
	}
	return rec
}
