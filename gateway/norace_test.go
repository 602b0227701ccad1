//go:build !race

package gateway_test

// raceEnabled reports a test binary built with -race, in which the
// engine runs scripts tens of times slower.
const raceEnabled = false
