// Package agent is toolshelf's loop. Before every request it compares what
// the transcript says the model knows with what the runtime can execute
// (the registry's active tools) and appends the difference as a system
// update; it streams the model's answer, runs the tools it calls (arguments
// validated against each tool's JSON Schema and handlers run as package
// tool does it, BeforeToolCall hooks in between that may wait or block,
// parallel by default, results in call order) and appends their results,
// until the model answers without tool calls.
//
// Guarantees: a tool activated during a tool call (by tool_search, say) is
// declared before the next request, never retroactively; the transcript
// never holds a tool call without its result, whether the answer hit the
// output limit, the stream failed, the run was cancelled or a tool
// panicked; tools whose names are pending in the registry (a resumed
// session whose MCP server has not reconnected yet) keep their declaration
// until they register, so a resume declares no removal — unless the
// declaration is one providers reject (tool.CheckDefinition), which is
// withdrawn; and every result's text is bounded (Config.MaxResultBytes)
// before it enters the transcript.
//
// Who it is for: programs that run their own loop over a [tool.Registry]
// and an [llm.Model]. Most programs start at the root package's
// Shelf.Agent, which builds this loop with sessions, MCP servers and the
// metrics log.
package agent
