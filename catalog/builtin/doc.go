// Package builtin embeds toolshelf's default catalog: the real tool lists of
// 53 public MCP servers (1,564 tools), as they answered tools/list.
// README.md in this folder says where they come from; SHA256SUMS lets a copy
// be checked.
//
// Who it is for: programs and tests that want a realistic shelf without
// connecting to servers.
package builtin
