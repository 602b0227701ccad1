//go:build !race

package eval_test

// raceEnabled reports a build with the race detector.
const raceEnabled = false
