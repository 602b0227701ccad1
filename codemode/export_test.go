package codemode

import "runtime"

// Quiesce waits until the Runner's scripts, and the spare VMs they make
// when they end, are done: a test that counts goroutines, or a benchmark
// that measures a start with the spare ready, calls it first.
func (r *Runner) Quiesce() {
	for r.tasks.Load() > 0 {
		runtime.Gosched()
	}
}
