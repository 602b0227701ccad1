package codemode

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// goja has no memory cap of its own: its objects are ordinary Go values
// on the process's heap. The guard bounds a script by sampling that heap.
//
// Every sampleEvery it reads the bytes of heap objects (live and not yet
// swept garbage; a cheap read, no stop of the world). When they exceed the
// live heap at the script's start by more than the limit, it looks at the
// live heap: the last collection's figure, or, at most every
// gcEvery, a collection it forces. A live heap still more than the limit
// above the start stops the script.
//
// What this guard cannot do, and says so: it sees the whole process, so
// what other goroutines allocate while a script runs counts against the
// script (two scripts at once share one budget); it samples, so a script
// can overshoot by what it allocates in a sample period (one allocation,
// such as a long string built in one step, is seen only after it is
// made); and a forced collection costs the process a garbage-collection
// cycle.
const (
	sampleEvery = 2 * time.Millisecond
	gcEvery     = 20 * time.Millisecond
)

// heap returns the bytes of heap objects and the live heap after the last
// collection, read into the guard's samples.
func (g *memGuard) heap() (objects, live uint64) {
	metrics.Read(g.samples)
	return value(g.samples[0]), value(g.samples[1])
}

func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}

// memGuard watches the heap for one script.
type memGuard struct {
	samples []metrics.Sample
	limit   uint64
	start   uint64 // the live heap when the script started
	lastGC  time.Time
	// peak is the most the live heap grew above start, as seen.
	peak uint64
}

func newMemGuard(limit int64) *memGuard {
	g := &memGuard{limit: uint64(limit),
		samples: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}}
	_, g.start = g.heap()
	return g
}

// over reports whether the live heap has grown past the limit.
func (g *memGuard) over(now time.Time) bool {
	objects, live := g.heap()
	if objects <= g.start+g.limit {
		return false
	}
	if g.grown(live) {
		return true
	}
	if now.Sub(g.lastGC) < gcEvery {
		return false
	}
	g.lastGC = now
	runtime.GC()
	_, live = g.heap()
	return g.grown(live)
}

func (g *memGuard) grown(live uint64) bool {
	if live > g.start {
		g.peak = max(g.peak, live-g.start)
	}
	return live > g.start+g.limit
}
