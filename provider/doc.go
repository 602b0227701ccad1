// Package provider holds what every provider adapter shares: the
// capability table that maps an API and a model id to a tool support class
// and flags (overridable by configuration), and the Plan that arranges a
// transcript for one request of a class, so that the adapters in
// provider/anthropic and provider/openai only translate it into their wire
// format.
//
// The classes:
//
//   - changes: the head's tools never change; later updates add, remove
//     and redefine tools in place (Anthropic's tool_addition and
//     tool_removal).
//   - additions: tools added later are anchored in place; a removal or
//     redefinition promotes the current set to the top-level list once,
//     after which additions are anchored again.
//   - text: updates are system text in place; the tool list is sent whole.
//   - none: every system message collapses into the head.
//   - bridge: toolshelf's own, for any model: the head declares the
//     initial tools and call_tool and never changes; loaded tools are
//     described in the update's text and called through call_tool, which
//     the adapter unwraps so the transcript records the real tool.
//
// Who it is for: adapter authors, and programs that choose or override a
// model's tool class.
package provider
