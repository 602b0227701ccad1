package bench

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Task is one agent task: a user request and the tools an agent must call
// for it, in order (the format: internal/bench/TASKS.md).
type Task struct {
	ID     string `json:"id"`
	Prompt string `json:"prompt"`
	Lang   string `json:"lang"`
	Steps  []Step `json:"steps"`
}

// Step is one tool the task needs, with what a model would search for it
// first and the rephrasing it would try next.
type Step struct {
	Server  string   `json:"server"`
	Tool    string   `json:"tool"`
	Queries []string `json:"queries"`
}

//go:embed tasks.jsonl
var embeddedTasks []byte

// DefaultTasks returns the embedded task suite (tasks.jsonl; its README
// says how it was written).
func DefaultTasks() []Task {
	tasks, err := ParseTasks("tasks.jsonl", bytes.NewReader(embeddedTasks))
	if err != nil {
		panic("bench: the embedded suite is invalid: " + err.Error())
	}
	return tasks
}

// ReadTasks reads a task file.
func ReadTasks(path string) ([]Task, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading tasks: %w", err)
	}
	defer f.Close()
	return ParseTasks(path, f)
}

// ParseTasks reads tasks as JSON Lines, one task per line; blank lines are
// skipped. Every problem names the file and line.
func ParseTasks(name string, r io.Reader) ([]Task, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	var tasks []Task
	seen := map[string]int{}
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		var t Task
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s:%d: %w (a task is {\"id\", \"prompt\", \"lang\", \"steps\": [{\"server\", \"tool\", \"queries\"}]})", name, line, err)
		}
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("%s:%d: task %q: %w", name, line, t.ID, err)
		}
		if first, ok := seen[t.ID]; ok {
			return nil, fmt.Errorf("%s:%d: task id %q repeats line %d", name, line, t.ID, first)
		}
		seen[t.ID] = line
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: no tasks", name)
	}
	return tasks, nil
}

func (t *Task) check() error {
	switch {
	case t.ID == "":
		return fmt.Errorf("no id")
	case strings.TrimSpace(t.Prompt) == "":
		return fmt.Errorf("no prompt")
	case len(t.Steps) == 0:
		return fmt.Errorf("no steps")
	}
	for i, s := range t.Steps {
		if s.Server == "" || s.Tool == "" {
			return fmt.Errorf("step %d needs a server and a tool", i+1)
		}
		if len(s.Queries) == 0 {
			return fmt.Errorf("step %d (%s/%s) has no queries", i+1, s.Server, s.Tool)
		}
		for _, q := range s.Queries {
			if strings.TrimSpace(q) == "" {
				return fmt.Errorf("step %d (%s/%s) has an empty query", i+1, s.Server, s.Tool)
			}
		}
	}
	return nil
}
