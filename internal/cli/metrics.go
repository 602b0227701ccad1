package cli

import (
	"fmt"
	"path/filepath"

	"github.com/toolshelf/toolshelf/internal/userdir"
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

// metricsPath is the log --metrics names, or the default one. The front
// door appends a record per model request to it (toolshelf.Config.Metrics).
func (r *agentRun) metricsPath() (string, error) {
	if r.flags.metrics != "" {
		return r.flags.metrics, nil
	}
	return defaultMetricsPath()
}

// note prints a line about the run: on stderr in text mode, as a JSON
// event in --json mode.
func (r *agentRun) note(text string) {
	if r.flags.asJSON {
		r.out.json0(map[string]string{"type": "note", "text": text})
		return
	}
	printLine(r.e.stderr, "· "+text)
}
