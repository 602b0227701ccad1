// Package gateway serves a toolshelf shelf as one MCP server in front of
// many: any MCP client (Claude Code, Cursor, Codex, VS Code, …) gets one
// index over every upstream server and a tool list that never changes
// under its prompt cache.
//
// A [Gateway] offers surfaces, chosen by the operator, never by sniffing
// the client:
//
//   - [Meta] (the default): a fixed tools/list of tool_search and call_tool
//     with static descriptions that name no tool, server or count, so the
//     list is byte-identical for the life of the process whatever connects,
//     loads, changes or fails upstream. tool_search returns the found tools'
//     definitions as text; call_tool repairs the common malformations of
//     its arguments, then validates them against the target's schema and
//     runs it as package tool does (tool.Validator.Call), a handler's panic
//     answered as an error result.
//   - [Direct]: every upstream tool, typed, named as the shelf names them,
//     for clients that defer tools themselves, kept in step with upstream
//     changes (tools/list_changed). Its first tools/list waits, at most
//     [FirstListWait], for the servers still connecting, so that a
//     client that lists once at start sees their tools.
//   - [Codemode]: a fixed tools/list of tool_search and code: code runs a
//     JavaScript script (package codemode) in which the upstream tools are
//     functions, under limits on time, memory, output and calls, and only
//     what the script logs and returns goes back to the client. Its
//     description lists the configured servers, known before any
//     connects; a script waits for the servers its code names (all of them
//     when it searches), and the client's cancellation or disconnection
//     stops it. The values a script stores (store) are its client
//     session's, which its later scripts load; over HTTP, which keeps no
//     session, they last for the one script.
//
// Beyond those stored values, the surfaces keep no state per client: the
// index is built once for all clients and kept in step with upstream list
// changes and reconnects, so any number of replicas behind a load
// balancer answer any request. Over
// HTTP the gateway is a stateless streamable HTTP handler that serves both
// protocol generations (2025-11-25 clients that initialize, and 2026-07-28
// clients without sessions). Tools hidden by the servers file
// ("toolExposure": {"delete_*": "hidden"}) are denied on every surface.
// Schemas are shown to clients in the JSON Schema 2020-12 form providers
// get (tool.RenderSchema), since a client declares them to its model as
// they are.
//
// Every surface also shows the upstream servers' prompts (named
// mcp__<server>__<prompt>, like tools), resources and resource templates
// (under toolshelf://<server>/<upstream URI>), follows their list_changed
// notifications and sends completion/complete to the server that owns the
// prompt or template.
//
// Who it is for: programs that serve a shelf to MCP clients (toolshelf
// serve is one).
package gateway
