// Package catalog reads catalog files, the tool lists of MCP servers saved
// as JSON, and puts their tools on the shelf.
//
// A catalog file is one JSON object per server, as dumped from tools/list:
//
//	{"server": "github", "package": "...", "version": "...",
//	 "description": "...", "instructions": "...",
//	 "tools": [{"name": ..., "title": ..., "description": ..., "inputSchema": {...},
//	            "annotations": {...}}, ...]}
//
// A plain {"tools": [...]} file is accepted too; the server is then named
// after the file. Bad input never loses good input: a malformed tool is
// reported with the file, its position, its name and the problem, and the
// file's other tools still load; a malformed optional value is reported and
// left out, and its tool still loads. A tool that providers would reject
// (see tool.CheckDefinition) is reported the same way, not loaded, and
// listed in Server.Refused.
//
// The built-in default catalog, the real tool lists of 53 public MCP
// servers, is in package [github.com/toolshelf/toolshelf/catalog/builtin].
//
// Who it is for: programs that load tool lists saved from MCP servers (a
// gateway's or a test's), and the linter.
package catalog
