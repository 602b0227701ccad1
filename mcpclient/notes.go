package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// SearchNotes returns a line for each enabled server whose tools a search
// cannot find: one that failed to connect, with the reason, or one still
// connecting. [toolsearch.Searcher.SetNotes] takes it, so that a search
// during or after a failed connection says which server failed rather than
// only "No matching tools found.". The lines are for the model: they name
// the server and the kind of failure, never the command, its arguments or
// the URL, which may carry secrets expanded from the environment.
func (m *Manager) SearchNotes(context.Context) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, s := range m.servers {
		switch s.state {
		case Failed:
			if errors.Is(s.err, errClosed) {
				continue
			}
			out = append(out, fmt.Sprintf("MCP server %q failed to connect (%s); its tools cannot be searched or called.",
				s.cfg.Name, failureReason(s.err)))
		case Connecting:
			out = append(out, fmt.Sprintf("MCP server %q is still connecting; its tools cannot be searched yet.", s.cfg.Name))
		}
	}
	return out
}

// failureReason says why a connection failed, in words that carry nothing
// from the configuration.
func failureReason(err error) string {
	var na *noAnswer
	var exit *exec.ExitError
	switch {
	case errors.As(err, &na):
		return na.Error()
	case errors.Is(err, exec.ErrNotFound):
		return "its command was not found"
	case errors.As(err, &exit):
		return fmt.Sprintf("its process exited with status %d while starting", exit.ExitCode())
	}
	return "the connection failed; toolshelf mcp list shows why"
}
