package bench

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// suiteTask returns the embedded suite's task id.
func suiteTask(t *testing.T, id string) Task {
	t.Helper()
	for _, task := range DefaultTasks() {
		if task.ID == id {
			return task
		}
	}
	t.Fatalf("no task %s in the embedded suite", id)
	return Task{}
}

// learnRun runs a learning run of tasks on changes.
func learnRun(t *testing.T, tasks []Task) (*Report, LearnComparison) {
	t.Helper()
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Tasks: tasks, Classes: []llm.ToolSupport{llm.ToolsChanges},
		Learn: true, Strategies: []Strategy{Full}, Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Strategy != Search || rep.Runs[1].Strategy != SearchLearned {
		t.Fatalf("runs %v, want search then search+learned, whatever the strategies asked", rep.Runs)
	}
	cmp, ok := rep.CompareLearn(llm.ToolsChanges)
	if !ok {
		t.Fatal("no comparison of the passes")
	}
	return rep, cmp
}

// TestLearnAliases: tt01, tt14 and tt30 (no tool in two of them) find some tools only with a step's
// second query in the first pass; in the second, whose prefetch loads
// none of their tools and which loads none always, the first query finds
// them: the aliases the first pass's transcripts taught.
func TestLearnAliases(t *testing.T) {
	rep, cmp := learnRun(t, []Task{suiteTask(t, "tt01"), suiteTask(t, "tt14"), suiteTask(t, "tt30")})
	if cmp.Aliases == 0 || len(cmp.AlwaysLoad) != 0 {
		t.Fatalf("learned %d aliases and always-load %v, want aliases and no always-load tool", cmp.Aliases, cmp.AlwaysLoad)
	}
	first, second := rep.Runs[0], rep.Runs[1]
	misses := 0
	for i, a := range first.Tasks {
		b := second.Tasks[i]
		if a.LaterQuery == 0 {
			continue
		}
		misses++
		if b.Prefetched != 0 {
			t.Fatalf("%s: the second pass prefetched %d tools: the test needs the aliases alone", b.ID, b.Prefetched)
		}
		if b.LaterQuery != 0 || b.Searches > a.Searches || b.Failed != 0 {
			t.Errorf("%s: later-query steps %d → %d, searches %d → %d, failed %d: want the first query to find every tool",
				a.ID, a.LaterQuery, b.LaterQuery, a.Searches, b.Searches, b.Failed)
		}
	}
	if misses < 2 {
		t.Fatalf("%d tasks of the first pass found a tool only with a later query: the test needs two", misses)
	}
	var w strings.Builder
	if err := rep.WriteTable(&w); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "search+learned (--learn): the suite ran twice") || !strings.Contains(rep.Summary(), " | learn(changes): requests=") {
		t.Errorf("the report has no note of the learning run:\n%s", w.String())
	}
}

// TestLearnAlwaysLoad: a task that runs in every session of the first
// pass makes the usage suggestion load its tools always, so the second
// pass declares them from the first request and searches for none.
func TestLearnAlwaysLoad(t *testing.T) {
	task := suiteTask(t, "tt30")
	again := task
	again.ID = "tt30-again"
	rep, cmp := learnRun(t, []Task{task, again})
	first, second := rep.Runs[0], rep.Runs[1]
	if first.Total.Searches == 0 {
		t.Fatal("the first pass made no search")
	}
	var names []string
	for _, s := range task.Steps {
		names = append(names, "mcp__"+strings.ReplaceAll(s.Server, "-", "_")+"__"+strings.ReplaceAll(s.Tool, "-", "_"))
	}
	for _, n := range cmp.AlwaysLoad {
		if !slices.ContainsFunc(names, func(want string) bool { return strings.EqualFold(n, want) }) {
			t.Errorf("always-load %s, which no step calls (steps: %v)", n, names)
		}
	}
	if len(cmp.AlwaysLoad) != len(task.Steps) {
		t.Fatalf("always-load %v, want the task's %d tools", cmp.AlwaysLoad, len(task.Steps))
	}
	for _, b := range second.Tasks {
		if b.Searches != 0 || b.Failed != 0 || b.Requests != len(task.Steps)+1 {
			t.Errorf("%s, second pass: %d searches, %d failed steps, %d requests: want the tools declared from the first request",
				b.ID, b.Searches, b.Failed, b.Requests)
		}
	}
}

// TestLearnBreaksNearTies: every search of tt11, tt30, tt03 and tt07
// loads several near ties in the first pass (the zero load policy loads
// every hit) and the model calls few of them; in the second, the aliases
// of those queries load the tools that were called and leave the rest on
// the shelf. No tool is used in most of the four sessions, so none is
// loaded always.
func TestLearnBreaksNearTies(t *testing.T) {
	rep, cmp := learnRun(t, []Task{suiteTask(t, "tt11"), suiteTask(t, "tt30"), suiteTask(t, "tt03"), suiteTask(t, "tt07")})
	if len(cmp.AlwaysLoad) != 0 {
		t.Fatalf("always-load %v: the test needs the aliases alone", cmp.AlwaysLoad)
	}
	first, second := rep.Runs[0], rep.Runs[1]
	var before, after int
	for i, a := range first.Tasks {
		b := second.Tasks[i]
		if a.Loaded <= a.Needed {
			t.Fatalf("%s: the first pass loaded %d tools for %d needed: the test needs near ties", a.ID, a.Loaded, a.Needed)
		}
		if b.Failed != 0 || b.Prefetched != 0 || b.Loaded >= a.Loaded {
			t.Errorf("%s: loaded %d → %d tools for %d needed, %d prefetched, %d failed: want fewer loaded, none failed",
				a.ID, a.Loaded, b.Loaded, b.Needed, b.Prefetched, b.Failed)
		}
		before, after = before+a.Loaded, after+b.Loaded
	}
	if 2*after > before {
		t.Errorf("loaded %d → %d tools in all: want at most half", before, after)
	}
}

// TestLearnFromAnotherSuite: tt22 never finds linear_createIssue, which
// both its queries rank as a near tie below the load policy's bound; a
// first pass over tt01, which calls it, and two tasks of other servers
// (so that no tool is used in most sessions and loaded always) makes it
// a tool the user's sessions called, so it goes first among the near
// ties and tt22 has no failed step. The report compares search and
// search+learned on tt22.
func TestLearnFromAnotherSuite(t *testing.T) {
	rep, err := Run(context.Background(), Config{Model: emulatorModel, Tasks: []Task{suiteTask(t, "tt22")},
		LearnFrom: []Task{suiteTask(t, "tt01"), suiteTask(t, "tt03"), suiteTask(t, "tt07")}, Classes: []llm.ToolSupport{llm.ToolsChanges}, Learn: true, Load: toolsearch.DefaultLoad})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Tasks[0].ID != "tt22" || rep.Runs[1].Tasks[0].ID != "tt22" {
		t.Fatalf("runs %v: want search and search+learned over tt22", rep.Runs)
	}
	cmp, ok := rep.CompareLearn(llm.ToolsChanges)
	if !ok {
		t.Fatal("no comparison of the passes")
	}
	if len(cmp.AlwaysLoad) != 0 || rep.Runs[1].Tasks[0].Prefetched != 0 {
		t.Fatalf("always-load %v, %d prefetched: the test needs the near ties alone", cmp.AlwaysLoad, rep.Runs[1].Tasks[0].Prefetched)
	}
	if cmp.From != 3 || cmp.Failed[0] != 1 || cmp.Failed[1] != 0 {
		t.Errorf("learned from %d tasks, failed steps %d → %d: want 3 tasks, 1 → 0", cmp.From, cmp.Failed[0], cmp.Failed[1])
	}
	var w strings.Builder
	if err := rep.WriteTable(&w); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "search ran over another suite of 3 tasks") {
		t.Errorf("the note does not say the first pass learned from another suite:\n%s", w.String())
	}
}
