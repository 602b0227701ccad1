package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/adapter"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
)

// subset returns the first n tasks of the embedded suite.
func subset(n int) []Task { return DefaultTasks()[:n] }

// stepsIn counts the steps of tasks.
func stepsIn(tasks []Task) int {
	n := 0
	for _, t := range tasks {
		n += len(t.Steps)
	}
	return n
}

// TestRunMeetsTheClaims runs part of the embedded suite through every
// strategy and class and checks the claims the README makes: search
// sends at most 10% of full's tool-definition tokens, changes and bridge
// preserve the whole prefix, and the figures add up.
func TestRunMeetsTheClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six tasks through every strategy and class; go test without -short runs it")
	}
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Tasks: subset(6)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != len(Strategies)*len(Classes) {
		t.Fatalf("%d runs", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if r.Ran != 6 || r.NotFit != 0 {
			t.Errorf("%s/%s: %d tasks ran, %d did not fit", r.Strategy, r.Class, r.Ran, r.NotFit)
		}
		if r.Total.Steps != stepsIn(subset(6)) {
			t.Errorf("%s/%s: %d steps, want %d", r.Strategy, r.Class, r.Total.Steps, stepsIn(subset(6)))
		}
		if got := r.Total.CacheRead + r.Total.CacheWrite + r.Total.Uncached; got != r.Total.Input {
			t.Errorf("%s/%s: read+write+uncached %d != input %d", r.Strategy, r.Class, got, r.Total.Input)
		}
		if r.Strategy == Search {
			if share, ok := rep.share(r); !ok || share > 0.10 {
				t.Errorf("search/%s: %.1f%% of full's tool tokens, want at most 10%%", r.Class, 100*share)
			}
		}
		if (r.Class == llm.ToolsChanges || r.Class == llm.ToolsBridge) && r.Preservation() != 1 {
			t.Errorf("%s/%s: preservation %.4f, want 1", r.Strategy, r.Class, r.Preservation())
		}
	}
	for _, c := range Classes {
		sel, lock, search := rep.Run(Select, c), rep.Run(SelectLock, c), rep.Run(Search, c)
		// The team profile has more than 30 tools: groups, then tools.
		if lock.Total.SelectRequests != 2*lock.Ran || lock.Total.Failed != 0 {
			t.Errorf("select+lock/%s: %d selection requests for %d tasks, %d failed steps", c, lock.Total.SelectRequests, lock.Ran, lock.Total.Failed)
		}
		if sel.Total.SelectRequests <= lock.Total.SelectRequests || sel.Total.SelectInput <= lock.Total.SelectInput {
			t.Errorf("select/%s: %d selection requests, %d tokens; the lock's %d, %d", c, sel.Total.SelectRequests, sel.Total.SelectInput,
				lock.Total.SelectRequests, lock.Total.SelectInput)
		}
		lockPR, ok1 := lock.MultiStepToolTokens()
		searchPR, ok2 := search.MultiStepToolTokens()
		if !ok1 || !ok2 || lockPR >= searchPR {
			t.Errorf("%s: multi-step tool tokens per request: select+lock %.0f, search %.0f", c, lockPR, searchPR)
		}
		if lock.Total.Loaded != lock.Total.Needed {
			t.Errorf("select+lock/%s: loaded %d, needed %d", c, lock.Total.Loaded, lock.Total.Needed)
		}
	}
	if none := rep.Run(Search, llm.ToolsNone); none.Total.Misses == 0 {
		t.Error("search/none rewrites its head at every load, yet no miss was counted")
	}
	last := rep.Summary()
	if !strings.HasPrefix(last, "search/full tool-tokens=") || !strings.Contains(last, "preservation(changes)=1.000 preservation(bridge)=1.000") ||
		!strings.Contains(last, "select+lock preservation(changes)=1.000 preservation(bridge)=1.000") {
		t.Errorf("summary %q", last)
	}
}

// TestSearchBeatsTheReference runs the whole embedded suite through
// toolshelf's tool_search and the reference's: toolshelf loads fewer tools
// per task and finds at least as many steps, at least 98% of them.
func TestSearchBeatsTheReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite")
	}
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Strategies: []Strategy{Search, Reference},
		Classes: []llm.ToolSupport{llm.ToolsChanges}, Load: DefaultLoad})
	if err != nil {
		t.Fatal(err)
	}
	s, ref := rep.comparedRuns()
	if s == nil {
		t.Fatal("search or reference did not run")
	}
	if s.LoadedPerTask() >= ref.LoadedPerTask() || s.Total.Failed > ref.Total.Failed || s.Found() < 0.98 {
		t.Errorf("search: %.1f tools per task, %d failed steps (%.1f%% found); reference: %.1f, %d",
			s.LoadedPerTask(), s.Total.Failed, 100*s.Found(), ref.LoadedPerTask(), ref.Total.Failed)
	}
	if sum := rep.Summary(); !strings.Contains(sum, fmt.Sprintf("loaded/task search=%.1f reference=%.1f", s.LoadedPerTask(), ref.LoadedPerTask())) {
		t.Errorf("summary %q does not compare the loads", sum)
	}
	if note, want := rep.referenceNote(), fmt.Sprintf("%d vs %d failed of %d", s.Total.Failed, ref.Total.Failed, s.Total.Steps); !strings.Contains(note, want) {
		t.Errorf("reference note %q lacks %q", note, want)
	}
}

// TestEvictionCostsAdditionsOneMissPerRemoval: when the runtime unloads
// tools, additions pays exactly one prefix rewrite per removal, while
// changes and bridge keep the prefix.
func TestEvictionCostsAdditionsOneMissPerRemoval(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six tasks through every class; go test without -short runs it")
	}
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Tasks: subset(6), Strategies: []Strategy{Search}, Evict: true})
	if err != nil {
		t.Fatal(err)
	}
	add := rep.Run(Search, llm.ToolsAdditions)
	if add.Total.Removals == 0 || add.Total.Misses != add.Total.Removals {
		t.Errorf("additions: %d misses for %d removals", add.Total.Misses, add.Total.Removals)
	}
	for _, c := range []llm.ToolSupport{llm.ToolsChanges, llm.ToolsBridge} {
		if r := rep.Run(Search, c); r.Total.Misses != 0 || r.Total.Removals == 0 {
			t.Errorf("%s: %d misses, %d removals", c, r.Total.Misses, r.Total.Removals)
		}
	}
}

// TestBudgetUnloadsWhereTheClassPaysLeast: under a budget of declared
// tool tokens, changes and bridge unload as loads pass it and keep the
// prefix (a point after a task's last request is never declared);
// additions and none, whose cache never lapses within a task,
// wait, and pay nothing; the report gives the figures.
func TestBudgetUnloadsWhereTheClassPaysLeast(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six tasks through every class; go test without -short runs it")
	}
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Tasks: subset(6), Strategies: []Strategy{Search}, Budget: 1500})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []llm.ToolSupport{llm.ToolsChanges, llm.ToolsBridge} {
		if r := rep.Run(Search, c); r.Total.Removals == 0 || r.Total.Removals > r.Total.Unloads || r.Preservation() != 1 || r.Total.UnloadRewrite != 0 {
			t.Errorf("%s: %d unload points, %d removals, preservation %.3f, %d tokens rewritten", c, r.Total.Unloads, r.Total.Removals,
				r.Preservation(), r.Total.UnloadRewrite)
		}
	}
	for _, c := range []llm.ToolSupport{llm.ToolsAdditions, llm.ToolsNone} {
		if r := rep.Run(Search, c); r.Total.Unloads != 0 || r.Total.Removals != 0 {
			t.Errorf("%s: %d unload points and %d removals while the cache is warm", c, r.Total.Unloads, r.Total.Removals)
		}
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "budget 1,500 declared tool tokens") || !strings.Contains(b.String(), "search/changes: ") {
		t.Errorf("the report lacks the budget's figures:\n%s", b.String())
	}
}

// TestFullDoesNotFitTheCorpus: declaring the whole corpus exceeds every
// model's window; the report says so and projects its tokens.
func TestFullDoesNotFitTheCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("sends the whole corpus; go test without -short runs it")
	}
	corpus, _ := ProfileNamed("corpus")
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Tasks: subset(2), Profile: corpus, Classes: []llm.ToolSupport{llm.ToolsChanges}})
	if err != nil {
		t.Fatal(err)
	}
	full := rep.Run(Full, llm.ToolsChanges)
	if full.NotFit != 2 || full.Total.ProjectedToolTokens < 400_000 {
		t.Errorf("full over the corpus: %d of 2 did not fit, %d projected tool tokens", full.NotFit, full.Total.ProjectedToolTokens)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if flat := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(flat, "* full (changes): no task fits the model's context window") ||
		!strings.Contains(flat, "so nothing was cached") {
		t.Errorf("the table does not say full does not fit, and what follows:\n%s", b.String())
	}
}

func TestOutputsAndDump(t *testing.T) {
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Tasks: subset(1), Strategies: []Strategy{Search},
		Classes: []llm.ToolSupport{llm.ToolsBridge}, Dump: filepath.Join(dir, "dump")})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteFiles(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.json", "report.md", "report.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, "out", name))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	dumps, _ := filepath.Glob(filepath.Join(dir, "dump", "*-bridge-search-tt01.json"))
	if len(dumps) != rep.Runs[0].Total.Requests || len(dumps) == 0 {
		t.Errorf("%d dumps for %d requests", len(dumps), rep.Runs[0].Total.Requests)
	}
}

// TestCodemodeRunsOneScriptPerTask runs the whole embedded suite through
// search and codemode on changes: codemode makes two requests per task
// (the script, the answer), its scripts call every step's tool once and
// none fails, and, as the README says, it sends fewer input tokens than
// search on the multi-step tasks and more on the one-step tasks. A second
// run gives the same figures.
func TestCodemodeRunsOneScriptPerTask(t *testing.T) {
	cfg := Config{Model: emulatorModel, Strategies: []Strategy{Search, Codemode}, Classes: []llm.ToolSupport{llm.ToolsChanges}}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cm, s := rep.Run(Codemode, llm.ToolsChanges), rep.Run(Search, llm.ToolsChanges)
	if cm.Total.Requests != 2*cm.Ran || cm.Total.Scripts != cm.Ran || cm.Total.ScriptErrors != 0 {
		t.Errorf("codemode: %d requests and %d scripts (%d failed) for %d tasks, want two requests and one script a task",
			cm.Total.Requests, cm.Total.Scripts, cm.Total.ScriptErrors, cm.Ran)
	}
	if cm.Total.InnerCalls != cm.Total.Steps || cm.Total.InnerFailed != 0 || cm.Total.Failed != 0 || cm.Total.InnerTokens == 0 {
		t.Errorf("codemode: %d inner calls (%d failed, %d result tokens) for %d steps, %d failed steps",
			cm.Total.InnerCalls, cm.Total.InnerFailed, cm.Total.InnerTokens, cm.Total.Steps, cm.Total.Failed)
	}
	// Each step's tool is searched for (searchTools) before it is
	// called: the scripts' searches count as tool_search calls do, and
	// nothing is loaded.
	if cm.Total.Searches < cm.Total.Steps || cm.Total.Loaded != 0 {
		t.Errorf("codemode: %d searches for %d steps, %d tools loaded, want a search a step at least and none loaded", cm.Total.Searches, cm.Total.Steps, cm.Total.Loaded)
	}
	cmMulti, sMulti := cm.ByLength(true), s.ByLength(true)
	cmOne, sOne := cm.ByLength(false), s.ByLength(false)
	if cmOne.Tasks == 0 || cmMulti.Tasks == 0 {
		t.Fatalf("the suite has %d one-step and %d multi-step tasks", cmOne.Tasks, cmMulti.Tasks)
	}
	if cmMulti.Input >= sMulti.Input || cmOne.Input <= sOne.Input {
		t.Errorf("input tokens, multi-step: codemode %d, search %d; one-step: codemode %d, search %d", cmMulti.Input, sMulti.Input, cmOne.Input, sOne.Input)
	}
	if sum, want := rep.Summary(), fmt.Sprintf("multi-step: codemode=%d/%d search=%d/%d", cmMulti.Input, cmMulti.Requests, sMulti.Input, sMulti.Requests); !strings.Contains(sum, want) {
		t.Errorf("summary %q lacks %q", sum, want)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	// The notes are wrapped: compare with single spaces.
	if flat := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(flat, "By task length") ||
		!strings.Contains(flat, fmt.Sprintf("scripts %d (failed 0), searches in them %d, tool calls in them %d (failed 0)", cm.Ran, cm.Total.Searches, cm.Total.Steps)) {
		t.Errorf("the table lacks the codemode figures:\n%s", b.String())
	}
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("| codemode | changes | %d | %d | %s | 0 | 0 |", cmMulti.Tasks, cmMulti.Requests, num(cmMulti.Input)); !strings.Contains(md.String(), want) {
		t.Errorf("the Markdown report lacks %q:\n%s", want, md.String())
	}
	cfg.Strategies = []Strategy{Codemode}
	again, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := again.Run(Codemode, llm.ToolsChanges), cm; !reflect.DeepEqual(a.Tasks, b.Tasks) {
		t.Errorf("a second run gives other figures:\n%+v\n%+v", a.Total, b.Total)
	}
}

// TestCodemodeFailsAStepItCannotFind: a step whose queries never find its
// tool is given up by the script, which goes on with the next step; the
// step counts as failed.
func TestCodemodeFailsAStepItCannotFind(t *testing.T) {
	task := Task{ID: "lost", Prompt: "Look up the Sentry issue and tell #oncall.", Lang: "en", Steps: []Step{
		{Server: "sentry", Tool: "get_sentry_resource", Queries: []string{"xylophone quartz", "zephyr marmalade"}},
		{Server: "slack", Tool: "slack_post_message", Queries: []string{"send slack message to channel"}},
	}}
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Tasks: []Task{task}, Strategies: []Strategy{Codemode}, Classes: []llm.ToolSupport{llm.ToolsChanges}})
	if err != nil {
		t.Fatal(err)
	}
	cm := rep.Run(Codemode, llm.ToolsChanges)
	if cm.Total.Failed != 1 || cm.Total.Done != 1 || cm.Total.InnerCalls != 1 || cm.Total.ScriptErrors != 0 {
		t.Errorf("codemode: %d done, %d failed, %d inner calls, %d script errors; want the second step done and the first failed",
			cm.Total.Done, cm.Total.Failed, cm.Total.InnerCalls, cm.Total.ScriptErrors)
	}
}

// emulatorModel is what the command line gives Config.Model: the
// adapters on the benchmark's emulator.
func emulatorModel(em *emulator.Server, p toolshelf.Provider) (llm.Model, error) {
	return adapter.Config{Emulator: em}.New(p)
}
