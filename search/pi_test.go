package search

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The reference tokenizer cases (pi-behaviour §4.6).
func TestPITokenize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"listIssues for the GitHub_repo", []string{"list", "issue", "git", "hub", "repo"}},
		{"searches queries HTTPServer", []string{"search", "query", "http", "server"}},
		{"", nil},
		{"the of and", nil},
		{"ABCDefGHIjk", []string{"abc", "def", "gh", "ijk"}},
		{"café naïve", []string{"caf", "na", "ve"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, piTokenize(tt.in)); diff != "" {
			t.Errorf("piTokenize(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestPIDocumentText(t *testing.T) {
	t.Parallel()
	d := Document{
		Name:        "mcp__docs__read_page",
		Description: "Read a page.",
		Parameters: json.RawMessage(`{"type":"object","description":"Args.","properties":{
			"url":{"type":"string","description":"Page URL"},
			"opts":{"type":"object","properties":{"raw":{"type":"boolean"}}},
			"tags":{"type":"array","items":{"type":"object","description":"A tag","properties":{"name":{}}}},
			"mode":{"anyOf":[{"type":"string","description":"fast"},{"description":"slow"}]},
			"2":{"type":"string"},
			"list":["not","an","object"]}}`),
		Namespace: Namespace{Name: "mcp__docs", Description: "Docs server"},
	}
	// Index-like keys ("2") come first, as JavaScript enumerates them;
	// arrays are not schemas; the blank namespace instructions are left out.
	want := "mcp__docs__read_page mcp  docs  read page Read a page. " +
		"Args. 2 url Page URL opts raw tags A tag name mode fast slow list mcp__docs Docs server"
	if got := piDocumentText(d); got != want {
		t.Errorf("piDocumentText:\n got %q\nwant %q", got, want)
	}
}

// referenceDocs is the reference's four-tool fixture (pi-behaviour §4.6).
func referenceDocs() []Document {
	return []Document{
		{Name: "mcp__github__list_issues", Description: "List issues in a repository.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"state":{"type":"string","description":"open or closed"}}}`)},
		{Name: "mcp__github__create_pull_request", Description: "Open a pull request."},
		{Name: "mcp__linear__search_issues", Description: "Search Linear issues by text."},
		{Name: "mcp__docs__search", Description: "Search the documentation."},
	}
}

func hitNames(r Result) []string {
	var names []string
	for _, h := range r.Hits {
		names = append(names, h.Name)
	}
	return names
}

func TestPIRanksByRelevanceAndLimit(t *testing.T) {
	t.Parallel()
	r := NewPI()
	r.Add(referenceDocs()...)
	tests := []struct {
		query string
		limit int
		want  []string
	}{
		{"issue", 8, []string{"mcp__linear__search_issues", "mcp__github__list_issues"}},
		{"pull requests", 8, []string{"mcp__github__create_pull_request"}},
		{"closed", 8, []string{"mcp__github__list_issues"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, hitNames(r.Search(Query{Text: tt.query, Limit: tt.limit}))); diff != "" {
			t.Errorf("Search(%q) (-want +got):\n%s", tt.query, diff)
		}
	}
	if got := r.Search(Query{Text: "search", Limit: 1}); len(got.Hits) != 1 {
		t.Errorf("Search(search, limit 1) = %d hits, want 1", len(got.Hits))
	}
}

func TestPIReturnsNothingForUnknownOrEmptyQueries(t *testing.T) {
	t.Parallel()
	r := NewPI()
	r.Add(referenceDocs()...)
	for _, q := range []string{"kubernetes", "the", "tickets", "", "   "} {
		if got := r.Search(Query{Text: q, Limit: 8}); len(got.Hits) != 0 {
			t.Errorf("Search(%q) = %v, want no hits", q, hitNames(got))
		}
	}
	if got := r.Search(Query{Text: "issue", Limit: 0}); len(got.Hits) != 0 {
		t.Errorf("limit 0 returned %v", hitNames(got))
	}
	if got := NewPI().Search(Query{Text: "issue", Limit: 8}); len(got.Hits) != 0 {
		t.Errorf("empty index returned %v", hitNames(got))
	}
}

func TestPIIndexesNamespaceMetadata(t *testing.T) {
	t.Parallel()
	r := NewPI()
	docs := referenceDocs()
	docs = append(docs, Document{Name: "mcp__k__list_pods", Description: "List pods.",
		Namespace: Namespace{Name: "mcp__k", Description: "Kubernetes cluster tools"}})
	r.Add(docs...)
	if diff := cmp.Diff([]string{"mcp__k__list_pods"}, hitNames(r.Search(Query{Text: "kubernetes", Limit: 8}))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPIScoreByHand pins one BM25 score to a value computed by hand.
func TestPIScoreByHand(t *testing.T) {
	t.Parallel()
	r := NewPI()
	r.Add(
		// "get_weather get weather Get the weather forecast." → get weather ×3, forecast: 7 tokens
		Document{Name: "get_weather", Description: "Get the weather forecast."},
		// send email ×3, message: 7 tokens
		Document{Name: "send_email", Description: "Send an email message."},
		// read file ×3, disk return its content: 10 tokens
		Document{Name: "read_file", Description: "Read a file from disk and return its contents."},
	)
	// N = 3, df(weather) = 1: idf = ln(1 + (3 - 1 + 0.5)/(1 + 0.5)) = ln(8/3) = 0.98082925...
	// avgdl = (7 + 7 + 10)/3 = 8, tf = 3, dl = 7:
	// score = idf × 3 × 2.2 / (3 + 1.2 × (0.25 + 0.75 × 7/8)) = idf × 6.6 / 4.0875 = 1.58372429...
	res := r.Search(Query{Text: "weather", Limit: 8})
	if len(res.Hits) != 1 || res.Hits[0].Name != "get_weather" {
		t.Fatalf("hits = %v, want [get_weather]", hitNames(res))
	}
	const want = 1.5837242984409525
	if got := res.Hits[0].Score; math.Abs(got-want) > 1e-12 {
		t.Errorf("score = %.16f, want %.16f", got, want)
	}
}

func TestPITiesKeepInsertionOrderAcrossReplacement(t *testing.T) {
	t.Parallel()
	r := NewPI()
	r.Add(Document{Name: "bravo_tool", Description: "x"}, Document{Name: "alpha_tool", Description: "x"},
		Document{Name: "delta_tool", Description: "x"})
	// Replacing bravo keeps its position; removing and re-adding alpha
	// moves it last.
	r.Add(Document{Name: "bravo_tool", Description: "x"})
	r.Remove("alpha_tool")
	r.Add(Document{Name: "alpha_tool", Description: "x"})
	want := []string{"bravo_tool", "delta_tool", "alpha_tool"}
	if diff := cmp.Diff(want, hitNames(r.Search(Query{Text: "tool", Limit: 8}))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if r.Len() != 3 {
		t.Errorf("Len = %d, want 3", r.Len())
	}
}

// TestPIWordsASCII checks the reference's split without regular
// expressions against the regular expressions themselves.
func TestPIWordsASCII(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", "a", "A", "getWeatherForecast", "HTTPServer", "aBCd", "ABCdEFg", "ABcDe", "ABCDe", "list_ids",
		"PRs", "IDs", "ec2Instance", "OAuth2Token", "x-y_z.w", "  Hello, World!  ", "a1B2c3D", "ABC", "abc123DEF",
		"mcp__github__create_issue", "JSONPath", "getURLsFor", "A1b", "1A", "Zz9Zz", "__x__",
	} {
		if got, want := piWordsASCII(in), piWordsRegexp(in); !slices.Equal(got, want) {
			t.Errorf("piWordsASCII(%q) = %q, the regular expressions give %q", in, got, want)
		}
	}
	// Every string of up to five characters from a small alphabet with
	// each class of character.
	const alphabet = "aBz9_ Q"
	var walk func(prefix string)
	walk = func(prefix string) {
		if got, want := piWordsASCII(prefix), piWordsRegexp(prefix); !slices.Equal(got, want) {
			t.Fatalf("piWordsASCII(%q) = %q, the regular expressions give %q", prefix, got, want)
		}
		if len(prefix) == 5 {
			return
		}
		for i := range len(alphabet) {
			walk(prefix + alphabet[i:i+1])
		}
	}
	walk("")
}
