package lexicon

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzOpen reads lexicon files: an accepted one holds at most MaxEntries
// valid aliases, heaviest first, and reads back the same once saved; a
// refused one gets an error that says how to start again.
func FuzzOpen(f *testing.F) {
	f.Add([]byte(`{"version":1,"entries":[{"query":"post to the team","tool":"mcp__slack__send","uses":2,"last":"2026-01-01T12:00:00Z"}]}`))
	f.Add([]byte(`{"version":1,"entries":[{"query":"select:x","tool":"t","uses":1,"last":"2026-01-01T12:00:00Z"},{"query":"a b","tool":"","uses":1,"last":"2026-01-01T12:00:00Z"}]}`))
	f.Add([]byte(`{"version":1,"entries":[{"query":"pinned words","tool":"t","uses":1,"last":"2020-01-01T00:00:00Z","pinned":true}]}`))
	f.Add([]byte(`{"version":2,"entries":[]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "lexicon")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, FileName)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := Open(path, t0)
		if err != nil {
			return
		}
		entries := l.Entries()
		if len(entries) > MaxEntries {
			t.Fatalf("%d entries, over MaxEntries", len(entries))
		}
		for i, e := range entries {
			if !valid(e) || e.Weight(t0) < Forget {
				t.Fatalf("entry %+v kept", e)
			}
			if i > 0 && entries[i-1].Weight(t0) < e.Weight(t0) {
				t.Fatalf("entries out of order: %+v before %+v", entries[i-1], e)
			}
		}
		if err := l.Save(); err != nil {
			t.Fatal(err)
		}
		again, err := Open(path, t0)
		if err != nil {
			t.Fatalf("the saved lexicon is refused: %v", err)
		}
		if diff := cmp.Diff(entries, again.Entries()); diff != "" {
			t.Fatalf("read back (-saved +read):\n%s", diff)
		}
	})
}
