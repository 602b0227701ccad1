package gateway_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// hostile are scripts that try to take the gateway's CPU, memory, stack or
// upstream servers: each must end in an error result, stopped by a limit
// or the engine.
var hostile = []string{
	`while (true) {}`,
	`return /^(a+)+(?!x)$/.test("a".repeat(26) + "b");`,
	`let a = []; for (let i = 0; i < 200000; i++) a = [a]; return String(a);`,
	`let o = {}; for (let i = 0; i < 200000; i++) o = {o}; return JSON.stringify(o);`,
	`new Array(2**28).fill(0); return "filled";`,
	`Array.from({length: 2**27}); return "made";`,
	`let s = "a"; for (let i = 0; i < 30; i++) s += s; return s.length;`,
	`await Promise.all(Array.from({length: 10000}, () => new Promise(() => {})));`,
	`await Promise.all(Array.from({length: 10000}, (_, i) => tools.mcp__notes__echo({text: String(i)})));`,
}

// hostileLimits are the limits of the tests that run hostile scripts:
// short, so that the tests are quick.
var hostileLimits = codemode.Limits{Timeout: time.Second, Memory: 64 << 20}

// checkHostile reports a hostile script's answer that is not an error
// result: it returned, or the call failed; a refusal must be ErrBusy's.
func checkHostile(t *testing.T, script string, res *mcp.CallToolResult, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("hostile script %q: the call failed: %v", script, err)
		return
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	switch {
	case !res.IsError:
		t.Errorf("hostile script %q returned %q, want an error result", script, cutText(text))
	case strings.Contains(text, "was not run") && !strings.Contains(text, codemode.ErrBusy.Error()):
		t.Errorf("hostile script %q was refused with %q, want the ErrBusy text", script, cutText(text))
	}
}

func cutText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// TestCodemodeHostileClientsKeepSearchAnswering: while 16 clients keep
// sending hostile scripts (more than run at once: the rest wait for a
// turn, or are refused with ErrBusy), a 17th client's tool_search answers
// within 1 s, each time while scripts are running. The searches start once
// hostile scripts hold every turn; the test ends once the gateway has
// stopped every script.
func TestCodemodeHostileClientsKeepSearchAnswering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hostile scripts for seconds")
	}
	up, started := gate()
	g := newGatewayWith(t, gateway.Config{Limits: hostileLimits},
		mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")}, mcpclient.ServerConfig{Name: "gate", Server: up})
	probe := connect(t, g, gateway.Codemode)
	if text, isErr := call(t, probe, gateway.SearchName, map[string]any{"query": "echo the text"}); isErr || !strings.Contains(text, "mcp__notes__echo") {
		t.Fatalf("the first search: %q (error %v)", text, isErr)
	}
	const clients, probes = 16, 20
	// Once the searches are done, stop cancels the hostile calls in flight
	// (and those waiting for a turn), as their clients would.
	ctx, stop := context.WithCancel(t.Context())
	var inflight atomic.Int32
	var answered atomic.Int64
	var wg sync.WaitGroup
	var sessions []*mcp.ServerSession
	for i := range clients {
		cs, ss := connectSession(t, g, gateway.Codemode)
		sessions = append(sessions, ss)
		wg.Go(func() {
			defer cs.Close()
			for n := i; ctx.Err() == nil; n++ {
				kind := n % len(hostile)
				inflight.Add(1)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.CodeName,
					Arguments: map[string]any{"code": fmt.Sprintf("await tools.mcp__gate__started({kind: \"%d\"});\n%s", kind, hostile[kind])}})
				inflight.Add(-1)
				if ctx.Err() != nil {
					return
				}
				answered.Add(1)
				checkHostile(t, hostile[kind], res, err)
			}
		})
	}
	running := map[string]bool{}
	var worst, total time.Duration
	// Two rounds of searches: once hostile scripts have taken every turn,
	// and once as many more have started (under -race, where the engine's
	// native loops run for minutes, only the first).
	rounds := 2
	if raceEnabled {
		rounds = 1
	}
	for i := range rounds * probes {
		if i%probes == 0 {
			for range codemode.DefaultMaxScripts {
				running[<-started] = true
			}
		}
		begin := time.Now()
		text, isErr := call(t, probe, gateway.SearchName, map[string]any{"query": "echo the text"})
		took := time.Since(begin)
		if isErr || !strings.Contains(text, "mcp__notes__echo") {
			t.Errorf("a search among hostile scripts: %q (error %v)", text, isErr)
		}
		if inflight.Load() == 0 {
			t.Errorf("the search answered after the hostile scripts had all ended")
		}
		worst = max(worst, took)
		total += took
	}
	stop()
	wg.Wait()
	end := time.Now()
	for _, ss := range sessions {
		ss.Wait() // the session's scripts have stopped
	}
	var kinds []string
	for k := range running {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	t.Logf("%d searches among hostile scripts (kinds %v started, %d answered): the slowest answered in %v, the mean in %v; "+
		"the last script stopped %v after its client cancelled", rounds*probes, kinds, answered.Load(), worst, total/time.Duration(rounds*probes), time.Since(end))
	if worst > time.Second {
		t.Errorf("tool_search took %v among hostile scripts, want within 1 s", worst)
	}
}

// rss returns the process's resident set size, from /proc/self/status.
func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// TestCodemodeHostileScriptsLeaveNoMemory: the hostile scripts, one after
// another, leave the process's resident memory within 100 MiB of where it
// was before them: each script's VM is freed, and the engine's allocator
// hands its regions back. TOOLSHELF_HOSTILE_MEMORY=default runs them at
// the default memory limit (256 MiB) instead of 64 MiB.
func TestCodemodeHostileScriptsLeaveNoMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	if testing.Short() {
		t.Skip("runs hostile scripts for seconds")
	}
	limits := hostileLimits
	if os.Getenv("TOOLSHELF_HOSTILE_MEMORY") == "default" {
		limits.Memory = codemode.DefaultLimits.Memory
	}
	g := newGatewayWith(t, gateway.Config{Limits: limits}, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
	cs := connect(t, g, gateway.Codemode)
	if text, isErr := code(t, cs, `return (await tools.mcp__notes__echo({text: "warm"}));`); isErr || text != "echo: warm" {
		t.Fatalf("the first script: %q (error %v)", text, isErr)
	}
	settle := func() int64 {
		runtime.GC()
		debug.FreeOSMemory()
		return rss(t)
	}
	before := settle()
	for _, script := range hostile {
		begin := time.Now()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: gateway.CodeName, Arguments: map[string]any{"code": script}})
		checkHostile(t, script, res, err)
		t.Logf("%-90.90q %6v, RSS %4d MiB", script, time.Since(begin).Round(time.Millisecond), rss(t)>>20)
	}
	after := settle()
	t.Logf("RSS before the hostile scripts %d MiB, after %d MiB (memory limit %d MiB)", before>>20, after>>20, limits.Memory>>20)
	if after-before > 100<<20 {
		t.Errorf("RSS grew from %d MiB to %d MiB over the hostile scripts, want within 100 MiB", before>>20, after>>20)
	}
}
