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
)

func TestBenchCommand(t *testing.T) {
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

func TestEmulateCommand(t *testing.T) {
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
// prints codemode's rows, the table by task length and codemode's part of
// the summary.
func TestBenchSearchAndCodemode(t *testing.T) {
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
	if !strings.Contains(out, "By task length") || !strings.Contains(out, "codemode/changes: scripts 1 (failed 0), tool calls in them 2 (failed 0)") {
		t.Errorf("bench --strategies search,codemode:\n%s", out)
	}
}
