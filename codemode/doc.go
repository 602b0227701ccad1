// Package codemode runs scripts that call tools: the model writes one
// JavaScript program that chains, loops over and filters tool calls, and
// only what the program returns or logs reaches the model.
//
// Each script runs in a fresh goja VM (pure Go; no cgo) as the body of an
// async function, so top-level await and return work. A script sees no
// filesystem, network, timers, modules or host objects: only the globals
// this package installs — tools.<identifier>(args), searchTools,
// describeTool, describeNamespace and console. The limits (Limits) bound
// its wall time, the heap it grows, its output, its tool calls and how
// many of them run at once; each stops the script with a *LimitError that
// names the limit and its value. The values the runner writes as JSON
// (the script's value, console arguments, tool arguments) are measured
// first: deeper than 100 levels is an error, past the output limit a
// stop. The limits do not reach native work inside one engine
// operation (a backtracking regular expression, one huge allocation), so
// they bound scripts in the common case, not a hostile one.
//
// A [Runner] runs scripts against a tool registry and the search index of
// tool_search ([toolsearch.Searcher]); [Runner.Tool] is the model-facing
// codemode tool, whose description lists the codemode tools by exposure,
// computed once, so that it never changes while servers connect or tools
// load.
//
// Who it is for: programs that let a model run scripts over their tools.
// The root package and the gateway wire it for the codemode exposure.
package codemode
