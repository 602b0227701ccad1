package tokens

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzReadLog reads arbitrary bytes as a metrics log. ReadLog must not
// panic or fail on an in-memory reader; every record it returns passes
// its checks; bad lines are reported once each, in order, with a line
// number the data has; records and bad lines together are no more than
// the lines. The records written out again read back the same, without
// bad lines. And a Log that appends to a file holding the data (a torn
// last line included) adds exactly one record: a reader sees the same
// records and bad lines as before, then the new record.
func FuzzReadLog(f *testing.F) {
	// Short inputs mutate and minimize faster: one record, or a few
	// small lines.
	line, err := json.Marshal(sampleRecord(0))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(line) + "\n",
		string(line[:len(line)-30]),
		"\n\n\r\n" + `{"time":"2026-01-01T00:00:00Z","model":"m"}` + "\ngarbage\n{}\n" + `{"time":"2026-01-01T00:00:00Z","input":-1}` + "\n",
		`{"time":"2026-01-01T00:00:00+14:00","declared":["a"],"declaredTokens":[1,2]}`,
		`{"time":"0000-01-01T00:00:00.123456789Z","input":1e3}` + "\r\n" + `{"time":"9999-12-31T23:59:59-23:59"}`,
		`{"time":null}` + "\n" + `{"time":"2026-01-01T00:00:00Z","called":null,"tools":9223372036854775807}`,
		`{"time":"2026-01-01T00:00:00Z"} {"time":"2026-01-01T00:00:00Z"}`,
		"", "\n", "\xff\xfe", `{"time":"2026-01-01T00:00:00Z","session":"\ud800\u0000<&>"}`,
	} {
		f.Add([]byte(s))
	}
	appended := sampleRecord(9)
	opts := []cmp.Option{cmpopts.EquateEmpty()} // cmp compares times with their Equal method
	path := filepath.Join(f.TempDir(), "metrics.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		records, bad, err := ReadLog(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("ReadLog of bytes in memory: %v", err)
		}
		lines := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		if len(records)+len(bad) > lines {
			t.Fatalf("%d records and %d bad lines from %d lines", len(records), len(bad), lines)
		}
		for i, b := range bad {
			if b.Line < 1 || b.Line > lines || (i > 0 && b.Line <= bad[i-1].Line) || b.Err == nil {
				t.Fatalf("bad lines %v of %d lines", bad, lines)
			}
		}
		var again bytes.Buffer
		for _, r := range records {
			if err := r.validate(); err != nil {
				t.Fatalf("record %+v: %v", r, err)
			}
			line, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("a record read does not encode: %v", err)
			}
			again.Write(append(line, '\n'))
		}
		records2, bad2, err := ReadLog(&again)
		if err != nil || len(bad2) > 0 {
			t.Fatalf("the records written out again: %v, bad lines %v", err, bad2)
		}
		if diff := cmp.Diff(records, records2, opts...); diff != "" {
			t.Fatalf("the records written out again read differently (-first +second):\n%s", diff)
		}

		// A fresh file each time: rewriting one in place costs a flush.
		_ = os.Remove(path)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := OpenLog(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Append(appended); err != nil {
			t.Fatalf("Append: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		records3, bad3, err := ReadLog(file)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(append(records, appended), records3, opts...); diff != "" {
			t.Fatalf("records after an append (-want +got):\n%s", diff)
		}
		lineNumbers := func(bs []BadLine) []int {
			var out []int
			for _, b := range bs {
				out = append(out, b.Line)
			}
			return out
		}
		if diff := cmp.Diff(lineNumbers(bad), lineNumbers(bad3)); diff != "" {
			t.Fatalf("bad lines after an append (-before +after):\n%s", diff)
		}
	})
}
