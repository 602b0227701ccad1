package bench

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
)

// The README's team table and picture, which scripts/bench-report writes
// from one run.
const (
	readmeFile     = "../../README.md"
	readmePicture  = "../../docs/bench-team.svg"
	readmeBegin    = "<!-- bench-team begin: written by scripts/bench-report -->"
	readmeEnd      = "<!-- bench-team end -->"
	regenerateHint = "run scripts/bench-report, which writes both from one run"
)

// TestREADMEPictureMatchesItsTable: the README's picture of the bench,
// docs/bench-team.svg, is what WriteSVG draws from the README's table of
// the team profile, so neither the figures nor the drawing changed
// without the other.
func TestREADMEPictureMatchesItsTable(t *testing.T) {
	readme, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "\n"+readmeBegin+"\n")
	block, _, ok2 := strings.Cut(block, "\n"+readmeEnd+"\n")
	if !ok || !ok2 {
		t.Fatalf("README.md has no block between %q and %q", readmeBegin, readmeEnd)
	}
	rep := &Report{Profile: "team"}
	var header []string
	for line := range strings.SplitSeq(block, "\n") {
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if header == nil {
			header = cells
			continue
		}
		rep.Runs = append(rep.Runs, runFromRow(t, header, cells))
	}
	if len(rep.Runs) != len(Strategies)*len(Classes) {
		t.Fatalf("the README's team table has %d runs, want %d", len(rep.Runs), len(Strategies)*len(Classes))
	}
	var b strings.Builder
	if err := rep.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	picture, err := os.ReadFile(readmePicture)
	if err != nil {
		t.Fatalf("%v: %s", err, regenerateHint)
	}
	if b.String() != string(picture) {
		t.Errorf("%s is not what the README's team table draws: %s", readmePicture, regenerateHint)
	}
}

// runFromRow reads what the chart needs from a row of report.md's table.
func runFromRow(t *testing.T, header, cells []string) *RunResult {
	t.Helper()
	if len(cells) != len(header) {
		t.Fatalf("a row of %d cells under %d headers: %q", len(cells), len(header), cells)
	}
	cell := func(name string) string {
		for i, h := range header {
			if h == name {
				return cells[i]
			}
		}
		t.Fatalf("the table has no column %q: %q", name, header)
		return ""
	}
	number := func(name string) int {
		s := strings.ReplaceAll(cell(name), ",", "")
		if s == "—" {
			return 0
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("column %q: %v", name, err)
		}
		return n
	}
	r := &RunResult{Strategy: Strategy(cell("strategy")), Class: llm.ToolSupport(cell("class")), Total: TaskResult{
		Input: number("input tokens"), CacheRead: number("cache read"), CacheWrite: number("cache write"),
		Uncached: number("uncached"), SelectInput: number("selection input"),
	}}
	tasks, notFit, _ := strings.Cut(cell("tasks"), " (")
	var err error
	if r.Ran, err = strconv.Atoi(tasks); err != nil {
		t.Fatalf("tasks %q: %v", cell("tasks"), err)
	}
	if n, _, ok := strings.Cut(notFit, " do not fit"); ok {
		if r.NotFit, err = strconv.Atoi(n); err != nil {
			t.Fatalf("tasks %q: %v", cell("tasks"), err)
		}
	}
	return r
}
