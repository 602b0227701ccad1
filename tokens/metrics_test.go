package tokens

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sampleRecord(i int) Record {
	return Record{
		Time: time.Date(2026, 7, 1, 12, 0, i, 0, time.UTC), Session: "s1", API: "anthropic-messages",
		Model: "claude-opus-5-5", Class: "changes", Input: 100 + i, Output: 20, CacheRead: 1000, CacheWrite: 50,
		ToolTokens: 300, Tools: 2, Declared: []string{"tool_search", "mcp__github__issue_write"},
		DeclaredTokens: []int{120, 180}, Called: []string{"mcp__github__issue_write"},
	}
}

func TestLogRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{sampleRecord(0), sampleRecord(1)}
	// A time in another zone is written in UTC.
	want[1].Time = want[1].Time.In(time.FixedZone("CEST", 2*3600))
	for _, r := range want {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(want[0]); err == nil {
		t.Error("Append after Close succeeded")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("mode %v, want 0600", perm)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"time":"2026-07-01T12:00:01Z"`) {
		t.Errorf("time not in RFC 3339 UTC:\n%s", raw)
	}
	got, bad, err := ReadLog(bytes.NewReader(raw))
	if err != nil || len(bad) != 0 {
		t.Fatalf("ReadLog: %v, bad lines %v", err, bad)
	}
	want[1].Time = want[1].Time.UTC()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestLogZeroTime(t *testing.T) {
	l, err := OpenLog(filepath.Join(t.TempDir(), "m.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	before := time.Now()
	if err := l.Append(Record{Input: 1}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(l.Path())
	defer f.Close()
	recs, _, _ := ReadLog(f)
	if len(recs) != 1 || recs[0].Time.Before(before.Add(-time.Second)) || recs[0].Time.Location() != time.UTC {
		t.Errorf("records %+v", recs)
	}
}

func TestLogConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	// Two Logs on one file stand for two processes.
	logs := make([]*Log, 2)
	for i := range logs {
		l, err := OpenLog(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		logs[i] = l
	}
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := sampleRecord(i)
				r.Session = fmt.Sprintf("w%d", w)
				// Long lines make a torn write likelier.
				r.Declared = make([]string, 200)
				for j := range r.Declared {
					r.Declared[j] = fmt.Sprintf("mcp__server__tool_%d_%d", w, j)
				}
				r.DeclaredTokens = nil
				if err := logs[w%2].Append(r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, bad, err := ReadLog(bytes.NewReader(raw))
	if err != nil || len(bad) != 0 || len(got) != writers*each {
		t.Fatalf("%d records, bad lines %v, err %v", len(got), bad, err)
	}
	// Every line is whole; a blank line may occur where one Log saw the
	// other's write in progress and started afresh.
	n := 0
	for line := range bytes.Lines(raw) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			t.Errorf("unterminated line %q", line)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	if n != writers*each {
		t.Errorf("%d lines, want %d", n, writers*each)
	}
	per := map[string]int{}
	for _, r := range got {
		per[r.Session]++
	}
	for w := range writers {
		if per[fmt.Sprintf("w%d", w)] != each {
			t.Errorf("writer %d: %d records, want %d", w, per[fmt.Sprintf("w%d", w)], each)
		}
	}
}

func TestReadLogSkipsBadLines(t *testing.T) {
	good := func(i int) string {
		b, err := json.Marshal(sampleRecord(i))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	torn := good(9)[:40]
	input := strings.Join([]string{
		good(0),
		"garbage",
		"",
		`{"time":"2026-07-01T12:00:00Z","input":-1}`,
		`{"input":5}`,
		`[1,2]`,
		`{"time":"2026-07-01T12:00:00Z","declared":["a","b"],"declaredTokens":[1]}`,
		"   ",
		good(1),
		"\x00\xff\xfe",
		torn,
	}, "\n")
	got, bad, err := ReadLog(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Input != 100 || got[1].Input != 101 {
		t.Errorf("records %+v, want the two good ones", got)
	}
	var lines []int
	for _, b := range bad {
		lines = append(lines, b.Line)
		if !strings.HasPrefix(b.Error(), fmt.Sprintf("line %d: ", b.Line)) {
			t.Errorf("error %q", b.Error())
		}
	}
	if diff := cmp.Diff([]int{2, 4, 5, 6, 7, 10, 11}, lines); diff != "" {
		t.Errorf("bad lines (-want +got):\n%s", diff)
	}
}

func TestReadLogLongLine(t *testing.T) {
	b, _ := json.Marshal(sampleRecord(0))
	input := strings.Repeat("x", maxLine+10) + "\n" + string(b) + "\n"
	got, bad, err := ReadLog(strings.NewReader(input))
	if err != nil || len(got) != 1 || len(bad) != 1 || bad[0].Line != 1 {
		t.Errorf("records %d, bad %v, err %v", len(got), bad, err)
	}
}

// TestLogAfterTornLine: a writer that crashed mid-line does not cost the
// next writer its record.
func TestLogAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	b, _ := json.Marshal(sampleRecord(0))
	if err := os.WriteFile(path, append(append(b, '\n'), b[:30]...), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(sampleRecord(1)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	f, _ := os.Open(path)
	defer f.Close()
	got, bad, err := ReadLog(f)
	if err != nil || len(got) != 2 || got[1].Input != 101 || len(bad) != 1 || bad[0].Line != 2 {
		t.Errorf("records %+v, bad %v, err %v", got, bad, err)
	}
}

func TestOpenLogMissingFolder(t *testing.T) {
	_, err := OpenLog(filepath.Join(t.TempDir(), "no", "such", "m.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "metrics log") {
		t.Errorf("err %v", err)
	}
}
