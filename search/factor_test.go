package search_test

import (
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/search"
)

func TestParseFactors(t *testing.T) {
	all := search.Factor(0)
	for _, f := range search.Factors() {
		got, err := search.ParseFactors(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFactors(%q) = %v, %v; want %v", f.String(), got, err, f)
		}
		if all&f != 0 {
			t.Errorf("%s shares a bit with another factor", f)
		}
		all |= f
	}
	both := search.FactorSynonyms | search.FactorStemming
	if s := both.String(); s != "synonyms,stemming" {
		t.Errorf("String = %q", s)
	}
	if got, err := search.ParseFactors(" stemming, synonyms ,"); err != nil || got != both {
		t.Errorf("ParseFactors = %v, %v", got, err)
	}
	if !both.Has(search.FactorStemming) || both.Has(search.FactorBigrams) {
		t.Error("Has")
	}
	if got, err := search.ParseFactors(""); err != nil || got != 0 {
		t.Errorf("ParseFactors(\"\") = %v, %v", got, err)
	}
	if _, err := search.ParseFactors("stemming,nope"); err == nil || !strings.Contains(err.Error(), `unknown ranking factor "nope": use one of name-field, lead`) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := search.NewBM25F(&search.Options{Disable: 1 << 30}); err == nil || !strings.Contains(err.Error(), "unknown bits") {
		t.Errorf("unknown bits: %v", err)
	}
}

// TestFactorSwitches shows, for every factor, a search whose first hit it
// decides: one result with the factor and another without it.
func TestFactorSwitches(t *testing.T) {
	ns := func(server string) search.Namespace { return search.Namespace{Name: "mcp__" + server} }
	teamParams := []byte(`{"type":"object","properties":{"teamId":{"type":"string","description":"The team ID"},` +
		`"userId":{"type":"string","description":"The user to remove from the team"}}}`)
	// information is in most tools' descriptions, so common that its
	// synonyms are not searched; info is its alias, not a synonym.
	films := []search.Document{{Name: "getFilmInfo", Description: "Retrieve a film"},
		{Name: "getFilmRatio", Description: "Retrieve the aspect ratio of a film, with information about it"}}
	for _, w := range []string{"book", "song", "game", "show", "play"} {
		films = append(films, search.Document{Name: "get_" + w, Description: "Retrieve information about a " + w})
	}
	tests := []struct {
		factor  search.Factor
		base    search.Factor // off in both searches
		docs    []search.Document
		query   string
		on, off string // first hit with and without the factor; "" for none
	}{
		// Without the name factor, which would favour alpha_tool too.
		{search.FactorNameField, search.FactorNameCoverage, []search.Document{
			{Name: "beta_tool", Description: "alpha things"}, {Name: "alpha_tool", Description: "makes things"}},
			"alpha", "alpha_tool", "beta_tool"},
		{search.FactorLead, 0, []search.Document{
			{Name: "a", Description: "Does x. Alpha later."}, {Name: "b", Description: "Alpha first. Does y."}},
			"alpha", "b", "a"},
		{search.FactorServerName, 0, []search.Document{
			{Name: "mcp__zendesk__list_tickets", OriginalName: "list_tickets", Description: "List tickets", Namespace: ns("zendesk")}},
			"zendesk", "mcp__zendesk__list_tickets", ""},
		{search.FactorNameCoverage, 0, []search.Document{
			{Name: "removeUserFromTeam", Description: "Remove a user from a team", Parameters: teamParams},
			{Name: "getTeams", Description: "Get a list of teams"}},
			"teams", "getTeams", "removeUserFromTeam"},
		{search.FactorSynonyms, 0, []search.Document{{Name: "create_issue", Description: "Create an issue"}},
			"ticket", "create_issue", ""},
		{search.FactorAliases, 0, films, "film information", "getFilmInfo", "getFilmRatio"},
		{search.FactorStemming, 0, []search.Document{{Name: "get_repository", Description: "Get one repository"}},
			"repositories", "get_repository", ""},
		{search.FactorStopWords, 0, []search.Document{{Name: "read", Description: "Read the file"}},
			"the", "", "read"},
		{search.FactorIdentifiers, 0, []search.Document{{Name: "getWeatherForecast"}},
			"weather", "getWeatherForecast", ""},
		{search.FactorJoined, 0, []search.Document{{Name: "create_issue"}},
			"createissue", "create_issue", ""},
		// 熊猫 (panda) is in no dictionary: only its bigram matches.
		{search.FactorBigrams, 0, []search.Document{{Name: "panda_photos", Description: "查询熊猫的照片"}},
			"熊猫", "panda_photos", ""},
		// 删除 translates to delete.
		{search.FactorBilingual, 0, []search.Document{{Name: "rm", Description: "删除文件"}},
			"delete", "rm", ""},
	}
	if len(tests) != len(search.Factors()) {
		t.Errorf("%d cases for %d factors: add one for each", len(tests), len(search.Factors()))
	}
	for _, tt := range tests {
		t.Run(tt.factor.String(), func(t *testing.T) {
			for _, c := range []struct {
				off  search.Factor
				want string
			}{{0, tt.on}, {tt.factor, tt.off}} {
				r, err := search.NewBM25F(&search.Options{Disable: tt.base | c.off})
				if err != nil {
					t.Fatal(err)
				}
				r.Add(tt.docs...)
				got := ""
				if res := r.Search(search.Query{Text: tt.query, Limit: 3}); len(res.Hits) > 0 {
					got = res.Hits[0].Name
				}
				if got != c.want {
					t.Errorf("disabled %q: first hit %q, want %q", c.off, got, c.want)
				}
			}
		})
	}
}

// TestIdentifiersOffMatchesIdentifiersWhole: with identifier splitting
// off, a query's snake-case word is one term, as in the documents (the
// query used to be cut at _ and find only tools with both words apart).
func TestIdentifiersOffMatchesIdentifiersWhole(t *testing.T) {
	r, err := search.NewBM25F(&search.Options{Disable: search.FactorIdentifiers})
	if err != nil {
		t.Fatal(err)
	}
	r.Add(search.Document{Name: "open_ticket", Description: "Wraps create_issue for tickets"},
		search.Document{Name: "other", Description: "Create things and issue stuff"})
	res := r.Search(search.Query{Text: "create_issue", Limit: 5})
	if len(res.Hits) != 1 || res.Hits[0].Name != "open_ticket" {
		t.Errorf("hits %v, want open_ticket alone", res.Hits)
	}
}
