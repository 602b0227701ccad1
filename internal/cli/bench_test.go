package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/internal/bench"
)

func TestBenchCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	task := `{"id":"x1","prompt":"Post hello to #general on Slack.","lang":"en","steps":[{"server":"slack","tool":"slack_post_message","queries":["post slack message","send message to channel"]}]}` + "\n"
	if err := os.WriteFile(tasks, []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "bench", "--tasks", tasks, "--profile", "team", "--classes", "changes,bridge", "--out", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "search/full tool-tokens=") || !strings.Contains(last, "failed-steps=0") {
		t.Errorf("last line %q", last)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "report.md")); err != nil {
		t.Error(err)
	}
	// --out says what it wrote, on stderr.
	if want := "wrote " + filepath.Join(dir, "out") + ": report.json, report.md, report.svg\n"; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q lacks %q", errOut, want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--strategies", "lazy"}, `--strategies: unknown "lazy"`},
		{[]string{"bench", "--classes", "text"}, `--classes: unknown "text"`},
		{[]string{"bench", "--profile", "huge"}, `unknown profile "huge"`},
		{[]string{"bench", "--profile", "team", "--servers", "slack"}, "not both"},
		{[]string{"bench", "--tasks", filepath.Join(dir, "missing.jsonl")}, "reading tasks"},
	} {
		code, _, errOut := run(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

// TestBenchProfilesInTheREADMEsOrder: without --profile the team
// profile, which the README shows, comes first, then the corpus, each
// with its summary line; with --out each gets its folder.
func TestBenchProfilesInTheREADMEsOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	task := `{"id":"x1","prompt":"Post hello to #general on Slack.","lang":"en","steps":[{"server":"slack","tool":"slack_post_message","queries":["post slack message","send message to channel"]}]}` + "\n"
	if err := os.WriteFile(tasks, []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "bench", "--tasks", tasks, "--strategies", "search", "--classes", "changes", "--out", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	team, corpus := strings.Index(out, "profile team:"), strings.Index(out, "profile corpus:")
	if team < 0 || corpus < team || strings.Count(out, "\nsearch/full tool-tokens=") != 2 {
		t.Errorf("want the team report, then the corpus one, each with its summary:\n%s", out)
	}
	for _, p := range []string{"team", "corpus"} {
		if want := "wrote " + filepath.Join(dir, "out", p) + ": report.json, report.md, report.svg\n"; !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
}

// TestBenchHelp: the help points at what a user can open, and each
// flag's default is said once.
func TestBenchHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"bench", "--help"}, {"search", "--help"}, {"eval", "--help"}} {
		code, out, _ := run(t, args...)
		if code != 0 || strings.Contains(out, "DESIGN") || strings.Contains(out, "§") {
			t.Errorf("%q: exit %d; the help cites a document outside the repository:\n%s", args, code, out)
		}
		for line := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "--ranker string") && strings.Count(line, "default") != 1 {
				t.Errorf("%q: the --ranker line says its default %d times: %q", args, strings.Count(line, "default"), line)
			}
		}
	}
	_, out, _ := run(t, "bench", "--help")
	if !strings.Contains(out, "internal/bench/TASKS.md") {
		t.Errorf("bench --help does not say where the task format is described:\n%s", out)
	}
}

// TestBenchTimeLeft: the estimate of the time left is the time so far
// times the work left over the work done, the work of every profile
// counted by its estimated size, so it carries on when the second
// profile starts instead of starting over from the first one's speed.
func TestBenchTimeLeft(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	p := &benchProgress{names: []string{"team", "corpus"}, works: []float64{80, 60}, total: 140,
		start: clock, now: func() time.Time { return clock }}
	for _, c := range []struct {
		after   time.Duration
		profile int
		pr      bench.Progress
		want    string
	}{
		// Nothing is known before 2% is done.
		{1 * time.Second, 0, bench.Progress{Done: 1, Total: 720, WorkDone: 1, Work: 160}, "profile team (1 of 2), 1/720 tasks"},
		// Half of team's work (40 of 140) in 40 s: 100 s left.
		{40 * time.Second, 0, bench.Progress{Done: 300, Total: 720, WorkDone: 80, Work: 160}, "profile team (1 of 2), 300/720 tasks, about 1m40s left"},
		// Team done in 80 s; the corpus, 60 of 140, takes 60 s more.
		{80 * time.Second, 1, bench.Progress{Done: 0, Total: 720, WorkDone: 0, Work: 30}, "profile corpus (2 of 2), 0/720 tasks, about 1m0s left"},
		{125 * time.Second, 1, bench.Progress{Done: 700, Total: 720, WorkDone: 27, Work: 30}, "profile corpus (2 of 2), 700/720 tasks, about 6s left"},
	} {
		clock = p.start.Add(c.after)
		if got := p.status(c.profile, c.pr); got != c.want {
			t.Errorf("after %v: %q, want %q", c.after, got, c.want)
		}
	}
	// Off a terminal there is no bar, but the lines have their callbacks;
	// with --quiet there is neither, and no estimate is made.
	prog, err := newBenchProgress(&strings.Builder{}, false, bench.Config{}, bench.Profiles())
	if err != nil || prog.bar != nil || prog.profile(0) == nil || prog.step(0) == nil || len(prog.works) != 2 {
		t.Errorf("off a terminal: %+v, %v", prog, err)
	}
	prog, err = newBenchProgress(&strings.Builder{}, true, bench.Config{}, bench.Profiles())
	if err != nil || prog.bar != nil || prog.profile(0) != nil || prog.step(0) != nil || len(prog.works) != 0 {
		t.Errorf("--quiet: %+v, %v", prog, err)
	}
}

// TestBenchProgressOnStderr: off a terminal bench says on stderr what it
// does from its start, a line a step (loading, measuring, each strategy
// and class measured, a tenth of the work, the profile done); --quiet
// says nothing there; stdout, the report, is the same either way.
func TestBenchProgressOnStderr(t *testing.T) {
	t.Parallel()
	tasks := filepath.Join(t.TempDir(), "tasks.jsonl")
	task := `{"id":"x1","prompt":"Post hello to #general on Slack.","lang":"en","steps":[{"server":"slack","tool":"slack_post_message","queries":["post slack message","send message to channel"]}]}` + "\n"
	if err := os.WriteFile(tasks, []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"bench", "--tasks", tasks, "--profile", "team", "--strategies", "search,full", "--classes", "changes,bridge"}
	code, out, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	const prefix = "bench: profile team (1 of 1): "
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			t.Errorf("stderr line %q does not start with %q", l, prefix)
		}
	}
	want := []string{"starting", "loading the tokenizer", "loading profile team from the built-in catalog",
		"measuring 11 servers, "}
	if len(lines) < len(want)+4+2 {
		t.Fatalf("stderr has %d lines, want the steps, 4 runs measured, the tenths and the end:\n%s", len(lines), errOut)
	}
	for i, w := range want {
		if got := strings.TrimPrefix(lines[i], prefix); !strings.HasPrefix(got, w) {
			t.Errorf("line %d %q, want %q first", i, got, w)
		}
	}
	if !strings.Contains(lines[3], ": 4 task runs (1 tasks × 2 strategies × 2 classes)") {
		t.Errorf("the measuring line %q does not count the task runs", lines[3])
	}
	for _, w := range []string{"measured search on changes: 1 tasks in ", "measured full on bridge: 1 tasks in ", "4/4 tasks"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	if last := strings.TrimPrefix(lines[len(lines)-1], prefix); !strings.HasPrefix(last, "done in ") {
		t.Errorf("last line %q, want the profile done", last)
	}
	quietCode, quietOut, quietErr := run(t, append(args, "--quiet")...)
	if quietCode != 0 || quietErr != "" {
		t.Errorf("--quiet: exit %d, stderr %q", quietCode, quietErr)
	}
	if quietOut != out {
		t.Errorf("stdout differs with --quiet:\n%s\n--- without:\n%s", quietOut, out)
	}
}

func TestEmulateCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"emulate", "--listen", "127.0.0.1:0", "--quiet"}, strings.NewReader(""), outW, io.Discard)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	addr := strings.Fields(line)[3]
	if !strings.HasPrefix(addr, "http://127.0.0.1:") {
		t.Fatalf("first line %q", line)
	}
	req, _ := http.NewRequest("POST", addr+"/v1/chat/completions",
		strings.NewReader(`{"model":"llama-3.3-70b","messages":[{"role":"user","content":"hello"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "echo: hello") {
		t.Errorf("status %d: %s", res.StatusCode, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestBenchSearchAndCodemode: bench --strategies search,codemode runs and
// prints codemode's rows, the table by task length, the scripts' searches
// (a search a step: each step's first query finds its tool) and codemode's
// part of the summary.
func TestBenchSearchAndCodemode(t *testing.T) {
	t.Parallel()
	tasks := filepath.Join(t.TempDir(), "tasks.jsonl")
	task := `{"id":"x1","prompt":"Find the Sentry issue and post it to #oncall on Slack.","lang":"en","steps":[` +
		`{"server":"sentry","tool":"get_sentry_resource","queries":["sentry issue details by id"]},` +
		`{"server":"slack","tool":"slack_post_message","queries":["post slack message","send message to channel"]}]}` + "\n"
	if err := os.WriteFile(tasks, []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "bench", "--strategies", "search,codemode", "--tasks", tasks, "--profile", "team", "--classes", "changes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "input/requests(changes) multi-step: codemode=") || !strings.HasSuffix(last, "codemode failed-steps=0") {
		t.Errorf("last line %q", last)
	}
	// The notes are wrapped: compare with single spaces.
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "By task length") ||
		!strings.Contains(flat, "codemode/changes: scripts 1 (failed 0), searches in them 2, tool calls in them 2 (failed 0)") {
		t.Errorf("bench --strategies search,codemode:\n%s", out)
	}
}

// TestBenchLearn: bench --learn runs search and search+learned, whose
// note names the tool the first pass called in every task as always
// loaded; its private state is a temporary folder, removed at the end,
// and the user's state folder gets nothing.
func TestBenchLearn(t *testing.T) {
	dir := t.TempDir()
	state, tmp := filepath.Join(dir, "state"), filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("TMPDIR", tmp)
	tasks := filepath.Join(dir, "tasks.jsonl")
	var b strings.Builder
	for _, id := range []string{"x1", "x2"} {
		b.WriteString(`{"id":"` + id + `","prompt":"Tell the team the release is out.","lang":"en","steps":[{"server":"slack",` +
			`"tool":"slack_post_message","queries":["post slack message","send message to channel"]}]}` + "\n")
	}
	if err := os.WriteFile(tasks, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "bench", "--learn", "--tasks", tasks, "--profile", "team", "--classes", "changes", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	note := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"search+learned changes", "search+learned (--learn): the suite ran twice",
		"always-load mcp__slack__slack_post_message"} {
		if !strings.Contains(note, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("the state folder was written: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the temporary state is left: %v", left)
	}
}
