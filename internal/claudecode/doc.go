// Package claudecode holds what toolshelf's runs of the real Claude Code
// CLI share: the environment that isolates a run from the developer's own
// configuration and from the network, and the lines of its stream-json
// output. The integration tests (internal/cli) and the gateway-pays
// measurement (internal/pays) use it.
package claudecode
