package cli

import (
	"github.com/toolshelf/toolshelf/internal/usage"
	"github.com/toolshelf/toolshelf/internal/userdir"
	"github.com/toolshelf/toolshelf/tool"
)

// learnedTools returns the tools shelf suggest --apply recorded for the
// servers file mcpFile (absolute, as the shelf has it), which a new
// session declares from its first request. A resumed session gets none:
// it keeps the tools it had.
func (r *agentRun) learnedTools(resumed bool, mcpFile string) []string {
	if resumed {
		return nil
	}
	names := learned(r.e, mcpFile)
	if len(names) > 0 {
		r.note("always loading " + plural(len(names), "tool") + " (shelf suggest --apply; --reset clears)")
	}
	return names
}

// learned returns the tools applied to the servers file mcpFile
// (absolute). A state file that cannot be read is a warning on stderr,
// and the tools are deferred as the servers file says.
func learned(e *env, mcpFile string) []string {
	dir, err := userdir.State()
	if err != nil {
		return nil
	}
	state, err := usage.Load(dir)
	if err != nil {
		printf(e.stderr, "toolshelf: warning: %v; tools are deferred as the servers file says\n", err)
		return nil
	}
	return state.AlwaysLoad(mcpFile)
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
