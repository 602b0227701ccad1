//go:build !race

package codemode_test

// raceEnabled reports a build with the race detector.
const raceEnabled = false
