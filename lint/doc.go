// Package lint checks tool definitions the way a model and a search see
// them: whether a description says briefly what the tool does, whether the
// parameter schema spends tokens on what tells the model nothing, whether
// names are consistent and survive sanitising, and whether each tool can be
// found at all by the default ranker among the other tools of the pool.
//
// A schema written for an older JSON Schema draft loads once toolshelf
// has translated it into 2020-12 (tool.RenderSchema); each change the
// translation makes is a finding, since other clients send such a schema
// as it is.
//
// [Run] lints the tools of one or more catalog servers as one pool and
// returns a [Report]: findings (rule, severity, server, tool, parameter path,
// the problem and the fix), counts per rule, the unreachable tools with their
// best rank and what outranks them, and what [Slim] would save. [Rules] lists
// the rules with their ids and severities.
//
// [Slim] rewrites a parameter schema without changing what it accepts:
// restating parameter descriptions, examples and defaults repeated in prose
// go; types, enums, required lists and every other keyword stay, in their
// order. docs/authoring-tools.md explains every rule and why it matters.
//
// Everything is deterministic: findings are sorted by server, tool, rule and
// parameter, and nothing depends on map order.
//
// Who it is for: authors of MCP servers and catalogs who check their tool
// definitions from Go tests; toolshelf lint runs it from the command line.
package lint
