// Package transcript holds the pure functions over a transcript
// ([]llm.Message) that make it toolshelf's only state: replaying system
// messages into the current tools, sections and prompt ([State], kept
// incrementally by whoever appends), comparing declarations as canonical
// bytes, computing tool and section changes, declaring the difference
// between the executable tools and what the model was told ([Declare]),
// and the facts a provider plan is built from: the collapse that a
// provider without mid-conversation updates needs ([Collapse],
// [LateReplace]) and the last change that was not an addition
// ([LastNonAdditive]). Which tools a request declares, and where, is
// resolved in one place, package provider's Build.
//
// The semantics follow the reference implementation: within one message
// removals come before additions; a redefinition keeps its position; a
// removal followed by a re-addition in a later message moves the tool to
// the end; a section set to null is deleted.
//
// Who it is for: adapter authors, and tools that read transcripts (render,
// replay).
package transcript
