package codemode_test

import (
	"context"
	"testing"

	"github.com/toolshelf/toolshelf/codemode"
)

// BenchmarkScriptStart runs the smallest script: a fresh VM with the
// globals installed, the wrapper compiled and run, the result read.
func BenchmarkScriptStart(b *testing.B) {
	r, _ := newRunner(b, testRegistry(b), codemode.Limits{})
	for b.Loop() {
		if res := r.Run(context.Background(), `return 1`); res.Err != nil {
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
