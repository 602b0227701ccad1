package search_test

import (
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/search"
)

func TestParseFactors(t *testing.T) {
	t.Parallel()
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

// factorParams are parameters far enough from the reference's that each
// parameter factor decides a search.
var factorParams = search.Params{Name: 4, Lead: 3, Params: 0.3, Server: 0.2, ServerText: 0.2, K1: 2, B: 0.3,
	Synonym: 0.3, Stem: 0.5, NameBoost: 0.5}

// TestFactorSwitches shows, for every factor, a search whose first hit it
// decides: one result with the factor and another without it.
func TestFactorSwitches(t *testing.T) {
	t.Parallel()
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
		// The server's name weighs 0.2 here, against the reference's 3.
		{search.FactorServerName, 0, []search.Document{
			{Name: "mcp__zendesk__list_tickets", OriginalName: "list_tickets", Description: "List tickets", Namespace: ns("zendesk")},
			{Name: "sync", Description: "Copies records. Works with zendesk."}},
			"zendesk", "sync", "mcp__zendesk__list_tickets"},
		{search.FactorParams, 0, []search.Document{
			{Name: "send", Description: "Sends mail", Parameters: []byte(`{"type":"object","properties":{"subject":{"type":"string","description":"The subject"}}}`)},
			{Name: "edit", Description: "Edits text. Sets a subject."}},
			"subject", "edit", "send"},
		{search.FactorSchemaText, 0, []search.Document{
			{Name: "list_prs", Parameters: []byte(`{"type":"object","properties":{"state":{"enum":["merged","closed"]}}}`)}},
			"merged", "list_prs", ""},
		{search.FactorServerText, 0, []search.Document{
			{Name: "mcp__billing__a", OriginalName: "a", Namespace: search.Namespace{Name: "mcp__billing", Description: "invoices"}},
			{Name: "b", Description: "Lists things. Also invoices and more words of text here"}},
			"invoices", "b", "mcp__billing__a"},
		// k1 2 and b 0.3 here: term frequency counts for more than
		// length.
		{search.FactorLength, 0, []search.Document{
			{Name: "a", Description: "alpha"},
			{Name: "b", Description: "alpha alpha alpha beta gamma delta epsilon zeta eta theta iota kappa"}},
			"alpha", "b", "a"},
		{search.FactorNameCoverage, 0, []search.Document{
			{Name: "removeUserFromTeam", Description: "Remove a user from a team", Parameters: teamParams},
			{Name: "getTeams", Description: "Get a list of teams"}},
			"teams", "getTeams", "removeUserFromTeam"},
		{search.FactorSynonyms, 0, []search.Document{{Name: "create_issue", Description: "Create an issue"}},
			"ticket", "create_issue", ""},
		{search.FactorAliases, 0, films, "film information", "getFilmInfo", "getFilmRatio"},
		// creating and create share the Porter2 stem creat; the plural
		// stemmer keeps them apart.
		{search.FactorStemming, 0, []search.Document{{Name: "create_issue", Description: "Create one issue"}},
			"creating", "create_issue", ""},
		// using is request filler, not one of the reference's stop words.
		{search.FactorStopWords, 0, []search.Document{{Name: "read", Description: "Read the file using a path"}},
			"using", "", "read"},
		// The reference splits PRs into p and rs.
		{search.FactorIdentifiers, 0, []search.Document{{Name: "list", Description: "Lists open PRs"}},
			"PR", "list", ""},
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
				r, err := search.NewBM25F(&search.Options{Params: &factorParams, Disable: tt.base | c.off})
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
