// Package selection is two-phase tool selection: the model first sees a
// short catalog of the tools (a verb-first one-line brief each) and names
// the tools a task needs; only those are then declared with their full
// definitions.
//
// A [Catalog] is built from the registry's tools; past 30 tools it is
// grouped by namespace, and the model picks groups first, then tools. The
// [Selector] runs the selection requests as a small append-only
// conversation of its own: a fixed head (the instructions), the catalog
// appended as a section update (so a changed pool appends an update and
// the cached prefix survives), then one user message per request. [Parse]
// reads the answer forgivingly (comma or bullet lists, fenced blocks,
// JSON) and resolves names against the catalog. When nothing is selected,
// the fallback ladder asks the user (interactive), retries with groups,
// falls back to tool_search or loads everything, as configured.
//
// A [Lock] keeps a task's selection across turns; [Lock.Reselect] says
// when a new prompt switches task (an explicit switch, or a prompt that
// shares nothing with the task). A [Cache] remembers selections by the
// task's normalised [Features], keyed also by the pool, the model and the
// system prompt, with a lifetime.
//
// Who it is for: programs that pick a task's tools before its first
// request; the root package wires it as AgentConfig.Select.
package selection
