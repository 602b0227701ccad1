package selection_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/selection"
)

// FuzzCacheLoad loads arbitrary bytes as the pattern cache's file, which
// lives in the user's cache folder and may be damaged. Load must not
// panic. A file it refuses leaves the cache as it was, and the error names
// the file and says to delete it; a file it accepts adds entries that the
// cache saves and a fresh cache loads back the same (Save's output is a
// fixed point), and an entry put before the load is still there (the
// file's own, when it has a live one under the same key).
func FuzzCacheLoad(f *testing.F) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	known := selection.Key{Features: "create issue", Pool: "p", Model: "m", System: "s"}
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `{"a":null}`, `{"a":{}}`, `{"a":{"names":null,"created":"2026-07-01T11:00:00Z"}}`,
		`{"` + known.String() + `":{"names":["mcp__github__issue_write"],"groups":["github"],"created":"2026-07-01T11:59:59Z"}}`,
		`{"k":{"names":["a","b"],"created":"2026-06-30T11:59:59Z"},"l":{"names":["c"],"created":"2099-01-01T00:00:00+14:00"}}`,
		`{"k":{"names":["a"],"created":"0000-01-01T00:00:00Z"},"k":{"names":["b"],"created":"2026-07-01T12:00:00Z"}}`,
		`{"k":{"names":[1],"created":"2026-07-01T12:00:00Z"}}`, `{"k":{"names":["a"],"created":"yesterday"}}`,
		`{"k":{"names":["\ud800<&>"],"created":"2026-07-01T11:00:00.999999999-01:00","extra":1}}`, `{"k":`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "selections.json")
	saved := func(t *testing.T, c *selection.Cache, name string) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := c.Save(p); err != nil {
			t.Fatalf("Save: %v", err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A fresh file each time: rewriting one in place costs a flush.
		_ = os.Remove(path)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c := selection.NewCache(time.Hour, clock)
		c.Put(known, []string{"before"}, nil)
		before := saved(t, c, "before.json")
		err := c.Load(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "delete it") {
				t.Fatalf("the error does not name the file and the fix: %v", err)
			}
			if got := saved(t, c, "after.json"); !bytes.Equal(got, before) {
				t.Fatalf("a refused file changed the cache:\n%s\n%s", before, got)
			}
			return
		}
		if _, _, ok := c.Get(known); !ok {
			t.Fatal("the entry put before the load is gone")
		}
		first := saved(t, c, "first.json")
		c2 := selection.NewCache(time.Hour, clock)
		if err := c2.Load(filepath.Join(dir, "first.json")); err != nil {
			t.Fatalf("the saved cache does not load: %v\n%s", err, first)
		}
		if diff := cmp.Diff(string(first), string(saved(t, c2, "second.json"))); diff != "" {
			t.Fatalf("the saved cache loads back differently (-first +second):\n%s", diff)
		}
	})
}
