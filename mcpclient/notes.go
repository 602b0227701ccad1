package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
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
			if errors.Is(s.err, ErrStopped) {
				continue
			}
			out = append(out, fmt.Sprintf("MCP server %q failed to connect (%s); its tools cannot be searched or called.",
				s.cfg.Name, failureReason(s.err)))
		case Connecting:
			out = append(out, fmt.Sprintf("MCP server %q is still connecting; its tools cannot be searched yet.", s.cfg.Name))
		case NeedsLogin:
			out = append(out, fmt.Sprintf("MCP server %q needs the user to sign in (toolshelf mcp login %s); its tools cannot be searched or called.", s.cfg.Name, s.cfg.Name))
		}
	}
	return out
}

// Unavailable says, in a line for the model, why the MCP tool named
// toolName cannot be called although a transcript declared it (a resumed
// session's tool that has not registered): no configured server provides
// its namespace, its server is disabled or failed to connect, or the
// server does not list it. It returns "" when there is nothing to say: the
// tool is registered, its server is still connecting (it may yet come), or
// the name is not an MCP tool's. Like [Manager.SearchNotes], it names the
// server and the kind of failure, never its configuration.
func (m *Manager) Unavailable(toolName string) string {
	if _, ok := m.reg.Get(toolName); ok {
		return ""
	}
	servers := m.serversOf(toolName)
	if len(servers) == 0 {
		if ns, ok := Namespace(toolName); ok {
			return fmt.Sprintf("no MCP server configured in this run provides the %s tools", ns)
		}
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := servers[0]
	switch s.state {
	case Disabled:
		return fmt.Sprintf("MCP server %q is disabled in the servers file", s.cfg.Name)
	case Failed:
		return fmt.Sprintf("MCP server %q failed to connect (%s)", s.cfg.Name, failureReason(s.err))
	case NeedsLogin:
		return fmt.Sprintf("MCP server %q needs the user to sign in (toolshelf mcp login %s)", s.cfg.Name, s.cfg.Name)
	case Connected, Disconnected:
		return fmt.Sprintf("MCP server %q does not list it", s.cfg.Name)
	}
	return ""
}

// Provides reports whether a configured server (enabled or not) would
// provide the tool or namespace named name: it is registered as one of its
// tools, or it carries the server's mcp__<server> prefix.
func (m *Manager) Provides(name string) bool { return len(m.serversOf(name)) > 0 }

// Namespace returns the mcp__<server> namespace an MCP tool's name starts
// with ("mcp__memory" for "mcp__memory__read_graph"); ok is false for a
// name that is not of that form.
func Namespace(toolName string) (ns string, ok bool) {
	rest, found := strings.CutPrefix(toolName, "mcp__")
	if !found {
		return "", false
	}
	server, _, found := strings.Cut(rest, "__")
	if !found || server == "" {
		return "", false
	}
	return "mcp__" + server, true
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
