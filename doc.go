// Package toolshelf is the front door of toolshelf: on-demand tool loading
// for agents that never breaks the prompt cache.
//
// A [Shelf] holds the tools: the program's own, the tools of MCP servers
// (from a servers file in the mcpServers format, or configured in the
// program, in memory or over a transport of the caller's), the search index
// and the tool_search tool. Tools of servers whose exposure is deferred
// wait on the shelf, registered and searchable but not declared, until the
// model loads them.
//
// [Shelf.Agent] starts a conversation with a model — the caller's
// [llm.Model], or the model [AgentConfig.NewModel] builds for a provider
// named in [Provider], one of [Providers]: Anthropic, OpenAI, any Chat
// Completions server, or the offline [Emulator], which runs in process
// with no key — new, resumed from a session file or forked from one,
// optionally with two-phase selection ([SelectConfig]). This package
// holds the provider table but no adapter: New of package
// github.com/toolshelf/toolshelf/adapter builds the provider's model on
// its SDK, so a program that brings its own model links no SDK.
//
// [Agent.Run] runs one prompt. The front door applies the
// rules that keep the provider's prompt cache: a resumed conversation keeps
// the tools its transcript declared (those of servers still connecting stay
// declared as pending), tool_search is declared only when some tool waits
// on the shelf, servers whose tools are declared from the first request are
// waited for (bounded) before it, the mcp_servers section is refreshed
// before every prompt, each call waits for the servers it reaches
// ([tool.Reach]), and every change is declared in the transcript before the
// next request.
//
// A Shelf hosts one conversation at a time: the registry's active set is
// the conversation's, so a second [Shelf.Agent] fails with [ErrBusy] until
// the first is closed. A server that fails to connect is reported to the
// conversation ([NoteServerFailed]); [Agent.Usage] sums the tokens of its
// requests.
//
// Who it is for: Go programs that run an agent over many tools. The
// command line (run, chat, serve, mcp, bench) is built on this package.
package toolshelf
