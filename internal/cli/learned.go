package cli

import (
	"github.com/toolshelf/toolshelf/internal/usage"
	"github.com/toolshelf/toolshelf/internal/userdir"
	"github.com/toolshelf/toolshelf/tool"
)

// learnedTools returns the tools shelf suggest --apply recorded for the
// servers file mcpFile (absolute, as the shelf has it), which a new
// session declares from its first request. A resumed session gets none:
// it keeps the tools it had. A state file that cannot be read is a
// warning, and the session defers as the servers file says.
func (r *agentRun) learnedTools(resumed bool, mcpFile string) []string {
	if resumed {
		return nil
	}
	dir, err := userdir.State()
	if err != nil {
		return nil
	}
	state, err := usage.Load(dir)
	if err != nil {
		printf(r.e.stderr, "toolshelf: warning: %v; tools are deferred as the servers file says\n", err)
		return nil
	}
	names := state.AlwaysLoad(mcpFile)
	if len(names) > 0 {
		r.note("always loading " + plural(len(names), "tool") + " (shelf suggest --apply; --reset clears)")
	}
	return names
}

// activateOnce returns an Adjust step that activates names at the first
// prompt only, so the set is decided when the session starts and never
// changes in its middle; names whose server has not registered them by
// then stay on the shelf.
func activateOnce(names []string) func(*tool.Registry) {
	return func(reg *tool.Registry) {
		if len(names) > 0 {
			reg.Activate(names...)
			names = nil
		}
	}
}
