package bench

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolshelf/toolshelf/llm"
)

// sampleRun returns a result of one multi-step task holding the totals.
func sampleRun(s Strategy, c llm.ToolSupport, total TaskResult) *RunResult {
	total.Steps = max(total.Steps, 2)
	return &RunResult{Strategy: s, Class: c, Tasks: []TaskResult{total}, Total: total, Ran: 1}
}

// sampleReport is a report of the figures' sizes the team profile gives:
// tens of millions of tokens for full, a selection that costs more
// without the lock than with it.
func sampleReport() *Report {
	return &Report{Profile: "team", Description: "11 servers", Tasks: 36, Load: "at most 8 ranked", Runs: []*RunResult{
		sampleRun(Full, llm.ToolsChanges, TaskResult{Requests: 121, Input: 12_370_001, ToolTokens: 12_168_607, CacheRead: 12_215_886,
			CacheWrite: 154_115, Ideal: 12_215_886, Loaded: 17_532, Needed: 83, LoadedTokens: 12_168_607, NeededTokens: 98_300}),
		sampleRun(Search, llm.ToolsChanges, TaskResult{Requests: 194, Input: 806_380, ToolTokens: 441_513, CacheRead: 623_098,
			CacheWrite: 183_282, Ideal: 623_098, Loaded: 336, Needed: 83, LoadedTokens: 367_000, NeededTokens: 98_300}),
		sampleRun(Select, llm.ToolsChanges, TaskResult{Requests: 121, Input: 298_715, ToolTokens: 105_791, CacheRead: 188_338,
			CacheWrite: 110_377, Ideal: 190_600, Misses: 1, Loaded: 83, Needed: 83, SelectRequests: 242, SelectInput: 823_486}),
		sampleRun(SelectLock, llm.ToolsChanges, TaskResult{Requests: 121, Input: 298_715, ToolTokens: 105_791, CacheRead: 188_338,
			CacheWrite: 110_377, Ideal: 190_600, Misses: 1, Loaded: 83, Needed: 83, SelectRequests: 72, SelectInput: 90_992}),
	}}
}

// TestTableFitsAndGroupsThousands: the text report fits 120 columns and
// groups thousands with commas; its summary line, for programs, keeps
// plain numbers.
func TestTableFitsAndGroupsThousands(t *testing.T) {
	var b strings.Builder
	if err := sampleReport().WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	for _, want := range []string{"12,370,001", "12,168,607", "823,486", "17,532/83"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "search/full tool-tokens=3.6% ") || !strings.Contains(last, " search=2276 select+lock=874;") {
		t.Errorf("summary %q", last)
	}
}

// TestTableSaysWhyFullDoesNotFit: when no task of a run fits the context
// window, its row shows no preservation (there was nothing to preserve)
// and a note says why cache reads are 0, every step failed and the tool
// tokens, projected, exceed the input.
func TestTableSaysWhyFullDoesNotFit(t *testing.T) {
	rep := sampleReport()
	notFit := func(c llm.ToolSupport) *RunResult {
		r := sampleRun(Full, c, TaskResult{Requests: 36, Input: 15_948_543, ProjectedToolTokens: 69_413_468, Steps: 85, Failed: 85,
			DoesNotFit: true, Loaded: 56_304, Needed: 83})
		r.NotFit = 1
		return r
	}
	rep.Runs[0] = notFit(llm.ToolsChanges)
	rep.Runs = append(rep.Runs, notFit(llm.ToolsBridge))
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"69,413,468*",
		"* full (changes, bridge): no task fits the model's context window. The emulator refused each task's first request",
		"so nothing was cached (cache read 0, no preservation to show) and every step failed",
		"the tool tokens are projected (the refused request's tool tokens × the requests the task needs), so they exceed the input",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "* full") != 1 {
		t.Errorf("want one note for the runs that do not fit:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "full" && strings.Contains(l, "56,304/83") &&
			(strings.Contains(l, "1.000") || !strings.Contains(l, "—")) {
			t.Errorf("a full row that did not fit shows a preservation: %q", l)
		}
	}
}

// TestSVGCountsSelectionInput: the chart's bars include the selection
// requests' input, so select, which selects before every request, is
// longer than select+lock although their conversations cost the same.
func TestSVGCountsSelectionInput(t *testing.T) {
	var b strings.Builder
	if err := sampleReport().WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	// Each bar's segments follow its label; the total after them.
	widths := map[string]float64{}
	labels := map[string]string{}
	dec := xml.NewDecoder(strings.NewReader(svg))
	current := ""
	inText := false
	widthRE := regexp.MustCompile(`^[0-9.]+$`)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inText = tok.Name.Local == "text"
			if tok.Name.Local == "rect" && current != "" {
				for _, a := range tok.Attr {
					if a.Name.Local == "width" && widthRE.MatchString(a.Value) {
						w, _ := strconv.ParseFloat(a.Value, 64)
						widths[current] += w
					}
				}
			}
		case xml.CharData:
			text := string(tok)
			if inText && strings.Contains(text, " / ") {
				current = text
			} else if inText && current != "" && labels[current] == "" && strings.ContainsAny(text, "0123456789") {
				labels[current] = text
			}
		case xml.EndElement:
			inText = false
		}
	}
	sel, lock := widths["select / changes"], widths["select+lock / changes"]
	if sel <= lock || lock == 0 {
		t.Errorf("bar widths: select %.1f, select+lock %.1f; want select's longer\n%s", sel, lock, svg)
	}
	if !strings.Contains(svg, "selection requests") {
		t.Errorf("no legend for the selection requests:\n%s", svg)
	}
	if got := labels["select / changes"]; !strings.HasPrefix(got, "1.1M") {
		t.Errorf("select's label %q, want its input and selection input, 1.1M", got)
	}
}

// TestProgressReportsTheEstimatedWork: a run reports after every task the
// work done, weighted as Estimate weighs it, up to the whole estimate; a
// full task on the team profile weighs several searched ones, and one
// refused on the corpus less than one that runs.
func TestProgressReportsTheEstimatedWork(t *testing.T) {
	var last Progress
	calls := 0
	cfg := Config{Model: emulatorModel, Tasks: subset(2), Strategies: []Strategy{Search, SelectLock}, Classes: []llm.ToolSupport{llm.ToolsBridge},
		Progress: func(p Progress) { last = p; calls++ }}
	if _, err := Run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	want, err := Estimate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 4 || last.Done != 4 || last.Total != 4 || math.Abs(last.Work-want) > 1e-9*want || math.Abs(last.WorkDone-want) > 1e-9*want {
		t.Errorf("%d calls, the last %+v; want 4 of 4 tasks and work %v", calls, last, want)
	}
	corpus, _ := ProfileNamed("corpus")
	estimate := func(p Profile, s Strategy) float64 {
		w, err := Estimate(Config{Tasks: subset(6), Profile: p, Strategies: []Strategy{s}, Classes: []llm.ToolSupport{llm.ToolsChanges}})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	team, _ := ProfileNamed("team")
	if full, search := estimate(team, Full), estimate(team, Search); full < 5*search {
		t.Errorf("team: full %v, search %v; full's requests carry 99k tokens of definitions", full, search)
	}
	if refused, full := estimate(corpus, Full), estimate(team, Full); refused >= full {
		t.Errorf("full over the corpus, refused at once, %v; over the team, %v", refused, full)
	}
}
