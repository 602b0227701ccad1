package codemode_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

var fsNS = &tool.Namespace{Name: "mcp__fs", Description: "Files of one folder", Instructions: "Paths are relative."}

// files is the fake folder the fs tools serve.
var files = map[string]string{"a.txt": "alpha", "b.txt": "bravo", "c.txt": "charlie"}

// testRegistry holds a small fake filesystem server (codemode), a
// deferred tool, a direct one, a model-only one and a hidden one.
func testRegistry(t testing.TB, extra ...tool.Tool) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	tools := []tool.Tool{
		{Name: "mcp__fs__list_directory", Description: "List the files of a directory.", Exposure: tool.Codemode, Namespace: fsNS,
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				return tool.TextResult("[FILE] a.txt\n[FILE] b.txt\n[FILE] c.txt"), nil
			})},
		{Name: "mcp__fs__read_file", Description: "Read a file's text.", Exposure: tool.Codemode, Namespace: fsNS,
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				var a struct{ Path string }
				if err := json.Unmarshal(args, &a); err != nil {
					return nil, err
				}
				text, ok := files[a.Path]
				if !ok {
					return tool.ErrorResult("ENOENT: no such file: " + a.Path), nil
				}
				res := tool.TextResult(text)
				res.Structured = json.RawMessage(fmt.Sprintf(`{"content":%q,"size":%d}`, text, len(text)))
				return res, nil
			})},
		{Name: "weather-now", Description: "Get the current weather for a city.", Exposure: tool.Deferred,
			Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
				return tool.TextResult("sunny"), nil
			})},
		{Name: "clock", Description: "Tell the time.", Exposure: tool.Direct,
			Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
				return tool.TextResult("noon"), nil
			})},
		{Name: "meta", Description: "A model-only tool.", Exposure: tool.ModelOnly,
			Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
				return tool.TextResult("never"), nil
			})},
		{Name: "gone", Description: "A withdrawn tool.", Exposure: tool.Hidden,
			Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
				return tool.TextResult("never"), nil
			})},
	}
	if err := reg.Register(append(tools, extra...)...); err != nil {
		t.Fatal(err)
	}
	return reg
}

func newRunner(t testing.TB, reg *tool.Registry, limits codemode.Limits) (*codemode.Runner, *toolsearch.Searcher) {
	t.Helper()
	ranker, err := search.New(search.ModeToolshelf, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := toolsearch.New(reg, ranker)
	r, err := codemode.New(codemode.Config{Registry: reg, Searcher: s, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	return r, s
}

func TestScriptLoopsOverToolsAndReturns(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	res := r.Run(t.Context(), `
		const list = await tools.mcp__fs__list_directory({path: "."});
		const names = list.split("\n").map(l => l.replace("[FILE] ", ""));
		console.log("files:", names.length);
		const read = await Promise.all(names.map(n => tools.mcp__fs__read_file({path: n})));
		console.warn("sizes", read.map(f => f.size));
		return read.map((f, i) => names[i] + "=" + f.content).join(", ");`)
	if res.Err != nil {
		t.Fatalf("script failed: %v", res.Err)
	}
	if want := "a.txt=alpha, b.txt=bravo, c.txt=charlie"; res.Value != want {
		t.Errorf("value %q, want %q", res.Value, want)
	}
	if len(res.Logs) != 2 || res.Logs[0] != (codemode.Log{Level: "log", Text: "files: 3"}) ||
		res.Logs[1] != (codemode.Log{Level: "warn", Text: "sizes [5,5,7]"}) {
		t.Errorf("logs %+v", res.Logs)
	}
	if len(res.Calls) != 4 || res.Calls[0].Tool != "mcp__fs__list_directory" || res.Calls[3].Tool != "mcp__fs__read_file" ||
		string(res.Calls[3].Arguments) != `{"path":"c.txt"}` || res.Calls[3].Result != "charlie" || res.Calls[3].ResultBytes != 7 ||
		res.Calls[3].ResultTokens == 0 {
		t.Errorf("calls %+v", res.Calls)
	}
	if text := res.Text(); text != "files: 3\n[warn] sizes [5,5,7]\na.txt=alpha, b.txt=bravo, c.txt=charlie" {
		t.Errorf("text %q", text)
	}
}

// TestValuesAsJSON: a returned object is shown as JSON, undefined as
// nothing.
func TestValuesAsJSON(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	if res := r.Run(t.Context(), `return {n: 1, list: [1, "two"]}`); res.Err != nil || res.Value != "{\n  \"n\": 1,\n  \"list\": [\n    1,\n    \"two\"\n  ]\n}" {
		t.Errorf("object: %q, %v", res.Value, res.Err)
	}
	if res := r.Run(t.Context(), `const x = 1 + 1;`); res.Err != nil || res.Value != "" || res.Text() != "(the script returned nothing and logged nothing)" {
		t.Errorf("undefined: %q, %v", res.Value, res.Err)
	}
}

func TestToolErrorRejectsWithItsText(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	res := r.Run(t.Context(), `
		try { await tools.mcp__fs__read_file({path: "nope.txt"}); }
		catch (e) { return "caught: " + e.message; }`)
	if res.Err != nil || res.Value != "caught: ENOENT: no such file: nope.txt" {
		t.Errorf("value %q, err %v", res.Value, res.Err)
	}
	if len(res.Calls) != 1 || !res.Calls[0].IsError {
		t.Errorf("calls %+v", res.Calls)
	}
	// Uncaught, it fails the script with the tool's text and the line.
	res = r.Run(t.Context(), "\nawait tools.mcp__fs__read_file({path: 'nope.txt'});")
	var se *codemode.ScriptError
	if !errors.As(res.Err, &se) || !strings.Contains(se.Message, "ENOENT: no such file: nope.txt") {
		t.Errorf("uncaught rejection: %v", res.Err)
	}
}

func TestThrownErrorNamesTheLine(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	res := r.Run(t.Context(), "const a = 1;\nthrow new Error('broken');")
	var se *codemode.ScriptError
	if !errors.As(res.Err, &se) || !strings.Contains(se.Message, "Error: broken") || !strings.Contains(se.Message, "script.js:2") {
		t.Errorf("error %v", res.Err)
	}
	res = r.Run(t.Context(), "return (;")
	if !errors.As(res.Err, &se) || !strings.Contains(se.Message, "does not compile") {
		t.Errorf("syntax error %v", res.Err)
	}
}

func TestWhichToolsAScriptCalls(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	for code, want := range map[string]string{
		`return await tools.weather_now({})`:                "sunny", // deferred, by identifier
		`return await tools["weather-now"]({})`:             "sunny", // by exact name
		`return await tools.clock({})`:                      "noon",  // direct and active
		`return "meta" in tools`:                            "false",
		`return "gone" in tools`:                            "false",
		`return "mcp__fs__read_file" in tools`:              "true",
		`try { tools.meta } catch (e) { return e.message }`: "tools.meta is not a tool a script can call. Find tools with",
	} {
		res := r.Run(t.Context(), code)
		if res.Err != nil || !strings.HasPrefix(res.Value, want) {
			t.Errorf("%s: %q, %v; want %q", code, res.Value, res.Err, want)
		}
	}
}

func TestUnknownToolHintsTheClosest(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	res := r.Run(t.Context(), `return await tools.read_file({path: "a.txt"})`)
	var se *codemode.ScriptError
	if !errors.As(res.Err, &se) || !strings.Contains(se.Message, "TypeError: tools.read_file is not a tool a script can call; did you mean tools.mcp__fs__read_file") ||
		!strings.Contains(se.Message, "searchTools") {
		t.Errorf("error %v", res.Err)
	}
	res = r.Run(t.Context(), `return await describeTool("mcp__fs__reed_file")`)
	if !errors.As(res.Err, &se) || !strings.Contains(se.Message, "did you mean tools.mcp__fs__read_file") {
		t.Errorf("describeTool: %v", res.Err)
	}
}

// TestSearchToolsUsesToolSearchsRanker: searchTools returns what the
// Searcher's FindIn ranks, loaded tools included, narrowed by namespace
// in any of its spellings.
func TestSearchToolsUsesToolSearchsRanker(t *testing.T) {
	reg := testRegistry(t)
	r, s := newRunner(t, reg, codemode.Limits{})
	reg.Activate("mcp__fs__read_file") // loaded: still found by scripts
	out, err := s.FindIn("read a file", 8, toolsearch.Scope{Active: true})
	if err != nil || len(out.Hits) == 0 {
		t.Fatalf("FindIn: %v, %v", out, err)
	}
	var want []string
	for _, h := range out.Hits {
		want = append(want, h.Name)
	}
	res := r.Run(t.Context(), `return (await searchTools("read a file")).map(h => h.name).join(",")`)
	if res.Err != nil || res.Value != strings.Join(want, ",") {
		t.Errorf("searchTools: %q, %v; want %q", res.Value, res.Err, strings.Join(want, ","))
	}
	if !strings.Contains(res.Value, "mcp__fs__read_file") {
		t.Errorf("the loaded tool is missing: %q", res.Value)
	}
	for _, ns := range []string{"mcp__fs", "fs"} {
		res = r.Run(t.Context(), fmt.Sprintf(`return (await searchTools("weather file", {namespace: %q, limit: 5})).map(h => h.namespace).join(",")`, ns))
		if res.Err != nil || res.Value == "" || strings.Contains(res.Value, "undefined") || strings.Trim(strings.ReplaceAll(res.Value, "mcp__fs", ""), ",") != "" {
			t.Errorf("namespace %s: %q, %v", ns, res.Value, res.Err)
		}
	}
	res = r.Run(t.Context(), `return await searchTools("x", {namespace: "nosuch"})`)
	if res.Err == nil || !strings.Contains(res.Err.Error(), `namespace "nosuch" is unknown; the namespaces are: mcp__fs`) {
		t.Errorf("unknown namespace: %v", res.Err)
	}
}

func TestDescribe(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	res := r.Run(t.Context(), `
		const t = await describeTool("mcp__fs__read_file");
		const ns = await describeNamespace("fs");
		return [t.name, t.namespace, t.parameters.required[0], ns.name, ns.instructions, ns.tools.join("+")].join("|");`)
	if want := "mcp__fs__read_file|mcp__fs|path|mcp__fs|Paths are relative.|mcp__fs__list_directory+mcp__fs__read_file"; res.Err != nil || res.Value != want {
		t.Errorf("%q, %v; want %q", res.Value, res.Err, want)
	}
}

// TestNoHostAccess: no require, timers, process or I/O globals.
func TestNoHostAccess(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	res := r.Run(t.Context(), `return [typeof require, typeof setTimeout, typeof setInterval, typeof process, typeof fetch, typeof XMLHttpRequest, typeof Deno].join(",")`)
	if want := "undefined,undefined,undefined,undefined,undefined,undefined,undefined"; res.Err != nil || res.Value != want {
		t.Errorf("%q, %v", res.Value, res.Err)
	}
}

func TestBadArguments(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	res := r.Run(t.Context(), `try { await tools.mcp__fs__read_file("a.txt") } catch (e) { return e.message }`)
	if res.Err != nil || !strings.HasPrefix(res.Value, "tools.mcp__fs__read_file takes one object of arguments") {
		t.Errorf("%q, %v", res.Value, res.Err)
	}
}

// TestValidateRejectsBeforeTheCall: a call whose arguments do not suit
// the tool's schema rejects with the validator's words, and the tool does
// not run.
func TestValidateRejectsBeforeTheCall(t *testing.T) {
	var ran atomic.Int32
	reg := testRegistry(t, tool.Tool{Name: "strict", Exposure: tool.Codemode,
		Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			ran.Add(1)
			return tool.TextResult("ran"), nil
		})})
	r, _ := newRunner(t, reg, codemode.Limits{})
	res := r.Run(t.Context(), `try { await tools.strict({n: "one"}) } catch (e) { return e.message }`)
	if want := `invalid arguments for tools.strict: at /n: got string, want integer`; res.Err != nil || res.Value != want {
		t.Errorf("%q, %v; want %q", res.Value, res.Err, want)
	}
	if ran.Load() != 0 {
		t.Error("the tool ran")
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	if _, err := codemode.New(codemode.Config{}); err == nil || !strings.Contains(err.Error(), "Config.Registry is nil") {
		t.Errorf("nil registry: %v", err)
	}
	if _, err := codemode.New(codemode.Config{Registry: tool.NewRegistry(), Limits: codemode.Limits{Calls: -1}}); err == nil ||
		!strings.Contains(err.Error(), "Limits.Calls is -1") {
		t.Errorf("negative limit: %v", err)
	}
}

// TestConcurrentCallsWaitForASlot: with Concurrent 3, a Promise.all of
// ten calls has exactly three in flight until one returns, and all ten
// complete.
func TestConcurrentCallsWaitForASlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var inFlight atomic.Int32
		release := make(chan struct{})
		reg := testRegistry(t, tool.Tool{Name: "slow", Exposure: tool.Deferred,
			Handler: tool.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				inFlight.Add(1)
				defer inFlight.Add(-1)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return tool.TextResult("ok"), nil
			})})
		r, err := codemode.New(codemode.Config{Registry: reg, Limits: codemode.Limits{Concurrent: 3}})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan *codemode.Result)
		go func() {
			done <- r.Run(context.Background(), `return (await Promise.all(Array.from({length: 10}, () => tools.slow({})))).length`)
		}()
		synctest.Wait()
		if n := inFlight.Load(); n != 3 {
			t.Errorf("%d calls in flight, want 3", n)
		}
		close(release)
		res := <-done
		if res.Err != nil || res.Value != "10" {
			t.Errorf("%q, %v", res.Value, res.Err)
		}
	})
}

// TestCancelCancelsTheScriptAndItsCalls: cancelling the context stops a
// script whose call is in flight; the call sees its context cancelled,
// and Run returns only after the call has.
func TestCancelCancelsTheScriptAndItsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		var sawCancel atomic.Bool
		reg := testRegistry(t, tool.Tool{Name: "hang", Exposure: tool.Deferred,
			Handler: tool.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				close(started)
				<-ctx.Done()
				sawCancel.Store(true)
				return nil, ctx.Err()
			})})
		r, err := codemode.New(codemode.Config{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *codemode.Result)
		go func() { done <- r.Run(ctx, `await tools.hang({}); return "finished"`) }()
		<-started
		cancel()
		res := <-done
		if !sawCancel.Load() {
			t.Error("the call did not see its context cancelled before Run returned")
		}
		if !errors.Is(res.Err, context.Canceled) || !strings.Contains(res.Err.Error(), "the script was cancelled") {
			t.Errorf("error %v", res.Err)
		}
	})
}

// TestConsoleFormats: values join with spaces, objects as JSON.
func TestConsoleFormats(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	res := r.Run(t.Context(), `console.log("a", 1, {b: [2]}, undefined, null); console.error("bad"); console.info("i"); console.debug("d")`)
	want := []codemode.Log{{"log", `a 1 {"b":[2]} undefined null`}, {"error", "bad"}, {"info", "i"}, {"debug", "d"}}
	if res.Err != nil || fmt.Sprint(res.Logs) != fmt.Sprint(want) {
		t.Errorf("%+v, %v", res.Logs, res.Err)
	}
}

// TestRunnersAreIndependent: scripts running at once on one Runner keep
// their own globals.
func TestRunnersAreIndependent(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for i := range 8 {
		wg.Go(func() {
			res := r.Run(context.Background(), fmt.Sprintf(`globalThis.mine = %d; await tools.clock({}); return String(globalThis.mine)`, i))
			if res.Err != nil || res.Value != fmt.Sprint(i) {
				errs <- fmt.Sprintf("script %d: %q, %v", i, res.Value, res.Err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
