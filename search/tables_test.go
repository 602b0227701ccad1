package search

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSynonyms(t *testing.T) {
	t.Parallel()
	got, err := ParseSynonyms(strings.NewReader("# comment\npull request, PR ,  pull  req\n\nk8s, kubernetes # trailing\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"pull request", "PR", "pull req"}, {"k8s", "kubernetes"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ParseSynonyms(strings.NewReader("a, b\nlonely\n")); err == nil || !strings.Contains(err.Error(), "line 2:") {
		t.Errorf("err = %v, want one naming line 2", err)
	}
}

// TestParseSynonymsLongLine checks that a line too long to read is an
// error naming it, as every other problem is.
func TestParseSynonymsLongLine(t *testing.T) {
	t.Parallel()
	_, err := ParseSynonyms(strings.NewReader("a, b\n" + strings.Repeat("x", 70_000) + ", y\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2:") || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("err = %v, want one naming line 2 and its length", err)
	}
}

func TestParseLexicon(t *testing.T) {
	t.Parallel()
	lx, err := parseLexicon("创建 新建 = create, new\n的 =\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"create"}, {"new"}}, lx.entries["新建"]); diff != "" {
		t.Errorf("新建 (-want +got):\n%s", diff)
	}
	if tr, ok := lx.entries["的"]; !ok || len(tr) != 0 {
		t.Errorf("的 = %v, %v; want a skipped word", tr, ok)
	}
	for _, bad := range []string{"no equals sign", " = orphan"} {
		if _, err := parseLexicon(bad); err == nil || !strings.Contains(err.Error(), "line 1:") {
			t.Errorf("parseLexicon(%q) err = %v", bad, err)
		}
	}
	if _, err := builtinTables(); err != nil {
		t.Errorf("built-in bilingual table: %v", err)
	}
	if _, err := ParseSynonyms(strings.NewReader(synonymsText)); err != nil {
		t.Errorf("built-in synonym table: %v", err)
	}
}

func TestExtraSynonyms(t *testing.T) {
	t.Parallel()
	docs := []Document{
		{Name: "create_issue", Description: "Create an issue."},
		{Name: "list_files", Description: "List files."},
	}
	plain, _ := NewBM25F(nil)
	plain.Add(docs...)
	if res := plain.Search(Query{Text: "zorp", Limit: 8}); len(res.Hits) != 0 {
		t.Fatalf("zorp matched without the synonym: %v", res.Hits)
	}
	extra, _ := NewBM25F(&Options{Synonyms: [][]string{{"zorp", "issue"}}})
	extra.Add(docs...)
	res := extra.Search(Query{Text: "zorp", Limit: 8})
	if len(res.Hits) != 1 || res.Hits[0].Name != "create_issue" {
		t.Errorf("zorp with the synonym: %v", res.Hits)
	}
}
