package codemode_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/tool"
)

// heapObjects is the bytes of heap objects, live or not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// watchHeap samples the heap until stop is closed and returns the peak
// growth over the start.
func watchHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	runtime.GC()
	start := heapObjects()
	go func() {
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := heapObjects(); h > start {
				peak = max(peak, h-start)
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// TestLimitsStopRunawayScripts runs the scripts the limits exist for and
// checks that each stops with the error of its limit, that Go's heap
// stays bounded while it runs, and that no goroutine is left behind (a
// synctest bubble for the scripts that block, goroutine counts for those
// that spin). What a script allocates lives in its VM's own memory,
// outside Go's heap (TestHostileScripts checks the resident set); the
// heap holds what crosses to Go: arguments, results, output.
//
// The figures seen on the development machine (2 cores, a 64 MiB limit):
// Go's heap grew by at most 10.0 MiB (the 10 MB returned) and by under
// 3.3 MiB for every other script. The test fails past four times the
// limit.
func TestLimitsStopRunawayScripts(t *testing.T) {
	var calls atomic.Int64
	hang := tool.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	reg := testRegistry(t,
		tool.Tool{Name: "count", Exposure: tool.Deferred, Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			calls.Add(1)
			return tool.TextResult("ok"), nil
		})},
		tool.Tool{Name: "hang", Exposure: tool.Deferred, Handler: hang})
	// The scripts that other limits stop run with a time limit they never
	// reach (the race detector slows the engine tenfold), those the time limit
	// stops with one of a second.
	limits := codemode.Limits{Timeout: 10 * time.Minute, Memory: 64 << 20, Output: 1 << 20, Calls: 1000}
	r, _ := newRunner(t, reg, limits)
	short := limits
	short.Timeout = time.Second
	rShort, _ := newRunner(t, reg, short)
	for _, c := range []struct {
		name, code string
		limit      codemode.Limit
		err        error
		message    string
	}{
		{name: "infinite loop", code: `while (true) {}`, limit: codemode.LimitTimeout,
			message: "it ran longer than 1s, over its time limit of 1s (Limits.Timeout)"},
		{name: "allocation bomb", code: `const a = []; while (true) { a.push("x".repeat(1 << 20) + a.length); }`, limit: codemode.LimitMemory,
			message: "over its memory limit of 64 MiB (Limits.Memory)"},
		{name: "object bomb", code: `const a = []; while (true) { a.push({i: a.length, s: String(a.length) + "y".repeat(4096)}); }`, limit: codemode.LimitMemory,
			message: "over its memory limit of 64 MiB (Limits.Memory)"},
		{name: "string bomb", code: `let s = "x"; const keep = []; while (true) { s = s + s.slice(0, 1 << 20) + "y"; keep.push(s); }`, limit: codemode.LimitMemory,
			message: "over its memory limit of 64 MiB (Limits.Memory)"},
		{name: "10,000 tool calls", code: `for (let i = 0; i < 10000; i++) { await tools.count({}); } return "done";`, limit: codemode.LimitCalls,
			message: "it made more than 1000 tool calls, over its tool-call limit of 1000 (Limits.Calls)"},
		{name: "10,000 calls at once", code: `await Promise.all(Array.from({length: 10000}, () => tools.count({})));`, limit: codemode.LimitCalls,
			message: "it made more than 1000 tool calls"},
		{name: "10 MB returned", code: `return "x".repeat(10 * 1024 * 1024);`, limit: codemode.LimitOutput,
			message: "it wrote more than 1 MiB of output, over its output limit of 1 MiB (Limits.Output)"},
		{name: "10 MB logged", code: `for (let i = 0; i < 10240; i++) console.log("y".repeat(1024));`, limit: codemode.LimitOutput,
			message: "over its output limit of 1 MiB (Limits.Output)"},
		{name: "promise never settled", code: `await new Promise(() => {}); return "never";`, err: codemode.ErrNeverSettled},
		{name: "call that never returns", code: `await tools.hang({}); return "never";`, limit: codemode.LimitTimeout,
			message: "over its time limit of 1s"},
		{name: "deep recursion", code: `function f(n) { return f(n + 1) + 1; } return f(0);`,
			message: "RangeError: Maximum call stack size exceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if raceEnabled && slowUnderRace[c.name] {
				t.Skip("the race detector slows the engine tenfold: filling 64 MiB takes a minute; TestHostileScripts covers it")
			}
			calls.Store(0)
			stop := make(chan struct{})
			peak := watchHeap(stop)
			run := r
			if c.limit == codemode.LimitTimeout {
				run = rShort
			}
			// Scripts that block run in a synctest bubble, whose end
			// waits for every goroutine the script started and fails
			// if one is left blocked. Those that spin on the CPU (the
			// bubble's clock would not move for them) are checked by
			// counting goroutines.
			var res *codemode.Result
			if spins[c.name] {
				before := runtime.NumGoroutine()
				res = run.Run(context.Background(), c.code)
				run.Quiesce()
				if after := goroutinesAfter(before); after > before {
					buf := make([]byte, 1<<16)
					t.Errorf("%d goroutines before the script, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
				}
			} else {
				synctest.Test(t, func(*testing.T) { res = run.Run(context.Background(), c.code) })
			}
			close(stop)
			grown := <-peak
			t.Logf("peak heap growth %.1f MiB; error: %v", float64(grown)/(1<<20), res.Err)
			if grown > 4*uint64(limits.Memory) {
				t.Errorf("the heap grew by %d MiB, past four times the limit", grown>>20)
			}
			var le *codemode.LimitError
			switch {
			case c.err != nil:
				if !errors.Is(res.Err, c.err) {
					t.Errorf("error %v, want %v", res.Err, c.err)
				}
			case c.limit != "":
				if !errors.As(res.Err, &le) || le.Limit != c.limit {
					t.Errorf("error %v, want the %s limit's", res.Err, c.limit)
				}
			}
			if c.message != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), c.message)) {
				t.Errorf("error %v, want it to say %q", res.Err, c.message)
			}
			if c.limit == codemode.LimitCalls && (len(res.Calls) != limits.Calls || calls.Load() > int64(limits.Calls)) {
				t.Errorf("%d calls recorded, %d made; want at most %d", len(res.Calls), calls.Load(), limits.Calls)
			}
			if !strings.HasPrefix(res.Text(), "Error: ") {
				t.Errorf("the model's text does not start with the error: %.200q", res.Text())
			}
		})
	}
}

// slowUnderRace names the cases that take tens of seconds under the race
// detector.
var slowUnderRace = map[string]bool{"allocation bomb": true, "object bomb": true, "10 MB returned": true}

// spins names the cases whose scripts run on the CPU until a limit
// stops them; they make no tool calls, so the only goroutine Run starts
// is its watcher.
var spins = map[string]bool{"infinite loop": true, "allocation bomb": true, "object bomb": true, "string bomb": true}

// goroutinesAfter returns the number of goroutines once those that have
// finished their work had the chance to exit: it yields until the count
// is down to want, or a thousand times. A goroutine still blocked is
// counted whatever the yields.
func goroutinesAfter(want int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 1000 && n > want; i++ {
		runtime.Gosched()
		n = runtime.NumGoroutine()
	}
	return n
}

// TestScriptAfterAStopRuns: a runner keeps working after its scripts hit
// their limits.
func TestScriptAfterAStopRuns(t *testing.T) {
	timeout := 50 * time.Millisecond
	if raceEnabled {
		timeout = 2 * time.Second // the race detector slows the engine tenfold
	}
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{Timeout: timeout})
	if res := r.Run(context.Background(), `while (true) {}`); res.Err == nil {
		t.Fatal("the loop was not stopped")
	}
	if res := r.Run(context.Background(), `return await tools.clock({})`); res.Err != nil || res.Value != "noon" {
		t.Errorf("%q, %v", res.Value, res.Err)
	}
}

// TestValuesTheRunnerWritesAreBounded: the values the runner turns into
// JSON itself (the script's value, console arguments, tool arguments) are
// measured first, in the VM, so a value nested 200,000 deep or a sparse
// array whose JSON would take gigabytes fails with a clear error instead
// of running natively past every limit (the deep value used to end the
// process: its indented JSON grows with the square of the depth).
func TestValuesTheRunnerWritesAreBounded(t *testing.T) {
	reg := testRegistry(t, tool.Tool{Name: "count", Exposure: tool.Deferred,
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("ok"), nil
		})})
	r, _ := newRunner(t, reg, codemode.Limits{Timeout: 10 * time.Minute, Memory: 256 << 20, Output: 1 << 20})
	const deep = `let deep = {}; for (let i = 0; i < 200000; i++) deep = {deep};`
	for _, c := range []struct {
		name, code string
		limit      codemode.Limit // the limit that stops the script, if any
		err        string         // what the script's error says
		value, log string         // the value, and what a console line says
	}{
		{name: "deep value returned", code: deep + `return deep;`,
			err: "the script's value is nested deeper than 100 levels"},
		{name: "sparse array returned", code: `return new Array(2 ** 30);`, limit: codemode.LimitOutput,
			err: "it wrote more than 1 MiB of output"},
		{name: "deep value logged", code: deep + `console.log("v", deep); return "ok";`,
			value: "ok", log: "v [a value nested deeper than 100 levels]"},
		{name: "sparse array logged", code: `console.log(new Array(2 ** 30)); return "ok";`, limit: codemode.LimitOutput,
			err: "it wrote more than 1 MiB of output"},
		{name: "deep argument", code: deep + `try { await tools.count(deep); } catch (e) { return e.message; }`,
			value: "the argument of tools.count is nested deeper than 100 levels"},
		{name: "argument over 16 MiB", code: `try { await tools.count({a: "x".repeat(17 << 20)}); } catch (e) { return e.message; }`,
			value: "the arguments of tools.count are over 16 MiB as JSON"},
		{name: "99 levels returned", code: `let v = 1; for (let i = 0; i < 99; i++) v = [v]; return JSON.stringify(v).length;`,
			value: "199"},
		{name: "99 levels written", code: `let v = 1; for (let i = 0; i < 99; i++) v = [v]; console.log(v); return v;`,
			log: "[[[[", value: "[\n  [\n"},
		{name: "circular value", code: `const o = {}; o.self = o; return o;`, err: "circular"},
		// What stringify writes is what is measured: after toJSON, through
		// proxies, each getter read once, wrappers as primitives.
		{name: "getter that overflows the stack", code: `return {get a() { const f = () => f(); return f(); }};`,
			err: "Maximum call stack size exceeded"},
		{name: "toJSON returning a deep value", code: deep + `return {toJSON() { return deep; }};`,
			err: "the script's value is nested deeper than 100 levels"},
		{name: "toJSON read once", code: deep + `let n = 0; return {toJSON() { return n++ ? deep : 1; }};`, value: "1"},
		{name: "proxy over a sparse array", code: `return new Proxy(new Array(2 ** 30), {});`, limit: codemode.LimitOutput,
			err: "it wrote more than 1 MiB of output"},
		{name: "toJSON that logs", code: `return {toJSON() { console.log({a: [1]}); return {b: [2]}; }};`,
			log: `{"a":[1]}`, value: "{\n  \"b\": [\n    2"},
		{name: "string wrapper", code: `return [new String("x".repeat(300000))];`, value: "[\n  \"xxx"},
		{name: "numbers under the limit", code: `return Array.from({length: 100000}, (_, i) => i % 10);`, value: "[\n  0,\n  1,"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := r.Run(t.Context(), c.code)
			var le *codemode.LimitError
			switch {
			case c.err == "" && res.Err != nil:
				t.Fatalf("error %v", res.Err)
			case c.err != "" && (res.Err == nil || !strings.Contains(strings.ToLower(res.Err.Error()), strings.ToLower(c.err))):
				t.Fatalf("error %v, want it to say %q", res.Err, c.err)
			case c.limit != "" && (!errors.As(res.Err, &le) || le.Limit != c.limit):
				t.Fatalf("error %v, want the %s limit's", res.Err, c.limit)
			}
			if !strings.HasPrefix(res.Value, c.value) {
				t.Errorf("value %.100q, want it to start with %q", res.Value, c.value)
			}
			if c.log != "" && (len(res.Logs) != 1 || !strings.HasPrefix(res.Logs[0].Text, c.log)) {
				t.Errorf("logs %.200v, want one starting with %q", res.Logs, c.log)
			}
		})
	}
}
