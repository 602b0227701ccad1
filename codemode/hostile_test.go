package codemode_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/tool"
)

// hostile are the scripts a script's limits exist for, each with the
// limit that must stop it (none: it fails with a script error) and what
// its error says.
var hostile = []struct {
	name, code string
	limit      codemode.Limit
	says       string
}{
	{"infinite loop", `while (true) {}`, codemode.LimitTimeout, "over its time limit of 1s"},
	{"backtracking regexp", `return /^(a+)+(?!x)$/.test("a".repeat(26) + "b");`, codemode.LimitTimeout, "over its time limit of 1s"},
	{"String of a value 200,000 deep", `let a = []; for (let i = 0; i < 200000; i++) a = [a]; return String(a);`, "", "Maximum call stack size exceeded"},
	{"JSON.stringify of a value 200,000 deep", `let o = {}; for (let i = 0; i < 200000; i++) o = {o}; return JSON.stringify(o);`, "", "Maximum call stack size exceeded"},
	{"new Array(2**28).fill(0)", `return new Array(2 ** 28).fill(0).length;`, codemode.LimitMemory, "over its memory limit of 64 MiB"},
	{"Array.from({length: 2**27})", `return Array.from({length: 2 ** 27}).length;`, codemode.LimitMemory, "over its memory limit of 64 MiB"},
	{"string doubling to 1 GiB", `let s = "a"; for (let i = 0; i < 30; i++) s += s; return s.length;`, codemode.LimitMemory, "over its memory limit of 64 MiB"},
	{"string doubling, flattened", `let s = "a"; for (let i = 0; i < 30; i++) { s += s; s.charCodeAt(s.length - 1); } return s.length;`, codemode.LimitMemory, "over its memory limit of 64 MiB"},
	{"indexOf over an array-like of length 2**40", `return Array.prototype.indexOf.call({length: 2 ** 40}, 1);`, codemode.LimitMemory, "more elements than its memory could hold"},
	{"join of a sparse array of length 2**32 - 1", `const a = []; a.length = 2 ** 32 - 1; return a.join("").length;`, codemode.LimitMemory, "more elements than its memory could hold"},
	{"JSON.stringify of a sparse array of length 2**24", `return JSON.stringify(new Array(2 ** 24)).length;`, codemode.LimitTimeout, "over its time limit of 1s"},
	{"10,000 pending promises", `await Promise.all(Array.from({length: 10000}, () => new Promise(() => {})));`, "", "never settled"},
	{"10,000 tool calls", `for (let i = 0; i < 10000; i++) await tools.count({}); return "done";`, codemode.LimitCalls, "over its tool-call limit of 1000"},
}

// rss returns the process's resident set, in bytes, and false where
// /proc does not tell it.
func rss() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// checkHostile checks one hostile script's result: stopped by its limit
// (or failed with its error), within what its time limit allows.
//
// A script that works towards its memory or stack bound may reach its
// time limit first on a busy machine (beside the others, or under the
// race detector, which slows the engine tenfold): then the time limit's
// error is its limit's too. The log says which limit stopped each.
func checkHostile(t *testing.T, name string, res *codemode.Result, took time.Duration, limit codemode.Limit, says string) {
	t.Helper()
	var le *codemode.LimitError
	timedOut := errors.As(res.Err, &le) && le.Limit == codemode.LimitTimeout
	switch {
	case res.Err == nil:
		t.Errorf("%s: returned %.100q, want an error", name, res.Value)
	case timedOut:
	case limit != "" && (!errors.As(res.Err, &le) || le.Limit != limit):
		t.Errorf("%s: error %v, want the %s limit's", name, res.Err, limit)
	case !strings.Contains(res.Err.Error(), says):
		t.Errorf("%s: error %v, want it to say %q", name, res.Err, says)
	}
	// Each ends within 2 s of a 1 s time limit; the race detector slows
	// the engine about tenfold, and so the work a script does before
	// its memory or stack limit, so there the bound is only reported.
	if took > 2*time.Second && !raceEnabled {
		t.Errorf("%s: took %v, want at most 2s", name, took)
	}
	t.Logf("%s: %v: %v", name, took.Round(time.Millisecond), firstLine(res.Err))
}

func firstLine(err error) string {
	if err == nil {
		return "<nil>"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// TestHostileScripts runs each hostile script with a 1 s time limit and a
// 64 MiB memory limit, alone and then all at once beside a well-behaved
// script: each ends with its limit's error within 2 s, the process stays
// under 1 GiB resident, and the well-behaved script returns its result.
func TestHostileScripts(t *testing.T) {
	reg := testRegistry(t, tool.Tool{Name: "count", Exposure: tool.Deferred,
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("ok"), nil
		})})
	limits := codemode.Limits{Timeout: time.Second, Memory: 64 << 20}
	r, err := codemode.New(codemode.Config{Registry: reg, Limits: limits, MaxScripts: len(hostile) + 1})
	if err != nil {
		t.Fatal(err)
	}
	// The well-behaved script gets more time under the race detector,
	// which slows the engine about tenfold.
	goodRunner := r
	if raceEnabled {
		slow := limits
		slow.Timeout = time.Minute
		if goodRunner, err = codemode.New(codemode.Config{Registry: reg, Limits: slow}); err != nil {
			t.Fatal(err)
		}
	}
	const goodCode = `const names = await Promise.all(["a.txt", "b.txt"].map(p => tools.mcp__fs__read_file({path: p})));
let sum = 0; for (let i = 0; i < 1000; i++) sum += i;
return names.map(n => n.content).join(",") + " " + sum;`
	const goodValue = "alpha,bravo 499500"
	start, haveRSS := rss()
	var peak int64
	sample := func() {
		if n, ok := rss(); ok {
			peak = max(peak, n)
		}
	}

	t.Run("alone", func(t *testing.T) {
		for _, h := range hostile {
			begin := time.Now()
			res := r.Run(t.Context(), h.code)
			checkHostile(t, h.name, res, time.Since(begin), h.limit, h.says)
			sample()
		}
	})

	t.Run("all at once", func(t *testing.T) {
		var wg sync.WaitGroup
		results := make([]*codemode.Result, len(hostile))
		took := make([]time.Duration, len(hostile))
		for i, h := range hostile {
			wg.Go(func() {
				begin := time.Now()
				results[i] = r.Run(context.Background(), h.code)
				took[i] = time.Since(begin)
			})
		}
		good := goodRunner.Run(t.Context(), goodCode)
		sampling := make(chan struct{})
		go func() {
			defer close(sampling)
			wg.Wait()
		}()
		for done := false; !done; {
			select {
			case <-sampling:
				done = true
			default:
				sample()
				runtime.Gosched()
			}
		}
		if good.Err != nil || good.Value != goodValue {
			t.Errorf("the well-behaved script: %q, %v; want %q", good.Value, good.Err, goodValue)
		}
		for i, h := range hostile {
			checkHostile(t, h.name, results[i], took[i], h.limit, h.says)
		}
	})
	if haveRSS {
		t.Logf("resident: %d MiB at the start, %d MiB at the peak seen", start>>20, peak>>20)
		if peak > 1<<30 {
			t.Errorf("the process was %d MiB resident, over 1 GiB", peak>>20)
		}
	}
}
