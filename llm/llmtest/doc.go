// Package llmtest provides a scripted [llm.Model] for tests: it answers
// each request with the next reply of a script and records the requests.
//
// Who it is for: tests of programs built on toolshelf that need a model.
package llmtest
