// Package anthropic is the llm.Model adapter for Anthropic's Messages API,
// built on the official Go SDK (its beta Messages endpoint, which carries
// mid-conversation system messages). No SDK type appears in this package's
// API.
//
// A request is rendered from a provider.Plan, which already decided the tool
// support class and its fallbacks; this package only translates the plan
// into the wire format and adds what is Anthropic's own:
//
//   - system: one text block with the head's text.
//   - tools: the head's tools, the JSON Schema of each passed through as
//     declared (key order kept). In the changes class a deferred
//     placeholder tool follows them and the inline-tools beta is sent: the
//     prompt scaffolding Anthropic adds for deferred tools is then part of
//     the cached prefix from the first request, so the first real tool
//     change does not invalidate the cache.
//   - messages: user and assistant turns (thinking replayed only to the
//     model that wrote it), consecutive tool results merged into one user
//     message, tool call ids normalised to Anthropic's pattern. Updates are
//     role "system" messages of text, tool_removal and tool_addition (with
//     inline definitions) blocks, held back until just before the next
//     assistant turn or the end, because a system message may not sit
//     between a tool_use and its tool_result; without mid-conversation
//     system text (bridge only) they travel in place as user text.
//   - cache breakpoints: the system block, the last head tool and the last
//     block of a trailing user or system message, with the configured
//     retention.
//
// The stream is decoded into llm events; call_tool calls of the bridge class
// are unwrapped into the calls they stand for, so the transcript records
// real tools. RequestBody returns the exact body Stream sends, for golden
// tests and for showing what a transcript renders to.
//
// Who it is for: programs that build an Anthropic model themselves; package
// adapter builds it from the root package's provider table.
package anthropic
