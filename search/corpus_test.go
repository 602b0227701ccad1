package search_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// corpusDocs returns the built-in catalog as search documents.
var corpusDocs = sync.OnceValue(func() []search.Document {
	reg := tool.NewRegistry()
	if err := builtin.Load(reg, tool.NewNamer()); err != nil {
		panic(err)
	}
	var docs []search.Document
	for _, t := range reg.Tools() {
		docs = append(docs, toolsearch.Document(t))
	}
	return docs
})

// corpusRanker is a toolshelf ranker over the built-in catalog, shared by
// the tests that only search.
var corpusRanker = sync.OnceValue(func() *search.BM25F {
	r, err := search.NewBM25F(nil)
	if err != nil {
		panic(err)
	}
	r.Add(corpusDocs()...)
	return r
})

func names(r search.Result) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Name)
	}
	return out
}

func TestCreateIssueGitHubPutsAGitHubIssueWriterFirst(t *testing.T) {
	t.Parallel()
	res := corpusRanker().Search(search.Query{Text: "create issue github", Limit: 8})
	// The GitHub server and its reference server each have one tool that
	// creates issues; the dev set labels both for such a query.
	want := []string{"mcp__github__issue_write", "mcp__github_ref__create_issue"}
	if len(res.Hits) < 2 || !slices.Contains(want, res.Hits[0].Name) || !slices.Contains(want, res.Hits[1].Name) {
		t.Errorf("hits = %v, want %v first", names(res), want)
	}
}

func TestExactNames(t *testing.T) {
	t.Parallel()
	r := corpusRanker()
	tests := []struct {
		query string
		want  []string // the exact hits, first
	}{
		{"browser_snapshot", []string{"mcp__playwright__browser_snapshot"}},
		{"mcp__github_ref__create_issue", []string{"mcp__github_ref__create_issue"}},
		{"read_file", []string{"mcp__desktop_commander__read_file", "mcp__filesystem__read_file"}},
		{"READ-FILE", []string{"mcp__desktop_commander__read_file", "mcp__filesystem__read_file"}},
		{"slack/slack_post_message", []string{"mcp__slack__slack_post_message"}},
		{"drop-database", []string{"mcp__mongodb__drop_database"}},
	}
	for _, tt := range tests {
		res := r.Search(search.Query{Text: tt.query, Limit: 5})
		var exact []string
		for i, h := range res.Hits {
			if h.Exact {
				if i != len(exact) {
					t.Errorf("%q: exact hit %s after a ranked one", tt.query, h.Name)
				}
				exact = append(exact, h.Name)
			}
		}
		slices.Sort(exact)
		if diff := cmp.Diff(tt.want, exact); diff != "" {
			t.Errorf("%q exact hits (-want +got):\n%s", tt.query, diff)
		}
		if len(res.Hits) != 5 {
			t.Errorf("%q: %d hits, want the exact ones followed by ranked ones up to the limit", tt.query, len(res.Hits))
		}
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	r := corpusRanker()
	res := r.Search(search.Query{Text: "select:mcp__slack__slack_post_message, read_file,nope", Limit: 1})
	want := []string{"mcp__slack__slack_post_message", "mcp__desktop_commander__read_file", "mcp__filesystem__read_file"}
	if diff := cmp.Diff(want, names(res)); diff != "" {
		t.Errorf("select ignores the limit and keeps its order (-want +got):\n%s", diff)
	}
	for _, h := range res.Hits {
		if !h.Exact {
			t.Errorf("%s is not marked exact", h.Name)
		}
	}
	// Excluded (already loaded) tools are not selected again.
	res = r.Search(search.Query{Text: "select:mcp__slack__slack_post_message", Limit: 8,
		Exclude: []string{"mcp__slack__slack_post_message"}})
	if len(res.Hits) != 0 {
		t.Errorf("selected an excluded tool: %v", names(res))
	}
	if res.Hint == nil || !cmp.Equal(res.Hint.Loaded, []string{"mcp__slack__slack_post_message"}) || len(res.Hint.Unmatched) != 0 {
		t.Errorf("hint = %+v, want the name reported as already loaded", res.Hint)
	}
	// Nothing selected is an empty result, not a text search.
	if res := r.Search(search.Query{Text: "select:", Limit: 8}); len(res.Hits) != 0 {
		t.Errorf("select: with no names returned %v", names(res))
	}
}

func TestRequiredTerms(t *testing.T) {
	t.Parallel()
	r := corpusRanker()
	text := map[string]string{}
	for _, d := range corpusDocs() {
		text[d.Name] = strings.ToLower(d.Name + " " + d.Description + " " + string(d.Parameters) + " " +
			d.Namespace.Name + " " + d.Namespace.Description + " " + d.Namespace.Instructions)
	}
	free := names(r.Search(search.Query{Text: "loki logs", Limit: 2000}))
	required := names(r.Search(search.Query{Text: "+loki logs", Limit: 2000}))
	if len(required) == 0 || len(free) <= len(required) {
		t.Fatalf("+loki kept %d of %d hits; want some, but fewer", len(required), len(free))
	}
	for _, n := range required {
		if !strings.Contains(text[n], "loki") {
			t.Errorf("%s does not contain the required term", n)
		}
	}
	// A required word no tool has leaves nothing.
	if res := r.Search(search.Query{Text: "+frobnicate logs", Limit: 8}); len(res.Hits) != 0 {
		t.Errorf("+frobnicate matched %v", names(res))
	}
}

func TestVocabularyAndLanguages(t *testing.T) {
	t.Parallel()
	r := corpusRanker()
	tests := []struct {
		query string
		top   int
		want  []string // any of these within the top
	}{
		{"show open PRs in a GitHub repo", 3, []string{"mcp__github__list_pull_requests", "mcp__github_ref__list_pull_requests"}},
		{"k8s pod logs", 3, []string{"mcp__kubernetes_go__pods_log", "mcp__kubernetes__kubectl_logs"}},
		{"MR diff gitlab", 3, []string{"mcp__gitlab__get_merge_request_diffs", "mcp__gitlab__list_merge_request_diffs"}},
		{"run promql query grafana", 3, []string{"mcp__grafana__query_prometheus"}},
		{"在 GitHub 仓库里创建一个 issue", 3, []string{"mcp__github__issue_write", "mcp__github_ref__create_issue"}},
		{"列出 Kubernetes 集群里的 pod", 3, []string{"mcp__kubernetes_go__pods_list", "mcp__kubernetes_go__pods_list_in_namespace"}},
		{"Slackにメッセージを送信", 3, []string{"mcp__slack__slack_post_message"}},
		{"GitHub 저장소 브랜치 목록", 3, []string{"mcp__github__list_branches", "mcp__github_ref__list_branches"}},
	}
	for _, tt := range tests {
		got := names(r.Search(search.Query{Text: tt.query, Limit: tt.top}))
		if !slices.ContainsFunc(got, func(n string) bool { return slices.Contains(tt.want, n) }) {
			t.Errorf("%q: top %d = %v, want one of %v", tt.query, tt.top, got, tt.want)
		}
	}
}

func TestHints(t *testing.T) {
	t.Parallel()
	r := corpusRanker()
	res := r.Search(search.Query{Text: "frobnicate the wibbles", Limit: 8})
	if len(res.Hits) != 0 {
		t.Fatalf("hits = %v", names(res))
	}
	if res.Hint == nil || !cmp.Equal(res.Hint.Unmatched, []string{"frobnicate", "wibbles"}) {
		t.Errorf("hint = %+v, want both words unmatched", res.Hint)
	}
	res = r.Search(search.Query{Text: "snapshat", Limit: 8})
	if res.Hint == nil || len(res.Hint.Nearest) == 0 || !strings.Contains(res.Hint.Nearest[0], "snapshot") {
		t.Errorf("hint = %+v, want a snapshot tool suggested", res.Hint)
	}
	if s := res.Hint.String(); !strings.Contains(s, `No tool mentions "snapshat".`) || !strings.Contains(s, "Closest tool names:") {
		t.Errorf("hint text = %q", s)
	}
	if res := r.Search(search.Query{Text: "create issue", Limit: 8}); res.Hint != nil {
		t.Errorf("a search with hits has a hint: %+v", res.Hint)
	}
}

// TestExcludeEqualsRemove checks that excluding documents ranks the rest
// exactly as an index without them would, for both rankers: statistics
// are those of the candidates.
func TestExcludeEqualsRemove(t *testing.T) {
	t.Parallel()
	docs, rounds := corpusDocs()[:400], 5
	if testing.Short() {
		docs, rounds = docs[:150], 2
	}
	rng := rand.New(rand.NewPCG(1, 2))
	queries := []string{"create issue", "list files in a directory", "send message channel", "query database table",
		"get pull request", "delete", "kubernetes pod logs", "search web"}
	for _, mode := range search.Modes() {
		full, _ := search.New(mode, nil)
		full.Add(docs...)
		for round := range rounds {
			var exclude []string
			for _, d := range docs {
				if rng.IntN(10) == 0 {
					exclude = append(exclude, d.Name)
				}
			}
			pruned, _ := search.New(mode, nil)
			for _, d := range docs {
				if !slices.Contains(exclude, d.Name) {
					pruned.Add(d)
				}
			}
			for _, q := range queries {
				a := full.Search(search.Query{Text: q, Limit: 20, Exclude: exclude})
				b := pruned.Search(search.Query{Text: q, Limit: 20})
				if !sameHits(a, b) {
					t.Errorf("%s round %d %q:\nexclude %v\nremove  %v", mode, round, q, a.Hits, b.Hits)
				}
			}
		}
	}
}

// TestIncrementalIndexEqualsFresh checks that adds, replacements and
// removals leave the index as if built from scratch in the same order.
func TestIncrementalIndexEqualsFresh(t *testing.T) {
	t.Parallel()
	docs, steps := corpusDocs()[:300], 2000
	if testing.Short() {
		docs, steps = docs[:100], 600
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, mode := range search.Modes() {
		inc, _ := search.New(mode, nil)
		present := map[string]bool{}
		var order []string                     // insertion order of present documents
		byName := map[string]search.Document{} // the latest version of each document
		for range steps {
			d := docs[rng.IntN(len(docs))]
			if present[d.Name] && rng.IntN(2) == 0 {
				inc.Remove(d.Name)
				delete(present, d.Name)
				order = slices.DeleteFunc(order, func(n string) bool { return n == d.Name })
				continue
			}
			if rng.IntN(2) == 0 {
				// A new version of the tool, with other words.
				d.Description = fmt.Sprintf("Version %d: list and update issues. %s", rng.IntN(100), d.Description)
			}
			inc.Add(d) // a replacement keeps its position
			byName[d.Name] = d
			if !present[d.Name] {
				present[d.Name] = true
				order = append(order, d.Name)
			}
		}
		fresh, _ := search.New(mode, nil)
		for _, n := range order {
			fresh.Add(byName[n])
		}
		if inc.Len() != fresh.Len() {
			t.Fatalf("%s: Len %d, want %d", mode, inc.Len(), fresh.Len())
		}
		for _, q := range []string{"create issue", "list", "read file", "search", "update page", "mcp"} {
			a := inc.Search(search.Query{Text: q, Limit: 30})
			b := fresh.Search(search.Query{Text: q, Limit: 30})
			if !sameHits(a, b) {
				t.Errorf("%s %q:\nincremental %v\nfresh       %v", mode, q, a.Hits, b.Hits)
			}
		}
	}
}

func sameHits(a, b search.Result) bool {
	if len(a.Hits) != len(b.Hits) {
		return false
	}
	for i := range a.Hits {
		if a.Hits[i].Name != b.Hits[i].Name || math.Abs(a.Hits[i].Score-b.Hits[i].Score) > 1e-9*math.Max(1, b.Hits[i].Score) {
			return false
		}
	}
	return true
}

func TestConcurrentSearchAndUpdate(t *testing.T) {
	t.Parallel()
	docs := corpusDocs()[:200]
	for _, mode := range search.Modes() {
		r, _ := search.New(mode, nil)
		r.Add(docs...)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					d := docs[(g*50+i)%len(docs)]
					switch i % 4 {
					case 0:
						r.Remove(d.Name)
					case 1:
						r.Add(d)
					case 2:
						r.Search(search.Query{Text: "create list issue file", Limit: 8})
					default:
						// Finds nothing: the hint reads (and may build) the
						// table of names that Add and Remove invalidate.
						r.Search(search.Query{Text: "select:zzqx_nothing,read_fiel", Limit: 8})
					}
				}
			}()
		}
		wg.Wait()
	}
}

func TestAlreadyLoaded(t *testing.T) {
	t.Parallel()
	r := corpusRanker()
	loaded := []string{"mcp__playwright__browser_snapshot"}
	// The exact name of a loaded tool loads nothing else.
	res := r.Search(search.Query{Text: "browser_snapshot", Limit: 8, Exclude: loaded})
	if len(res.Hits) != 0 || res.Hint == nil || !cmp.Equal(res.Hint.Loaded, loaded) {
		t.Errorf("exact name of a loaded tool: hits %v, hint %+v", names(res), res.Hint)
	}
	if got := res.Hint.String(); got != "Already loaded: mcp__playwright__browser_snapshot." {
		t.Errorf("hint text %q", got)
	}
	// A word only loaded tools contain is not reported as unknown.
	only := []string{}
	for _, d := range corpusDocs() {
		if strings.Contains(strings.ToLower(d.Description+string(d.Parameters)+d.Name), "sequentialthinking") ||
			strings.Contains(d.Name, "sequential") {
			only = append(only, d.Name)
		}
	}
	res = r.Search(search.Query{Text: "sequentialthinking please", Limit: 8, Exclude: only})
	if len(res.Hits) != 0 || res.Hint == nil || !slices.Contains(res.Hint.OnlyLoaded, "sequentialthinking") {
		t.Errorf("word of loaded tools only: hits %v, hint %+v", names(res), res.Hint)
	}
}

func TestRequiredWordsNeverTogether(t *testing.T) {
	t.Parallel()
	res := corpusRanker().Search(search.Query{Text: "+figma +kubernetes", Limit: 8})
	if len(res.Hits) != 0 || res.Hint == nil || !cmp.Equal(res.Hint.Together, []string{"+figma", "+kubernetes"}) {
		t.Errorf("hits %v, hint %+v", names(res), res.Hint)
	}
	if got := res.Hint.String(); got != "No tool has +figma, +kubernetes together." {
		t.Errorf("hint text %q", got)
	}
}

// TestExplainAddsUpToTheScore checks that Explain's total is the score
// Search gives, cross-product demotion included.
func TestExplainAddsUpToTheScore(t *testing.T) {
	t.Parallel()
	r := corpusRanker()
	for _, q := range []string{"post the datadog alert summary to slack", "create issue github", "+loki logs",
		"在 GitHub 仓库里创建一个 issue", "k8s pod logs", "open a GitHub issue for this Sentry error"} {
		for _, h := range r.Search(search.Query{Text: q, Limit: 5}).Hits {
			ex := r.Explain(search.Query{Text: q}, h.Name)
			i := strings.LastIndex(ex, "total ")
			var total float64
			if _, err := fmt.Sscanf(ex[i:], "total %f", &total); err != nil {
				t.Fatalf("%q %s: %v\n%s", q, h.Name, err, ex)
			}
			if math.Abs(total-h.Score) > 0.0005 {
				t.Errorf("%q %s: explain total %.3f, score %.3f\n%s", q, h.Name, total, h.Score, ex)
			}
		}
	}
}

func TestOddDocumentsAndLimits(t *testing.T) {
	t.Parallel()
	for _, mode := range search.Modes() {
		r, _ := search.New(mode, nil)
		deep := `{"type":"object","properties":{"zebrafield":{"type":"string","description":"giraffe words"},"nest":` +
			strings.Repeat(`{"type":"object","properties":{"n":`, 100) + `{"type":"string"}` + strings.Repeat(`}}`, 100) + `}}`
		r.Add(
			search.Document{Name: "___", Description: "A tool whose name has no letters."},
			search.Document{Name: "deep_tool", Description: "Deep schema.", Parameters: []byte(deep)},
			search.Document{Name: "list_files", Description: "List files."},
		)
		res := r.Search(search.Query{Text: "list files", Limit: 8})
		if len(res.Hits) == 0 || res.Hits[0].Name != "list_files" || res.Hits[0].Exact {
			t.Errorf("%s: a nameless tool must not match every query: %+v", mode, res.Hits)
		}
		res = r.Search(search.Query{Text: "giraffe", Limit: 8})
		if len(res.Hits) != 1 || res.Hits[0].Name != "deep_tool" {
			t.Errorf("%s: a deep schema lost its shallow text: %+v", mode, res.Hits)
		}
		for _, q := range []string{"list files", "list_files", "select:list_files", "giraffe"} {
			if got := r.Search(search.Query{Text: q, Limit: math.MaxInt}); len(got.Hits) == 0 || len(got.Hits) > 3 {
				t.Errorf("%s %q with the largest limit: %+v", mode, q, got.Hits)
			}
		}
	}
}

func TestTranslationsAreWordsTheQueryUsed(t *testing.T) {
	t.Parallel()
	r, _ := search.NewBM25F(nil)
	r.Add(search.Document{Name: "remove_widget", Description: "Remove a widget."},
		search.Document{Name: "list_widgets", Description: "List widgets."},
		search.Document{Name: "show_widget", Description: "Show a widget."})
	// 删除 translates to delete and remove: a tool that removes matches it
	// as well as one that deletes would.
	res := r.Search(search.Query{Text: "删除", Limit: 8})
	if len(res.Hits) != 1 || res.Hits[0].Name != "remove_widget" {
		t.Errorf("hits %+v", res.Hits)
	}
	if ex := r.Explain(search.Query{Text: "删除"}, "remove_widget"); !strings.Contains(ex, "remove×1.0") {
		t.Errorf("remove counted as a synonym, not a translation:\n%s", ex)
	}
}

// A tool whose name the query spells out ranks above one that shares the
// same words but names more; without the name-coverage factor the longer
// name wins on its parameters.
func TestNameCoverage(t *testing.T) {
	t.Parallel()
	r, _ := search.NewBM25F(nil)
	teamParams := []byte(`{"type":"object","properties":{"teamId":{"type":"string","description":"The team ID"},` +
		`"userId":{"type":"string","description":"The user to remove from the team"}}}`)
	r.Add(search.Document{Name: "removeUserFromTeam", Description: "Remove a user from a team", Parameters: teamParams},
		search.Document{Name: "getTeams", Description: "Get a list of teams"})
	res := r.Search(search.Query{Text: "teams", Limit: 2})
	if got := names(res); len(got) != 2 || got[0] != "getTeams" {
		t.Errorf("hits %v, want getTeams first", got)
	}
	ex := r.Explain(search.Query{Text: "teams"}, "getTeams")
	if !strings.Contains(ex, "matches 1 of the 2 words") {
		t.Errorf("explain does not show the name coverage:\n%s", ex)
	}
}
