package cli

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tokens"
)

func TestStatsFields(t *testing.T) {
	if testing.Short() {
		t.Skip("breaks down every tool of the corpus; go test without -short runs it")
	}
	code, out, errOut := run(t, "stats", "--fields")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"1,564 tools of the built-in catalog", "tool name", "parameter descriptions", "schema structure (rest)", "100.0%",
		"438,018 tokens of declarations", "438,018  100.0%\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = run(t, "stats", "--fields", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var got struct {
		Tools, Total int
		Fields       []fieldRow
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sum, share := 0, 0.0
	for _, f := range got.Fields {
		sum += f.Tokens
		share += f.Share
	}
	if got.Tools != 1564 || len(got.Fields) != 7 || sum != got.Total || share < 0.999 || share > 1.001 {
		t.Errorf("tools %d, fields %+v sum to %d (share %v), total %d", got.Tools, got.Fields, sum, share, got.Total)
	}
}

func TestStatsFieldsCatalog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalog := `{"server": "weather", "tools": [{"name": "get_forecast", "description": "Get the weather forecast.",
		"inputSchema": {"type": "object", "properties": {"unit": {"type": "string", "description": "Unit of temperature", "enum": ["c", "f"], "default": "c"}}}}]}`
	if err := os.WriteFile(filepath.Join(dir, "weather.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "stats", "--fields", "--json", "--catalog", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Tools, Total int
		Breakdown    tokens.Breakdown
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	c, _ := tokens.Default()
	want := c.Breakdown(llm.Tool{Name: "mcp__weather__get_forecast", Description: "Get the weather forecast.", Parameters: json.RawMessage(
		`{"type":"object","properties":{"unit":{"type":"string","description":"Unit of temperature","enum":["c","f"],"default":"c"}}}`)})
	if got.Tools != 1 || got.Breakdown != want || got.Total != want.Total() {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// writeLog writes metrics records, and extra raw lines after them.
func writeLog(t *testing.T, recs []tokens.Record, extra ...string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	for _, x := range extra {
		b.WriteString(x + "\n")
	}
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func day(d, h int) time.Time { return time.Date(2026, 7, d, h, 0, 0, 0, time.UTC) }

var statsRecords = []tokens.Record{
	{Time: day(1, 9), Input: 1000, Output: 50, CacheRead: 0, CacheWrite: 1000, ToolTokens: 400, Tools: 2,
		Declared: []string{"tool_search", "mcp__gh__issue"}, DeclaredTokens: []int{150, 250}, Called: []string{"tool_search"}},
	{Time: day(1, 10), Input: 200, Output: 30, CacheRead: 1800, ToolTokens: 700, Tools: 3,
		Declared: []string{"tool_search", "mcp__gh__issue", "mcp__gh__pr"}, DeclaredTokens: []int{150, 250, 300},
		Called: []string{"mcp__gh__issue", "mcp__gh__issue"}},
	// Another day; a record without per-tool counts.
	{Time: day(2, 23), Input: 500, Output: 10, ToolTokens: 150, Tools: 1, Declared: []string{"tool_search"}},
}

func TestStatsLogJSON(t *testing.T) {
	t.Parallel()
	path := writeLog(t, statsRecords, "not json", `{"time":"2026-07-03T00:00:00Z","in`)
	code, out, errOut := run(t, "stats", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{path + ": line 4: ", path + ": line 5: ", "(line skipped)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	var got stats
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := stats{
		Records: 3,
		Days: []dayStats{
			{Day: "2026-07-01", Requests: 2, Input: 4000, Uncached: 1200, Output: 80, CacheRead: 1800, CacheWrite: 1000, ToolTokens: 1100,
				ToolShare: 1100.0 / 4000, AvgTools: 2.5},
			{Day: "2026-07-02", Requests: 1, Input: 500, Uncached: 500, Output: 10, ToolTokens: 150, ToolShare: 150.0 / 500, AvgTools: 1},
		},
		Total: dayStats{Requests: 3, Input: 4500, Uncached: 1700, Output: 90, CacheRead: 1800, CacheWrite: 1000, ToolTokens: 1250,
			ToolShare: 1250.0 / 4500, AvgTools: 2},
		Tools: []toolStats{
			{Name: "mcp__gh__issue", Declared: 2, Calls: 2, Tokens: 500},
			{Name: "tool_search", Declared: 3, Calls: 1, Tokens: 300, Untracked: 1},
			{Name: "mcp__gh__pr", Declared: 1, Tokens: 300},
		},
		NeverUsed: []string{"mcp__gh__pr"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(dayStats{}), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".tools"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

func TestStatsLogText(t *testing.T) {
	t.Parallel()
	path := writeLog(t, statsRecords)
	code, out, errOut := run(t, "stats", path)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "3 requests, 2026-07-01 to 2026-07-02 (UTC)" {
		t.Errorf("first line %q", lines[0])
	}
	// INPUT is every prompt token, the cache's included, so the tool
	// tokens are a part of it and the share is theirs of it.
	if got := strings.Fields(lines[2]); !slices.Equal(got, strings.Fields("DAY REQUESTS INPUT CACHE READ CACHE WRITE UNCACHED TOOL TOKENS TOOL SHARE OUTPUT AVG TOOLS")) {
		t.Errorf("header %q", lines[2])
	}
	for _, want := range [][]string{
		{"2026-07-01", "2", "4,000", "1,800", "1,000", "1,200", "1,100", "27.5%", "80", "2.5"},
		{"total", "3", "4,500", "1,800", "1,000", "1,700", "1,250", "27.8%", "90", "2.0"},
		{"mcp__gh__issue", "2", "2", "500"},
		{"tool_search", "3", "1", "300+?"},
		{"Never", "called", "(1", "of", "3", "declared", "tools,", "300", "tokens", "of", "declarations)"},
		{"mcp__gh__pr", "declared", "1", "time", "300", "tokens"},
	} {
		if !slices.ContainsFunc(lines, func(l string) bool { return slices.Equal(strings.Fields(l), want) }) {
			t.Errorf("no line %q in\n%s", strings.Join(want, " "), out)
		}
	}
	if want := "INPUT is every prompt token: cache reads, cache writes and the uncached rest; TOOL TOKENS is the part\n" +
		"of it that declared tools, TOOL SHARE that part's share of INPUT."; !strings.Contains(out, want) {
		t.Errorf("no legend %q in\n%s", want, out)
	}
	// --top cuts the tool lists.
	_, out, _ = run(t, "stats", "--top", "1", path)
	if !strings.Contains(out, "… and 2 more (--top 0 lists all)") {
		t.Errorf("--top 1:\n%s", out)
	}
}

// TestStatsCatalogEstimates: records without per-tool counts get them
// from --catalog.
func TestStatsCatalogEstimates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalog := `{"server": "weather", "tools": [{"name": "get_forecast", "description": "Get the weather forecast.", "inputSchema": {"type": "object"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "weather.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	path := writeLog(t, []tokens.Record{{Time: day(1, 1), Input: 10, Tools: 2, ToolTokens: 30,
		Declared: []string{"mcp__weather__get_forecast", "unknown"}}})
	code, out, errOut := run(t, "stats", "--json", "--catalog", dir, path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got stats
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	c, _ := tokens.Default()
	// The catalog completes the schema with empty properties.
	n := c.Tool(llm.Tool{Name: "mcp__weather__get_forecast", Description: "Get the weather forecast.", Parameters: json.RawMessage(`{"properties":{},"type":"object"}`)})
	want := []toolStats{{Name: "mcp__weather__get_forecast", Declared: 1, Tokens: n}, {Name: "unknown", Declared: 1, Untracked: 1}}
	if diff := cmp.Diff(want, got.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestStatsSVG(t *testing.T) {
	t.Parallel()
	svg := filepath.Join(t.TempDir(), "chart.svg")
	code, out, errOut := run(t, "stats", "--svg", svg, writeLog(t, statsRecords))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// It says what it wrote, on stderr: stdout keeps the tables (or the
	// JSON of --json).
	if want := "wrote " + svg + ": input tokens per day, tool definitions marked (2 days)\n"; errOut != want || !strings.HasPrefix(out, "3 requests") {
		t.Errorf("stderr %q, want %q; stdout %q", errOut, want, out)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	// Well-formed XML, one pair of bars per day.
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	rects := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, b)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	if rects != 2+2*2 || !strings.Contains(string(b), "2026-07-02") {
		t.Errorf("%d rects (want 2 legend + 2 per day):\n%s", rects, b)
	}
}

func TestStatsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.jsonl")
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	garbage := filepath.Join(dir, "garbage.jsonl")
	os.WriteFile(garbage, []byte("a\nb\n"), 0o600)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"stats", missing}, 1, "no metrics log " + missing + ": run or chat writes one"},
		{[]string{"stats", empty}, 1, "the metrics log " + empty + " is empty"},
		{[]string{"stats", garbage}, 1, "holds no valid records, only 2 lines that are not records"},
		{[]string{"stats", "a", "b"}, 2, "stats reads one metrics log, got 2 arguments"},
		{[]string{"stats", "--fields", empty}, 2, "--fields describes catalogs"},
		{[]string{"stats", "--svg", filepath.Join(dir, "no", "such", "x.svg"), writeLog(t, statsRecords)}, 1, "--svg: "},
	} {
		code, _, errOut := run(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
}

func TestStatsDefaultLog(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	code, _, errOut := run(t, "stats")
	if want := filepath.Join(state, "toolshelf", "metrics.jsonl"); code != 1 || !strings.Contains(errOut, "no metrics log "+want) {
		t.Errorf("exit %d, %q", code, errOut)
	}
	os.MkdirAll(filepath.Join(state, "toolshelf"), 0o700)
	data, _ := os.ReadFile(writeLog(t, statsRecords))
	os.WriteFile(filepath.Join(state, "toolshelf", "metrics.jsonl"), data, 0o600)
	if code, out, errOut := run(t, "stats"); code != 0 || !strings.HasPrefix(out, "3 requests") {
		t.Errorf("exit %d, %q, %q", code, out, errOut)
	}
}

// TestStatsCountsScriptCalls: a codemode script's calls count as calls of
// their tools, so a tool only scripts call is not "never used".
func TestStatsCountsScriptCalls(t *testing.T) {
	t.Parallel()
	st := summarize([]tokens.Record{{Time: time.Now(), Declared: []string{"codemode", "mcp__fs__read"},
		Called: []string{"codemode"}, Inner: []string{"mcp__fs__read", "mcp__fs__read"}, InnerTokens: 40}}, nil)
	calls := map[string]int{}
	for _, tl := range st.Tools {
		calls[tl.Name] = tl.Calls
	}
	if calls["codemode"] != 1 || calls["mcp__fs__read"] != 2 || len(st.NeverUsed) != 0 {
		t.Errorf("calls %v, never used %v", calls, st.NeverUsed)
	}
}
