// Package standin holds stand-in models for the emulator (package
// emulator): responders that play a model which knows toolshelf's
// conventions — the bridge's call_tool and its text declarations,
// tool_search results, two-phase selection prompts — so an agent can run
// end to end offline: the front door's offline provider (toolshelf.Emulator,
// built by package adapter; the command line's --provider emulator) and the
// benchmark.
//
// Scout is the offline provider's model. Offered reads what one request
// puts in the model's reach, ExampleArguments makes arguments from a
// tool's schema and UnwrapCall sees through call_tool; the benchmark's
// oracle is built on them.
//
// These helpers live apart from the emulator so that the emulator, which
// checks the adapters' requests, depends on nothing it checks. The package
// is internal: programs reach Scout through the Emulator provider, whose
// model package adapter builds.
package standin
