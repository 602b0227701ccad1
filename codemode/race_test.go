//go:build race

package codemode_test

// raceEnabled reports a build with the race detector, which slows the
// engine (Go code translated from C) about tenfold.
const raceEnabled = true
