// Package integration holds the tests that need the real provider adapters,
// and so both provider SDKs, beside the packages they test: the agent's
// interrupt property and a resumed session with a hole through every
// adapter (from package agent), the emulator against the official SDKs and
// the adapters (from package emulator), and the provider plan's prefix
// invariant, the bridge, draft-04 schemas and the definition check through
// the adapters and the emulator (from package provider).
//
// They live here so that one test binary links the SDKs, not three: the
// test binaries of agent, emulator and provider stay small and link in a
// fraction of the time, which is most of what go test -short spends on
// them. It has no code of its own.
package integration
