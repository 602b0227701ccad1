// Package tool defines the shelf's unit, [Tool], and the [Registry] that
// holds every tool the runtime can execute.
//
// A registered tool is not necessarily declared to the model. Its
// [Exposure] decides how it reaches the model: direct and model-only tools
// are active (declared) from registration unless told otherwise, deferred
// and codemode tools wait on the shelf until something (usually the
// tool_search tool) loads them, and hidden tools are unreachable. The
// registry's active set is exactly the set of tools the model should see on
// the next request; the agent loop compares it with what the transcript says
// the model was told and appends the difference.
//
// Every tool is checked once, when it registers, the way the providers
// check tool definitions ([CheckDefinition]): a schema a provider rejects
// or a definition past a size cap would fail every request that declares
// it, so such a tool is refused and the others register. A schema is read
// by the JSON Schema draft it declares; what older drafts write
// differently is translated into 2020-12, the draft providers read
// ([RenderSchema]), and refused only when it cannot be.
//
// The package also owns a tool call once a runtime has found the tool:
// [Validator] checks the arguments against the schema (one compiler for
// the check and the validation), [Run] runs the handler (a panic becomes
// a [*PanicError], a nil result an empty one, an interrupted call an
// [ErrCancelled]), and [Validator.Call] does both. The agent loop, codemode
// scripts and the MCP gateway all call tools this way.
//
// Tools that come from MCP servers get model-facing names from a [Namer]:
// mcp__<server>__<tool>, sanitised to the characters every provider accepts,
// at most 64 characters, with a stable hash suffix where two tools would
// otherwise share a name.
//
// Who it is for: every program with tools of its own, and anything that
// runs a tool call.
package tool
