// Package transcript holds the pure functions over a transcript
// ([]llm.Message) that make it toolshelf's only state: replaying system
// messages into the current tools, sections and prompt ([State], kept
// incrementally by whoever appends), comparing declarations as canonical
// bytes, computing tool and section changes, declaring the difference
// between the executable tools and what the model was told ([Declare]),
// and the reference's resolution for providers: the collapse that those
// without mid-conversation updates need ([Collapse], [Resolve]) and where a
// provider that can only add tools declares them ([ResolveTools],
// [LastNonAdditive]). How each provider class renders a transcript is
// package provider's.
//
// The semantics follow the reference implementation: within one message
// removals come before additions; a redefinition keeps its position; a
// removal followed by a re-addition in a later message moves the tool to
// the end; a section set to null is deleted.
package transcript
