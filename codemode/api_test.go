package codemode_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/tool"
)

// TestAllTools: ALL_TOOLS lists the tools a script can call, frozen.
func TestAllTools(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	res := r.Run(t.Context(), `ALL_TOOLS.push({name: "x"}); return ALL_TOOLS.map(t => t.name).join(",") + " " + Object.isFrozen(ALL_TOOLS[0]);`)
	if res.Err == nil {
		t.Fatalf("pushing onto the frozen ALL_TOOLS did not fail: %q", res.Value)
	}
	res = r.Run(t.Context(), `return ALL_TOOLS.map(t => t.name).join(",") + " " + Object.isFrozen(ALL_TOOLS[0]) + " " + ALL_TOOLS[0].description;`)
	// The direct tool "clock" is active; the model-only and hidden ones
	// are never callable.
	want := "mcp__fs__list_directory,mcp__fs__read_file,weather-now,clock true List the files of a directory."
	if res.Err != nil || res.Value != want {
		t.Errorf("%q, %v; want %q", res.Value, res.Err, want)
	}
}

// TestStoreAndLoad: a script's stored values reach the session's Store
// (and the details) only when it succeeds; later scripts load them, and
// a replayed transcript gives the same store.
func TestStoreAndLoad(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	st := codemode.NewStore()
	ctx := codemode.WithStore(t.Context(), st)
	call := func(code string) (*tool.Result, codemode.Details) {
		t.Helper()
		out, err := r.Tool().Handler.Call(ctx, codemode.Arguments(code))
		if err != nil {
			t.Fatal(err)
		}
		d, _ := out.Details.(codemode.Details)
		return out, d
	}
	_, d1 := call(`store("seen", ["a.txt"]); store("n", 1); store("n", 2); return load("n");`)
	if d1.Error != "" || string(d1.Stored["seen"]) != `["a.txt"]` || string(d1.Stored["n"]) != "2" {
		t.Fatalf("details %+v", d1)
	}
	_, d2 := call(`store("seen", ["b.txt"]); throw new Error("no");`)
	if d2.Stored != nil {
		t.Errorf("a failed script's values were kept: %v", d2.Stored)
	}
	out, _ := call(`return JSON.stringify([load("seen"), load("n"), load("missing")]);`)
	if got := out.Content[0].Text; got != `[["a.txt"],2,null]` {
		t.Errorf("load after a failed store: %s", got)
	}
	// The transcript replayed: the details as the session keeps them.
	var raw []json.RawMessage
	for _, d := range []codemode.Details{d1, d2} {
		b, _ := json.Marshal(d)
		raw = append(raw, b)
	}
	replayed := codemode.ReplayStore(raw)
	if v, _ := replayed.Load("seen"); string(v) != `["a.txt"]` || strings.Join(replayed.Keys(), ",") != "n,seen" {
		t.Errorf("replayed store: %s %v", v, replayed.Keys())
	}
	// Without a Store, values live for the one script.
	res := r.Run(t.Context(), `store("k", {a: 1}); return load("k").a + " " + typeof load("other");`)
	if res.Err != nil || res.Value != "1 undefined" {
		t.Errorf("%q, %v", res.Value, res.Err)
	}
	for code, says := range map[string]string{
		`store("", 1)`:                         "non-empty string",
		`store("big", "x".repeat(300 * 1024))`: "too long",
		`const o = {}; o.o = o; store("c", o)`: "cannot be written as JSON",
	} {
		if res := r.Run(t.Context(), code); res.Err == nil || !strings.Contains(res.Err.Error(), says) {
			t.Errorf("%s: %v, want it to say %q", code, res.Err, says)
		}
	}
}

// TestTextImageExit: text() and image() add parts in order, exit() ends
// the script at once with its value.
func TestTextImageExit(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	out, err := r.Tool().Handler.Call(t.Context(), codemode.Arguments(
		`console.log("first"); text("a part"); image("`+png+`", "image/png"); return "value";`))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Content) != 2 || out.Content[0].Text != "first\na part\nvalue" ||
		out.Content[1].MIMEType != "image/png" || string(out.Content[1].Data) != "\x89PNG fake" {
		t.Errorf("content %+v", out.Content)
	}
	res := r.Run(t.Context(), `console.log("before"); try { exit({done: true}); } finally { console.log("finally"); } console.log("after"); return "never";`)
	if res.Err != nil || !res.Exited || res.Value != `{"done":true}` || len(res.Logs) != 1 {
		t.Errorf("exit: %q, %v, exited %v, logs %v", res.Value, res.Err, res.Exited, res.Logs)
	}
	if res := r.Run(t.Context(), `exit(); return "never";`); res.Err != nil || res.Value != "" || !res.Exited {
		t.Errorf("exit(): %q, %v", res.Value, res.Err)
	}
	big := base64.StdEncoding.EncodeToString(make([]byte, 2<<20))
	if res := r.Run(t.Context(), `image("`+big+`", "image/png"); return "ok";`); res.Err != nil || len(res.Content) != 1 {
		t.Errorf("a 2 MiB image: %v, %d parts", res.Err, len(res.Content))
	}
	for code, says := range map[string]string{
		`image("not base64!", "image/png")`: "not base64",
		`image("aGk=", "text/html")`:        "not an image type",
		`image(42)`:                         "base64 string",
		`const png = "` + png + `"; for (let i = 0; i < 11; i++) image(png, "image/png");`: "at most 10 images",
	} {
		if res := r.Run(t.Context(), code); res.Err == nil || !strings.Contains(res.Err.Error(), says) {
			t.Errorf("%s: %v, want it to say %q", code, res.Err, says)
		}
	}
}

// TestOptionsLine: the first line's @options sets the output tokens and
// lowers the time limit; a bad line is refused with how to write it.
func TestOptionsLine(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{Timeout: 5 * time.Second})
	res := r.Run(t.Context(), "// @options: {\"timeout_ms\": 100}\nwhile (true) {}")
	var le *codemode.LimitError
	if !errors.As(res.Err, &le) || le.Limit != codemode.LimitTimeout || le.Value != "100ms" {
		t.Errorf("timeout_ms 100: %v", res.Err)
	}
	res = r.Run(t.Context(), "// @options: {\"timeout_ms\": 60000}\nreturn 1")
	if res.Err != nil || len(res.Logs) != 1 || !strings.Contains(res.Logs[0].Text, "runs with 5s") {
		t.Errorf("timeout_ms past the limit: %v, %v", res.Err, res.Logs)
	}
	out, err := r.Tool().Handler.Call(t.Context(), codemode.Arguments("// @options: {\"max_output_tokens\": 20}\nreturn \"word \".repeat(500)"))
	if err != nil {
		t.Fatal(err)
	}
	if text := out.Content[0].Text; len(text) > 400 || !strings.Contains(text, "cut at 20 tokens") {
		t.Errorf("max_output_tokens 20: %d bytes: %.300q", len(text), text)
	}
	for _, line := range []string{`// @options: {"timeout": 5}`, `// @options: nope`, `// @options: {"max_output_tokens": -1}`} {
		res := r.Run(t.Context(), line+"\nreturn 1")
		if res.Err == nil || !strings.Contains(res.Err.Error(), "@options") {
			t.Errorf("%s: %v", line, res.Err)
		}
	}
}

// TestBuiltinsAreFrozen: a script cannot change the built-ins, yet the
// common ways of using them still work.
func TestBuiltinsAreFrozen(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	for code, want := range map[string]string{
		`Array.prototype.push = null; return typeof [].push;`:                                                "function",
		`"use strict"; try { Array.prototype.push = null; } catch (e) { return e.name; }`:                    "TypeError",
		`JSON.parse = () => 1; return JSON.parse("2");`:                                                      "2",
		`return Object.isFrozen(Object.prototype) && Object.isFrozen(Promise) && Object.isFrozen(Math);`:     "true",
		`class E extends Error { constructor(m) { super(m); this.name = "E"; } } return String(new E("x"));`: "E: x",
		`const o = {}; o.toString = () => "mine"; return String(o);`:                                         "mine",
		`tools.x = 1; return typeof tools.x;`:                                                                "",
	} {
		res := r.Run(t.Context(), code)
		if want == "" {
			if res.Err == nil || !strings.Contains(res.Err.Error(), "not a tool a script can call") {
				t.Errorf("%s: %q, %v", code, res.Value, res.Err)
			}
			continue
		}
		if res.Err != nil || res.Value != want {
			t.Errorf("%s: %q, %v; want %q", code, res.Value, res.Err, want)
		}
	}
}

// TestSearchesAreRecorded: a script's searchTools calls are in its
// result and in the codemode tool's details.
func TestSearchesAreRecorded(t *testing.T) {
	r, _ := newRunner(t, testRegistry(t), codemode.Limits{})
	out, err := r.Tool().Handler.Call(t.Context(), codemode.Arguments(
		`const a = await searchTools("read a file"); const b = await searchTools("weather", {namespace: "fs"}); return a.length;`))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := out.Details.(codemode.Details)
	if len(d.Searches) != 2 || d.Searches[0].Query != "read a file" || len(d.Searches[0].Hits) == 0 ||
		d.Searches[0].Hits[0] != "mcp__fs__read_file" || d.Searches[1].Namespace != "mcp__fs" {
		t.Errorf("searches %+v", d.Searches)
	}
}

// TestScriptsPastTheBoundWait: past MaxScripts a script waits for a turn,
// and past QueueWait it is refused with ErrBusy.
func TestScriptsPastTheBoundWait(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	reg := testRegistry(t, tool.Tool{Name: "block", Exposure: tool.Deferred,
		Handler: tool.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
			entered <- struct{}{}
			select {
			case <-release:
				return tool.TextResult("released"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})})
	r, err := codemode.New(codemode.Config{Registry: reg, MaxScripts: 1, QueueWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan *codemode.Result, 1)
	go func() { first <- r.Run(context.Background(), `return await tools.block({});`) }()
	// The second script is refused: the first holds the only turn for
	// the whole wait.
	<-entered
	busy := r.Run(t.Context(), `return 1`)
	if !errors.Is(busy.Err, codemode.ErrBusy) || !strings.Contains(busy.Err.Error(), "Config.MaxScripts") {
		t.Errorf("past the bound: %v", busy.Err)
	}
	// A script that waits gets its turn when the first ends.
	r2, _ := codemode.New(codemode.Config{Registry: reg, MaxScripts: 1, QueueWait: time.Hour})
	held := make(chan *codemode.Result, 1)
	go func() { held <- r2.Run(context.Background(), `return await tools.block({});`) }()
	<-entered
	second := make(chan *codemode.Result, 1)
	go func() { second <- r2.Run(context.Background(), `return "second"`) }()
	close(release)
	for _, c := range []struct {
		ch   chan *codemode.Result
		want string
	}{{first, "released"}, {held, "released"}, {second, "second"}} {
		if res := <-c.ch; res.Err != nil || res.Value != c.want {
			t.Errorf("%q, %v; want %q", res.Value, res.Err, c.want)
		}
	}
}
