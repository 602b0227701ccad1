// Package llm is toolshelf's provider-neutral vocabulary: the messages of a
// transcript (user, assistant, tool result and system update), tool
// declarations, usage, stop reasons, the events of a streamed response and
// the [Model] interface every provider adapter implements.
//
// A transcript is a []Message. System messages are updates: the first is
// the head (the prompt and the initial tools), later ones carry text,
// section patches (an ordered map in which a nil text deletes a section)
// and tool changes (full declarations added, references removed). Tool
// declarations keep their JSON Schema byte for byte, key order included,
// because the transcript compares declarations as canonical bytes.
//
// Nothing here knows a provider's wire format; adapters translate.
//
// Who it is for: every program that uses toolshelf: its own [Model], tests,
// and the adapters.
package llm
