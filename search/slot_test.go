package search_test

import (
	"fmt"
	"testing"

	"github.com/toolshelf/toolshelf/search"
)

// A synonym the query did not use counts at most as much as its own idf
// says: settings, a form of configuration in the synonym table, stems to
// set, which most of these tools have, so set_timer must not outrank the
// tool that has the word the query used.
func TestCommonSynonymDoesNotBorrowARareWordsIDF(t *testing.T) {
	t.Parallel()
	r, err := search.NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Add(search.Document{Name: "set_timer", Description: "Set a timer"})
	for i := range 10 {
		r.Add(search.Document{Name: fmt.Sprintf("set_value_%d", i), Description: fmt.Sprintf("Set value number %d", i)})
	}
	r.Add(search.Document{Name: "describe_env", Description: "Show the environment configuration"})
	res := r.Search(search.Query{Text: "configuration", Limit: 3})
	if len(res.Hits) == 0 || res.Hits[0].Name != "describe_env" {
		t.Errorf("hits %v, want describe_env first", names(res))
	}
}
