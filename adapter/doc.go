// Package adapter builds the model a toolshelf.Provider names: the adapter
// on the provider's official SDK (package provider/anthropic or
// provider/openai), or, for the offline toolshelf.Emulator, the adapter of
// the model's API answered in process by the provider emulator, with
// toolshelf's stand-in as the model. It is for programs that name a
// provider rather than bring an llm.Model of their own, and is what the
// command line and the benchmark use:
//
//	a, err := shelf.Agent(ctx, toolshelf.AgentConfig{
//		Provider: toolshelf.Provider{Name: toolshelf.Anthropic},
//		NewModel: adapter.New,
//	})
//
// The root package holds the provider table and resolves a provider's
// defaults ([toolshelf.Provider.Resolve]) but builds no model, so a
// program that imports it and brings its own model links neither SDK nor
// the emulator. Importing this package links them all.
package adapter
