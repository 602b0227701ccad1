package lint_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/lint"
)

// server parses a catalog file for server name with the given tools, each
// a JSON tool object.
func server(t *testing.T, name string, tools ...string) *catalog.Server {
	t.Helper()
	doc := `{"server":"` + name + `","tools":[` + strings.Join(tools, ",") + `]}`
	s, err := catalog.Parse(name+".json", []byte(doc))
	if err != nil {
		t.Fatalf("parsing the test catalog: %v\n%s", err, doc)
	}
	return s
}

// toolJSON returns a tool object.
func toolJSON(name, desc, schema string) string {
	d, _ := json.Marshal(desc)
	if schema == "" {
		schema = `{"type":"object","properties":{}}`
	}
	return `{"name":"` + name + `","description":` + string(d) + `,"inputSchema":` + schema + `}`
}

// findings lints servers with only rule enabled and returns its findings.
func findings(t *testing.T, rule string, servers ...*catalog.Server) []lint.Finding {
	t.Helper()
	var disable []string
	for _, r := range lint.Rules() {
		if r.ID != rule {
			disable = append(disable, r.ID)
		}
	}
	rep, err := lint.Run(servers, &lint.Options{Disable: disable})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Rule != rule {
			t.Errorf("finding of disabled rule %s: %+v", f.Rule, f)
		}
	}
	return rep.Findings
}

// tools returns server/tool[path] of each finding.
func where(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		w := f.Server + "/" + f.Tool
		if f.Path != "" {
			w += "[" + f.Path + "]"
		}
		out = append(out, w)
	}
	return out
}

func TestRules(t *testing.T) {
	const good = `Create an issue in a repository. Use it to report bugs or request features. It cannot assign projects.`
	obj := func(props string) string { return `{"type":"object","properties":{` + props + `}}` }
	tests := []struct {
		rule string
		// fire and quiet are tool objects: the first must be reported,
		// the second must not.
		fire, quiet string
		// path is where the finding must point, if anywhere.
		path string
	}{
		{
			rule:  lint.RuleDescriptionLength,
			fire:  toolJSON("create_issue", good+" Labels are optional. Milestones too.", ""),
			quiet: toolJSON("create_issue", good, ""),
		},
		{
			rule:  lint.RuleDescriptionLength,
			fire:  toolJSON("create_issue", "Create an issue with "+strings.Repeat("many words and ", 40)+"more.", ""),
			quiet: toolJSON("create_issue", "Create an issue with a title.\nThe body is\nwrapped by hand over\nfour lines.", ""),
		},
		{
			rule:  lint.RuleMissingBrief,
			fire:  toolJSON("create_issue", "This tool will create an issue.", ""),
			quiet: toolJSON("create_issue", "Creates an issue.", ""),
		},
		{
			rule:  lint.RuleMissingBrief,
			fire:  toolJSON("create_issue", "", ""),
			quiet: toolJSON("delete_file", "Permanently delete a file.", ""),
		},
		{
			rule:  lint.RuleMissingBrief,
			fire:  toolJSON("create_issue", "🎯 ✨", ""),
			quiet: toolJSON("create_issue", "🎯 Create an issue.", ""),
		},
		{
			rule:  lint.RuleNoEnglish,
			fire:  toolJSON("create_issue", "在仓库中创建一个新的问题。", ""),
			quiet: toolJSON("create_issue", "Create an issue. 在仓库中创建一个新的问题。", ""),
		},
		{
			rule:  lint.RuleParamRestatesName,
			fire:  toolJSON("get_issue", "Get an issue.", obj(`"issue_number":{"type":"integer","description":"The number of the issue"}`)),
			quiet: toolJSON("get_issue", "Get an issue.", obj(`"issue_number":{"type":"integer","description":"The issue's number as shown in its URL, e.g. 42"}`)),
			path:  "issue_number",
		},
		{
			rule:  lint.RuleParamRestatesName,
			fire:  toolJSON("get_repo", "Get a repository.", obj(`"owner":{"type":"string","title":"Owner"}`)),
			quiet: toolJSON("get_repo", "Get a repository.", obj(`"owner":{"type":"string","title":"Account that owns it"}`)),
			path:  "owner",
		},
		{
			rule:  lint.RuleExamples,
			fire:  toolJSON("get_issue", "Get an issue.", obj(`"n":{"type":"integer","examples":[1,2]}`)),
			quiet: toolJSON("get_issue", "Get an issue.", obj(`"examples":{"type":"integer","description":"How many examples to attach"}`)),
			path:  "n",
		},
		{
			rule:  lint.RuleEnumExplained,
			fire:  toolJSON("list_issues", "List issues.", obj(`"state":{"type":"string","enum":["open","closed"],"description":"open: only open issues; closed: only closed ones"}`)),
			quiet: toolJSON("list_issues", "List issues.", obj(`"state":{"type":"string","enum":["open","closed"],"description":"Which issues to list"}`)),
			path:  "state",
		},
		{
			rule:  lint.RuleEnumExplained,
			fire:  toolJSON("list_issues", "List issues.", obj(`"sort":{"type":"string","enum":["asc","desc"],"description":"Sort order, asc or desc"}`)),
			quiet: toolJSON("list_issues", "List issues.", obj(`"mode":{"type":"string","enum":["x1","x2"],"description":"x1: fast path; x2: careful path"}`)),
			path:  "sort",
		},
		{
			rule:  lint.RuleNesting,
			fire:  toolJSON("search_code", "Search code.", obj(`"q":{"type":"string"},"options":{"type":"object","properties":{"page":{"type":"integer"},"size":{"type":"integer"}}}`)),
			quiet: toolJSON("search_code", "Search code.", obj(`"page":{"type":"string"},"options":{"type":"object","properties":{"page":{"type":"integer"}}}`)),
			path:  "options",
		},
		{
			rule:  lint.RuleDefaultInProse,
			fire:  toolJSON("list_issues", "List issues.", obj(`"per_page":{"type":"integer","default":30,"description":"Results per page. Defaults to 30."}`)),
			quiet: toolJSON("list_issues", "List issues.", obj(`"per_page":{"type":"integer","default":30,"description":"Results per page, at most 100."}`)),
			path:  "per_page",
		},
		{
			rule:  lint.RuleDefaultInProse,
			fire:  toolJSON("list_issues", "List issues.", obj(`"per_page":{"type":"integer","description":"Results per page (default: 30)"}`)),
			quiet: toolJSON("list_issues", "List issues.", obj(`"per_page":{"type":"integer","description":"Results per page; the default suits most queries"}`)),
			path:  "per_page",
		},
		{
			rule:  lint.RuleNameLength,
			fire:  toolJSON("get_"+strings.Repeat("very_", 12)+"long_name", "Get something.", ""),
			quiet: toolJSON("get_short_name", "Get something.", ""),
		},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			got := findings(t, tc.rule, server(t, "srv", tc.fire))
			if len(got) != 1 {
				t.Fatalf("firing case: %d findings, want 1: %+v", len(got), got)
			}
			f := got[0]
			if f.Server != "srv" || f.Path != tc.path || f.Message == "" || f.Fix == "" || f.Severity == 0 {
				t.Errorf("finding %+v: want server srv, path %q, a message, a fix and a severity", f, tc.path)
			}
			if got := findings(t, tc.rule, server(t, "srv", tc.quiet)); len(got) != 0 {
				t.Errorf("quiet case: findings %+v, want none", got)
			}
		})
	}
}

func TestVerbPrefix(t *testing.T) {
	s := server(t, "tracker",
		toolJSON("get_issue", "Get an issue.", ""),
		toolJSON("get_comment", "Get a comment.", ""),
		toolJSON("fetch_labels", "Fetch the labels.", ""),
		toolJSON("list_issues", "List issues.", ""),
	)
	got := findings(t, lint.RuleVerbPrefix, s)
	if diff := cmp.Diff([]string{"tracker/fetch_labels"}, where(got)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	if !strings.Contains(got[0].Fix, "get_labels") {
		t.Errorf("fix %q does not suggest get_labels", got[0].Fix)
	}
	quiet := server(t, "tracker",
		toolJSON("get_issue", "Get an issue.", ""),
		toolJSON("list_issues", "List issues.", ""),
		toolJSON("remove_label", "Remove a label from an issue.", ""),
		toolJSON("delete_issue", "Delete an issue.", ""),
	)
	if got := findings(t, lint.RuleVerbPrefix, quiet); len(got) != 0 {
		t.Errorf("consistent server: findings %+v", got)
	}
}

func TestNearDuplicate(t *testing.T) {
	s := server(t, "crm",
		toolJSON("list_contacts", "Get contacts from the CRM account.", ""),
		toolJSON("get_contact", "Get a contact from the CRM account.", ""),
		toolJSON("get_deal", "Get one deal with its stage and amount.", ""),
	)
	got := findings(t, lint.RuleNearDuplicate, s)
	if diff := cmp.Diff([]string{"crm/get_contact"}, where(got)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	if !strings.Contains(got[0].Message, "list_contacts") {
		t.Errorf("message %q does not name the other tool", got[0].Message)
	}
	// Shared boilerplate after distinct first sentences is not a
	// duplicate: the briefs tell the tools apart.
	boiler := " It changes remote state and needs write permission on the account."
	quiet := server(t, "crm",
		toolJSON("create_contact", "Create a contact."+boiler, ""),
		toolJSON("create_deal", "Open a sales deal for a company."+boiler, ""),
	)
	if got := findings(t, lint.RuleNearDuplicate, quiet); len(got) != 0 {
		t.Errorf("distinct briefs: findings %+v", got)
	}
}

func TestNameCollision(t *testing.T) {
	s := server(t, "files",
		toolJSON("read-file", "Read a file.", ""),
		toolJSON("read_file", "Read a file as text.", ""),
		toolJSON("write_file", "Write a file.", ""),
	)
	got := findings(t, lint.RuleNameCollision, s)
	if diff := cmp.Diff([]string{"files/read-file", "files/read_file"}, where(got)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	for _, f := range got {
		if f.Severity != lint.Error || !strings.Contains(f.Message, "mcp__files__read_file") {
			t.Errorf("finding %+v: want an error naming mcp__files__read_file", f)
		}
	}
	// Across servers too: github-ref and github_ref sanitise alike.
	a := server(t, "github-ref", toolJSON("get_me", "Get me.", ""))
	b := server(t, "github_ref", toolJSON("get_me", "Get me.", ""))
	if got := findings(t, lint.RuleNameCollision, a, b); len(got) != 2 {
		t.Errorf("servers that sanitise alike: %d findings, want 2", len(got))
	}
	if got := findings(t, lint.RuleNameCollision, server(t, "files", toolJSON("read_file", "Read a file.", ""))); len(got) != 0 {
		t.Errorf("one tool: findings %+v", got)
	}
}

func TestReachability(t *testing.T) {
	// In this pool work_search can only be asked for as "search" (its
	// name without the server's name, and its whole description), and
	// that is the exact name of another tool, which ranks first.
	s := server(t, "work",
		toolJSON("search", "Search the documents of the workspace.", ""),
		toolJSON("work_search", "Search.", ""),
		toolJSON("create_issue", "Create an issue in the tracker.", ""),
		toolJSON("close_issue", "Close an issue in the tracker.", ""),
		toolJSON("send_message", "Send a chat message to a channel.", ""),
	)
	var disable []string
	for _, r := range lint.Rules() {
		if r.ID != lint.RuleUnreachable {
			disable = append(disable, r.ID)
		}
	}
	rep, err := lint.Run([]*catalog.Server{s}, &lint.Options{K: 1, Disable: disable})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range rep.Unreachable {
		names = append(names, u.Tool)
	}
	if diff := cmp.Diff([]string{"work_search"}, names); diff != "" {
		t.Fatalf("unreachable (-want +got):\n%s", diff)
	}
	u := rep.Unreachable[0]
	want := lint.Unreachable{Server: "work", Tool: "work_search", Name: "mcp__work__work_search", BestRank: 2,
		BestQuery: "search", Outranked: []string{"mcp__work__search"},
		Queries: []lint.QueryRank{{Kind: "name", Query: "search", Rank: 2}, {Kind: "description", Query: "search", Rank: 2}}}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("unreachable tool (-want +got):\n%s", diff)
	}
	if got := where(rep.Findings); !slices.Equal(got, []string{"work/work_search"}) {
		t.Errorf("findings %v, want one for work_search", got)
	}
	// With room for five, every tool is reachable.
	rep, err = lint.Run([]*catalog.Server{s}, &lint.Options{K: 5, Disable: disable})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unreachable) != 0 {
		t.Errorf("k 5: unreachable %+v", rep.Unreachable)
	}
}

func TestOptionsErrors(t *testing.T) {
	s := server(t, "srv", toolJSON("get_x", "Get x.", ""))
	for _, o := range []lint.Options{
		{Disable: []string{"no-such-rule"}},
		{K: -1},
		{NearDuplicate: 1.5},
		{MaxSentences: -2},
	} {
		if _, err := lint.Run([]*catalog.Server{s}, &o); err == nil {
			t.Errorf("options %+v: no error", o)
		}
	}
}

func TestSeverityText(t *testing.T) {
	for _, s := range []lint.Severity{lint.Info, lint.Warning, lint.Error} {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got lint.Severity
		if err := got.UnmarshalText(b); err != nil || got != s {
			t.Errorf("%s: round trip gave %v, %v", s, got, err)
		}
	}
	if _, err := lint.ParseSeverity("fatal"); err == nil {
		t.Error("ParseSeverity(fatal): no error")
	}
}

func TestReportSortedAndDeterministic(t *testing.T) {
	srvs := []*catalog.Server{
		server(t, "zeta", toolJSON("b_tool", "This does b.", ""), toolJSON("a_tool", "", "")),
		server(t, "alpha", toolJSON("fetch_x", "This fetches x.", `{"type":"object","properties":{"x_id":{"type":"string","description":"The x ID"}}}`),
			toolJSON("get_y", "Get y.", "")),
	}
	first, err := lint.Run(srvs, nil)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.IsSortedFunc(first.Findings, func(a, b lint.Finding) int {
		return strings.Compare(a.Server+"\x00"+a.Tool, b.Server+"\x00"+b.Tool)
	})
	if !sorted || len(first.Findings) == 0 {
		t.Errorf("findings not sorted by server and tool: %v", where(first.Findings))
	}
	for range 5 {
		again, err := lint.Run(srvs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("second run differs (-first +again):\n%s", diff)
		}
	}
	if len(first.Counts) != len(lint.Rules()) {
		t.Errorf("%d counts, want one per rule", len(first.Counts))
	}
}
