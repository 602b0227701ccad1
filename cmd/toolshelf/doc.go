// Command toolshelf is the toolshelf command line: search the tool shelf and
// evaluate its retrieval. Run "toolshelf help" for the commands; the work is
// done by package internal/cli.
package main
