package eval_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/internal/eval"
)

// FuzzReadQueries reads arbitrary bytes as a labeled query file.
// ReadQueries must not panic; it returns queries or an error, never both,
// and every problem it reports names the file. Accepted, each non-blank
// line is one JSON object and gives one query, with an id used once, a
// query, a language and relevant tools that each name a server and a tool;
// the queries written out again read back the same.
func FuzzReadQueries(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*.jsonl"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no query files (%v)", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		// One query at a time, from the first lines: short inputs
		// mutate and minimize faster.
		lines := bytes.SplitAfter(data, []byte("\n"))
		for _, line := range lines[:min(len(lines), 12)] {
			f.Add(line)
		}
	}
	for _, s := range []string{
		"", "\n \n", "{}", "null", "[]", `{"id":"a","query":"q","relevant":[{"server":"s","tool":"t"}]}`,
		`{"id":"a","query":"q","relevant":[{"server":"s","tool":"t"}]} {"id":"b"}`,
		`{"id":"a","query":"q","relevant":[{"server":"s","tool":"t"}]}` + "\r\n" + `{"id":"a","query":"q","relevant":[{"server":"s","tool":"t"}]}`,
		`{"id":"a","query":" ","relevant":[{"server":"s","tool":"t"}]}`, `{"id":"a","query":"q","relevant":[]}`,
		`{"id":"a","query":"q","relevant":[null,{"server":"s"}]}`, `{"id":5}`, `{"id":"a","query":"q","lang":"zh","kind":"exact","relevant":[{"server":"s","tool":"t","x":1}],"extra":true}`,
		`{"id":"\ud800","query":"\u0000<&>","relevant":[{"server":"\xff","tool":"t"}]}`,
	} {
		f.Add([]byte(s))
	}
	const name = "queries.jsonl"
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, err := eval.ReadQueries(bytes.NewReader(data), name)
		if (err == nil) == (qs == nil) {
			t.Fatalf("queries %v and error %v", qs, err)
		}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, name+":") {
					t.Fatalf("a problem that does not name the file: %q", line)
				}
			}
			return
		}
		var lines [][]byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				lines = append(lines, bytes.Clone(line))
			}
		}
		if len(lines) != len(qs) {
			t.Fatalf("%d queries from %d lines", len(qs), len(lines))
		}
		ids := map[string]bool{}
		var again bytes.Buffer
		for i, q := range qs {
			if !json.Valid(lines[i]) {
				t.Fatalf("line %q is not one JSON value, but gave query %+v", lines[i], q)
			}
			if q.ID == "" || ids[q.ID] || strings.TrimSpace(q.Query) == "" || q.Lang == "" || len(q.Relevant) == 0 {
				t.Fatalf("query %+v", q)
			}
			ids[q.ID] = true
			for _, o := range q.Relevant {
				if o.Server == "" || o.Tool == "" {
					t.Fatalf("query %s: relevant tool %+v", q.ID, o)
				}
			}
			line, err := json.Marshal(q)
			if err != nil {
				t.Fatal(err)
			}
			again.Write(append(line, '\n'))
		}
		qs2, err := eval.ReadQueries(&again, name)
		if err != nil {
			t.Fatalf("the queries written out again: %v", err)
		}
		if diff := cmp.Diff(qs, qs2); diff != "" {
			t.Fatalf("the queries written out again read differently (-first +second):\n%s", diff)
		}
	})
}
