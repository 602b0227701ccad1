// Package mcptest provides an MCP server for tests: a set of tools that
// echo, report on their process, crash, hang, return big or mixed results
// and fail, served in process or by a test binary that re-executes itself
// as a stdio server; and [Silent], a transport to a server that never
// answers, not even initialize.
//
// A test package that wants the stdio server calls [ServeIfAsked] first in
// its TestMain and configures the server with [Command]; [NewHostileServer]
// and the ServerEnv modes of [ServeHostile] and the like are servers that
// misbehave, to test what reaches the user.
//
// Who it is for: tests of MCP clients, this module's and others'.
package mcptest
