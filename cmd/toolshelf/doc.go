// Command toolshelf is the toolshelf command line: an agent that loads
// tools on demand and keeps the prompt cache (run, chat), an MCP gateway
// (serve), and the commands around them (mcp, sessions, search, eval, lint,
// stats, bench, emulate, capabilities, render). Run "toolshelf help" for the
// commands; the work is done by package internal/cli.
package main
