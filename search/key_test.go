package search

import "testing"

func TestQueryKey(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"Search the issues", "issue search"},
		{"list_pull_requests", "list pull request"},
		{"creating tickets", "create ticket"},
		{"  Read FILE  ", "read file"},
		{"+required word", "word required"},
	} {
		ka, kb := QueryKey(c.a), QueryKey(c.b)
		if ka == "" || ka != kb {
			t.Errorf("QueryKey(%q) = %q, QueryKey(%q) = %q: want the same key", c.a, ka, c.b, kb)
		}
	}
	for _, q := range []string{"", "select:a,b", "SELECT:x", "the of a",
		"word one two three four five six seven eight nine ten eleven twelve thirteen"} {
		if k := QueryKey(q); k != "" {
			t.Errorf("QueryKey(%q) = %q, want none", q, k)
		}
	}
	if a, b := QueryKey("read file"), QueryKey("write file"); a == b {
		t.Errorf("read file and write file share the key %q", a)
	}
}
