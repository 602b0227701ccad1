package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayServesACatalog: the stand-in server answers initialize, lists
// its catalog's tools as they were listed, answers a call with its fixed
// text, refuses methods it lacks and ignores notifications.
func TestReplayServesACatalog(t *testing.T) {
	s, err := builtinServer("github")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_issue","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/list"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := serveReplay(s, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		ID     int `json:"id"`
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	var answers []answer
	dec := json.NewDecoder(&out)
	for dec.More() {
		var a answer
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("an answer is not JSON: %v\n%s", err, out.String())
		}
		answers = append(answers, a)
	}
	if len(answers) != 4 {
		t.Fatalf("%d answers to 4 requests and a notification", len(answers))
	}
	if a := answers[0]; a.ID != 1 || a.Result.ProtocolVersion != "2025-11-25" || a.Result.ServerInfo.Name != "github" {
		t.Errorf("initialize answered %+v", a)
	}
	tools := answers[1].Result.Tools
	if len(tools) != len(s.Tools) || len(tools) == 0 {
		t.Fatalf("tools/list gave %d tools, the catalog has %d", len(tools), len(s.Tools))
	}
	for i, tl := range tools {
		if tl.Name != s.Tools[i].Name || tl.Description != s.Tools[i].Description || !bytes.Equal(tl.InputSchema, s.Tools[i].InputSchema) {
			t.Errorf("tool %d is %s, not the catalog's %s as listed", i, tl.Name, s.Tools[i].Name)
		}
	}
	if c := answers[2].Result.Content; len(c) != 1 || c[0].Text != standInResult {
		t.Errorf("tools/call answered %+v", c)
	}
	if e := answers[3].Error; answers[3].ID != 4 || e == nil || e.Code != -32601 {
		t.Errorf("resources/list answered %+v, want method not found", answers[3])
	}
	if err := serveReplay(s, strings.NewReader(strings.Repeat("x", maxLine+1)), io.Discard); err == nil {
		t.Error("a message past the bound was read")
	}
}

// TestRewriteReplacesBetweenTheMarkers: Rewrite keeps what lies outside
// the markers and refuses a README without one pair of them.
func TestRewriteReplacesBetweenTheMarkers(t *testing.T) {
	readme := "# x\n\nbefore\n" + beginMarker + "\nold table\n" + endMarker + "\nafter\n"
	got, err := Rewrite([]byte(readme), "new table\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# x\n\nbefore\n" + beginMarker + "\nnew table\n" + endMarker + "\nafter\n"; string(got) != want {
		t.Errorf("Rewrite gave\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{"no markers\n", endMarker + "\n" + beginMarker + "\n", beginMarker + beginMarker + endMarker} {
		if _, err := Rewrite([]byte(bad), "x"); err == nil || !strings.Contains(err.Error(), beginMarker) {
			t.Errorf("Rewrite(%q) = %v, want an error naming the markers", bad, err)
		}
	}
}

// TestSizesAddCatalogsInNameOrder: a size adds the built-in catalog's
// servers other than the real ones, in name order, until its target.
func TestSizesAddCatalogsInNameOrder(t *testing.T) {
	sizes, err := Sizes(0, 500, 1500)
	if err != nil {
		t.Fatal(err)
	}
	count := func(sz Size) int {
		n := 36 // the real servers' tools in the catalog
		for _, s := range sz.StandIns {
			n += len(s.Tools)
		}
		return n
	}
	if len(sizes[0].StandIns) != 0 {
		t.Errorf("size 0 has stand-ins: %d", len(sizes[0].StandIns))
	}
	for i, target := range []int{500, 1500} {
		sz := sizes[i+1]
		n := count(sz)
		last := len(sz.StandIns[len(sz.StandIns)-1].Tools)
		if n < target || n-last >= target {
			t.Errorf("size %d: %d tools, the last server's %d: not the first that reach it", target, n, last)
		}
		for j, s := range sz.StandIns {
			if s.Name == "filesystem" || s.Name == "memory" || s.Name == "everything" {
				t.Errorf("size %d replays the real server %s", target, s.Name)
			}
			if j > 0 && sz.StandIns[j-1].File >= s.File {
				t.Errorf("size %d: %s before %s", target, sz.StandIns[j-1].File, s.File)
			}
		}
	}
}

// TestTableOfOneSession runs one configuration for real: Claude Code
// through the gateway's meta surface over the 36 tools of the example
// servers, its tool search off. The session runs as scripted, the
// emulator's log adds up to the usage Claude Code itself reports, and the
// table, written into a README between its markers, carries the
// session's figures.
func TestTableOfOneSession(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Claude Code and real MCP servers; go test without -short runs it")
	}
	claude, err := filepath.Abs(filepath.Join("..", "..", ".ci", "claude", "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	servers, err := filepath.Abs(filepath.Join("..", "..", ".ci", "mcp", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	for what, path := range map[string]string{"Claude Code (bash .ci/claude-code)": claude, "the MCP servers (bash .ci/mcp-servers)": filepath.Join(servers, "mcp-server-filesystem")} {
		if _, err := os.Stat(path); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s required under CI: %v", what, err)
			}
			t.Skipf("%s not installed: %v", what, err)
		}
	}
	bin := t.TempDir()
	toolshelf := filepath.Join(bin, "toolshelf")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", toolshelf, "../../cmd/toolshelf")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Toolshelf: toolshelf, Claude: claude, ServerBin: servers, StandIn: []string{"unused"}, Work: work, Log: io.Discard}
	res, err := r.Run(t.Context(), Config{Setup: Meta, ToolSearch: false})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != "" {
		t.Fatalf("the session failed: %s", res.Failed)
	}
	if res.Tools != 36 || res.Requests != 3 || res.Counts != 0 {
		t.Errorf("%d tools, %d requests, %d counts; want 36 tools (the example servers), 3 requests (search, call, answer), no counts", res.Tools, res.Requests, res.Counts)
	}
	if res.Input == 0 || res.Input != res.Read+res.Write+res.Uncached {
		t.Errorf("input %d is not read %d + write %d + uncached %d", res.Input, res.Read, res.Write, res.Uncached)
	}
	if rep := res.reported; rep.CacheRead != res.Read || rep.CacheWrite != res.Write || rep.Input != res.Uncached {
		t.Errorf("the emulator's log adds up to read %d, write %d, uncached %d; Claude Code reports %+v", res.Read, res.Write, res.Uncached, rep)
	}
	if r.Model == "" {
		t.Error("no model read from the emulator's log")
	}
	if res.window != contextWindow {
		t.Errorf("Claude Code reports a context window of %d for %s; the emulator applies %d: set contextWindow to Claude Code's", res.window, r.Model, contextWindow)
	}
	body := Table(Provenance{Command: "scripts/gateway-pays", Date: "2026-12-02", Machine: "m", Claude: "2.1.332", Model: r.Model}, []Result{res})
	readme, err := Rewrite([]byte("# t\n"+beginMarker+"\n"+endMarker+"\n"), body)
	if err != nil {
		t.Fatal(err)
	}
	row := "| 36 | gateway, `meta` | off | 3 | " + thousands(res.Input) + " | " + thousands(res.Read) + " | " + thousands(res.Write) + " | " + thousands(res.Uncached) + " | "
	if !strings.Contains(string(readme), row) || strings.Contains(string(readme), "failed") {
		t.Errorf("the README lacks the row %q or says failed:\n%s", row, readme)
	}
	if !strings.Contains(string(readme), "asking for "+r.Model) {
		t.Errorf("the README does not name the model %s:\n%s", r.Model, readme)
	}
}

// TestSummaryComparesMetaWithNoGateway: the summary names the cheapest
// setup of a size and says what meta costs over no gateway, in cost,
// requests and prompt tokens, and says when no gateway failed.
func TestSummaryComparesMetaWithNoGateway(t *testing.T) {
	meta := Result{Setup: Meta, Tools: 36, Requests: 3, Input: 1100, Read: 1000, Uncached: 100}      // cost 200
	none := Result{Setup: None, Tools: 36, Requests: 2, Input: 400, Write: 200, Uncached: 100}       // cost 350
	big := Result{Setup: None, Tools: 1518, Failed: "the emulator answered 400: prompt is too long"} // no request answered
	got := summary([]Result{meta, none, {Setup: Meta, Tools: 1518, Requests: 3, Input: 10, Uncached: 10}, big})
	want := "- 36 tools, tool search off: gateway, `meta` costs least (200 input tokens' worth). `meta` costs 150 less than no gateway, with 1 more request and 700 more prompt tokens.\n" +
		"- 1,518 tools, tool search off: gateway, `meta` costs least (10 input tokens' worth). With no gateway the session failed.\n"
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	if c := cost(big); c != "failed" {
		t.Errorf("a session with no answered request costs %q, want failed", c)
	}
}
