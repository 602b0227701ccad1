package codemode_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/codemode"
)

// BenchmarkScriptStart runs the smallest script, `return 1`, as a
// conversation does: after the previous script has answered and the
// Runner has made its spare VM (the prelude run), which the script takes
// and binds; the wrapper is compiled and run and the result read.
func BenchmarkScriptStart(b *testing.B) {
	r, _ := newRunner(b, testRegistry(b), codemode.Limits{})
	var took []time.Duration
	for b.Loop() {
		b.StopTimer()
		r.Quiesce()
		b.StartTimer()
		start := time.Now()
		if res := r.Run(context.Background(), `return 1`); res.Err != nil {
			b.Fatal(res.Err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkScriptsBackToBack runs `return 1` scripts one after another
// with no pause: each finds no spare ready and starts a VM of its own
// (the engine and the prelude), while the previous one makes its spare.
func BenchmarkScriptsBackToBack(b *testing.B) {
	r, _ := newRunner(b, testRegistry(b), codemode.Limits{})
	for b.Loop() {
		if res := r.Run(context.Background(), `return 1`); res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}

// BenchmarkTenCalls runs a script that makes ten tool calls, one after
// another, with the spare VM ready: the overhead of the calls.
func BenchmarkTenCalls(b *testing.B) {
	r, _ := newRunner(b, testRegistry(b), codemode.Limits{})
	for b.Loop() {
		b.StopTimer()
		r.Quiesce()
		b.StartTimer()
		res := r.Run(context.Background(), `for (let i = 0; i < 10; i++) await tools.clock({}); return "ok";`)
		if res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}

// BenchmarkCPULoop computes factorial(10) 100,000 times in one script,
// the loop the QuickJS-on-wazero and goja comparisons use (scaled down
// tenfold).
func BenchmarkCPULoop(b *testing.B) {
	r, _ := newRunner(b, testRegistry(b), codemode.Limits{})
	for b.Loop() {
		res := r.Run(context.Background(), `function f(n) { return n <= 1 ? 1 : n * f(n - 1); } let s = 0; for (let i = 0; i < 100000; i++) s += f(10); return s;`)
		if res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}

// BenchmarkToolCalls runs a script that makes 100 calls in a loop.
func BenchmarkToolCalls(b *testing.B) {
	r, _ := newRunner(b, testRegistry(b), codemode.Limits{})
	for b.Loop() {
		res := r.Run(context.Background(), `for (let i = 0; i < 100; i++) await tools.clock({}); return "ok";`)
		if res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}

// BenchmarkReturnRecords returns 1,000 small records, which the runner
// measures and writes as indented JSON.
func BenchmarkReturnRecords(b *testing.B) {
	r, _ := newRunner(b, testRegistry(b), codemode.Limits{})
	for b.Loop() {
		res := r.Run(context.Background(), `return Array.from({length: 1000}, (_, i) => ({id: i, name: "item " + i, tags: ["a", "b"]}));`)
		if res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}
