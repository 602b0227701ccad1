// Package codemode runs scripts that call tools: the model writes one
// JavaScript program that chains, loops over and filters tool calls, and
// only what the program returns, logs or adds with text() and image()
// reaches the model.
//
// Each script runs in a fresh QuickJS VM (modernc.org/quickjs: pure Go,
// no cgo) as the body of an async function, so top-level await and
// return work. A script sees no filesystem, network, timers, modules or
// host objects: only the globals this package installs (prelude.js) —
// tools.<identifier>(args), ALL_TOOLS, searchTools, describeTool,
// describeNamespace, store, load, text, image, exit and console — and
// the built-ins, frozen. A first line // @options: {"max_output_tokens":
// N, "timeout_ms": M} sets the script's output tokens and lowers its time
// limit.
//
// The limits (Limits) hold inside the engine: the VM's memory is its own
// and capped by the engine, which refuses an allocation past it; the time
// limit interrupts the interpreter and the regular-expression engine
// alike; recursion, in the script or in String and JSON.stringify, meets
// a stack bound of the engine's. Each limit stops the script with a
// *LimitError that names the limit and its value. A Runner runs at most
// Config.MaxScripts scripts at once; later ones wait, then get ErrBusy.
//
// A [Runner] runs scripts against a tool registry and the search index of
// tool_search ([toolsearch.Searcher]); [Runner.Tool] is the model-facing
// codemode tool, whose description lists the codemode tools by exposure,
// computed once, so that it never changes while servers connect or tools
// load. What scripts store lives in a [Store] that a runtime rebuilds
// from its transcript ([ReplayStore]) and passes in the context
// ([WithStore]).
//
// Who it is for: programs that let a model run scripts over their tools.
// The root package and the gateway wire it for the codemode exposure.
package codemode
