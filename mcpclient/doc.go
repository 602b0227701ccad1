// Package mcpclient connects toolshelf to MCP servers and puts their tools
// on the shelf.
//
// [LoadConfig] reads mcp.json files in the shape Claude Desktop, Cursor and
// Claude Code write ({"mcpServers": {"name": {...}}}; VS Code's {"servers":
// ...} too), with toolshelf's keys for how the tools reach the model
// (exposure, toolExposure, alwaysLoad), a description, enabled and a call
// timeout. Problems are collected, each naming the file, the server and the
// fix.
//
// A [Manager] connects every enabled server in the background, over stdio
// (a child process) or streamable HTTP, and registers each server's tools
// in a [tool.Registry] under the model-facing names of a [tool.Namer]
// (mcp__<server>__<tool>), with the server's namespace, the tools'
// annotations and a handler that calls through the session. Listed tools go
// through package catalog, so their schemas are normalised the same way and
// a malformed tool is skipped (and logged) without losing the others. When a
// server announces that its tool list changed, the list is fetched again and
// registered again: unchanged tools are re-registered identically, changed
// ones replace their definition, and tools that disappeared are
// re-registered as hidden. Notifications that arrive while a refresh runs
// cost one more refresh, however many there are.
//
// The agent's command line uses the Manager at three points. Before the
// first prompt, [Manager.WaitDirect] waits a bounded time for servers whose
// tools are declared up front. Before each tool call, [Manager.WaitFor]
// waits for the servers the call depends on: all of them for tool_search,
// the tool's own server for an MCP tool. And [Manager.Section] renders the
// mcp_servers system prompt section, which lists the servers whose tools
// are loaded on demand; [Manager.OnChange] says when it may have changed.
//
// Calls never fail with a Go error for a server's misbehaviour: a server
// that is down, crashes during a call or does not answer within its timeout
// yields an error result that says so, and the next call reconnects. Text
// outputs longer than [MaxOutputBytes] are cut in the middle and saved
// whole to a file only the user can read.
//
// An HTTP server that asks for MCP authorization (OAuth 2.1) is signed in
// to on the SDK's auth handlers ([OAuthConfig]). [Options.Authorize] shows
// a person the sign-in URL; without it the server is [NeedsLogin] until
// [Manager.Login] (toolshelf mcp login) stores a token. Tokens are kept in
// a private folder ([Options.TokenDir]), refreshed, and redacted from
// every message about the server.
//
// The MCP SDK's types do not appear in this package's API.
//
// Who it is for: programs that put MCP servers' tools on a [tool.Registry]
// themselves; the root package's Shelf does this from a servers file.
package mcpclient
