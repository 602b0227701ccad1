package mcpclient

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tool"
)

func TestSectionListsShelfServersSorted(t *testing.T) {
	t.Parallel()
	direct := memServer("direct")
	direct.Exposure = tool.Direct
	always := memServer("always")
	always.AlwaysLoad = true
	off := memServer("off")
	off.Disabled = true
	zeta := memServer("zeta")
	zeta.Description = "  Zeta tools.\nMore about zeta."
	alpha := memServer("alpha-one")
	alpha.Exposure = tool.Codemode
	mid := memServer("mid")
	mid.Exposure = tool.Direct
	mid.ToolExposure = []ToolExposure{{Pattern: "search_*", Exposure: tool.Deferred}}
	m := mustManager(t, &Config{Servers: []ServerConfig{zeta, direct, always, off, alpha, mid}})
	m.byName["mid"].instructions = "\n  Mid instructions first line.\nSecond line."
	got := m.Section()
	want := llm.Set(SectionName, sectionIntro+sectionCodemodeIntro+"\n"+
		"- mcp__alpha_one (codemode)\n"+
		"- mcp__mid (tool_search): Mid instructions first line.\n"+
		"- mcp__zeta (tool_search): Zeta tools.")
	if got.Name != want.Name || got.Text == nil || *got.Text != *want.Text {
		t.Errorf("section:\n%s\nwant:\n%s", deref(got.Text), *want.Text)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<deleted>"
	}
	return *s
}

func TestSectionDeletedWithoutShelfServers(t *testing.T) {
	t.Parallel()
	direct := memServer("direct")
	direct.Exposure = tool.Direct
	for _, cfg := range []*Config{nil, {}, {Servers: []ServerConfig{direct}}} {
		m := mustManager(t, cfg)
		if got := m.Section(); got.Name != SectionName || got.Text != nil {
			t.Errorf("section = %+v, want a deletion", got)
		}
	}
}

func TestSectionIntroWithoutCodemode(t *testing.T) {
	t.Parallel()
	got := renderSection([]sectionServer{{namespace: "mcp__a", summary: "A."}})
	if want := sectionIntro + "\n- mcp__a (tool_search): A."; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, "codemode") {
		t.Errorf("the intro mentions codemode without codemode servers")
	}
}

func TestSectionSummaryCap(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 100) // 500 characters
	got := renderSection([]sectionServer{{namespace: "mcp__a", summary: firstLine(long)}})
	_, line, _ := strings.Cut(got, "- mcp__a (tool_search): ")
	if utf16Len(line) != maxSummaryChars || !strings.HasSuffix(line, "word…") {
		t.Errorf("summary is %d units: %q", utf16Len(line), line)
	}
	// Trailing space before the cut is dropped.
	if got := truncateUTF16("abc def", 5); got != "abc…" {
		t.Errorf("truncate = %q", got)
	}
	// Characters outside the BMP count twice, and are never split.
	emoji := strings.Repeat("😀", 10) // 20 units
	if got := truncateUTF16(emoji, 20); got != emoji {
		t.Errorf("a text of exactly the limit was cut: %q", got)
	}
	if got := truncateUTF16(emoji, 6); got != "😀😀…" || utf16Len(got) != 5 {
		t.Errorf("truncate emoji = %q (%d units)", got, utf16Len(got))
	}
	if got := truncateUTF16("abc", 1); got != "" {
		t.Errorf("no room: %q", got)
	}
}

func TestSectionServerCapAndOmission(t *testing.T) {
	t.Parallel()
	var servers []sectionServer
	for i := range 200 {
		servers = append(servers, sectionServer{
			namespace: fmt.Sprintf("mcp__server_with_a_rather_long_name_%03d", i),
			summary:   strings.Repeat("é", 300),
		})
	}
	got := renderSection(servers)
	if n := utf16Len(got); n > maxSectionChars {
		t.Errorf("section is %d units, over %d", n, maxSectionChars)
	}
	lines := strings.Split(got, "\n")
	last := lines[len(lines)-1]
	kept := len(lines) - 2
	if want := fmt.Sprintf("- … %d more server(s); find their tools with tool_search", 200-kept); last != want {
		t.Errorf("last line = %q, want %q", last, want)
	}
	// The servers that fit are the first ones, in order, without summaries
	// (no room is left for them).
	for i, l := range lines[1 : len(lines)-1] {
		if want := fmt.Sprintf("- mcp__server_with_a_rather_long_name_%03d (tool_search)", i); l != want {
			t.Fatalf("line %d = %q, want %q", i+1, l, want)
		}
	}
	// One more server would not have fitted.
	heads := append([]string{lines[0]}, lines[1:len(lines)-1]...)
	heads = append(heads, fmt.Sprintf("- mcp__server_with_a_rather_long_name_%03d (tool_search)", kept),
		fmt.Sprintf("- … %d more server(s); find their tools with tool_search", 200-kept-1))
	if utf16Len(strings.Join(heads, "\n")) <= maxSectionChars {
		t.Errorf("kept %d servers, but %d fit", kept, kept+1)
	}
}

func TestSectionSharedSummaryBudget(t *testing.T) {
	t.Parallel()
	var servers []sectionServer
	for i := range 30 {
		servers = append(servers, sectionServer{namespace: fmt.Sprintf("mcp__s%02d", i), summary: strings.Repeat("x", 300)})
	}
	got := renderSection(servers)
	lines := strings.Split(got, "\n")
	if len(lines) != 31 {
		t.Fatalf("%d lines, want all 30 servers and the intro", len(lines))
	}
	headsSize := utf16Len(sectionIntro) + 30*(1+utf16Len("- mcp__s00 (tool_search)"))
	budget := (maxSectionChars-headsSize)/30 - 2
	if budget >= maxSummaryChars {
		t.Fatalf("test setup: budget %d does not bind", budget)
	}
	for _, l := range lines[1:] {
		_, sum, _ := strings.Cut(l, ": ")
		if utf16Len(sum) != budget || !strings.HasSuffix(sum, "…") {
			t.Fatalf("summary of %d units, want %d: %q", utf16Len(sum), budget, l)
		}
	}
	if n := utf16Len(got); n > maxSectionChars {
		t.Errorf("section is %d units", n)
	}
}

func TestFirstLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                       "",
		"  one\ntwo":             "one",
		"\n\n  one  \r\ntwo":     "one",
		"tab\tand\x1b[31mred":    "tab and [31mred",
		"only line  ":            "only line",
		"\x00lead\x00 trail\x7f": "lead  trail",
	} {
		if got := firstLine(in); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
