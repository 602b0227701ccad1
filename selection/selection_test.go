package selection_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/selection"
	"github.com/toolshelf/toolshelf/tool"
)

func TestBrief(t *testing.T) {
	for _, c := range []struct{ name, title, desc, want string }{
		{"mcp__gh__create_issue", "", "Creates a new issue in a GitHub repository. Requires push access.", "Create a new issue in a GitHub repository"},
		{"x", "", "This tool is used to search the web for pages.\nMore text.", "Search the web for pages"},
		{"x", "", "Use this tool to list files", "List files"},
		{"x", "", "returns the weather", "Return the weather"},
		{"x", "Take a screenshot", "", "Take a screenshot"},
		{"mcp__fs__read_text_file", "", "", "Read text file"},
		{"x", "", "查询指定城市的实时天气。支持全球城市。", "查询指定城市的实时天气。"},
		{"x", "", strings.Repeat("word ", 40), "Word word word word word word word word word word word word word word word word word…"},
		{"x", "", "Bell\x07 and\ttab", "Bell and tab"},
	} {
		if got := selection.Brief(c.name, c.title, c.desc); got != c.want {
			t.Errorf("Brief(%q, %q, %q) = %q, want %q", c.name, c.title, c.desc, got, c.want)
		}
	}
}

// pool registers n deferred tools spread over servers.
func pool(t *testing.T, servers []string, perServer int) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	for _, s := range servers {
		ns := &tool.Namespace{Name: tool.NamespaceName(s)}
		if s == "github" {
			ns.Description = "Code hosting: repositories, issues and pull requests."
		}
		for i := range perServer {
			name := fmt.Sprintf("mcp__%s__tool_%02d", s, i)
			err := reg.Register(tool.Tool{Name: name, Description: fmt.Sprintf("Does thing %d on %s. Details.", i, s),
				Parameters: json.RawMessage(`{"type":"object"}`), Exposure: tool.Deferred, Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return reg
}

func TestCatalog(t *testing.T) {
	reg := pool(t, []string{"github", "slack"}, 3)
	tools := reg.Tools()
	c := selection.NewCatalog(tools, selection.CatalogOptions{
		Briefs: map[string]string{"mcp__slack__tool_01": "Post a message to a channel"},
		Uses:   map[string]int{"mcp__slack__tool_02": 5, "mcp__github__tool_01": 2},
		Known:  map[string]bool{"mcp__github__tool_00": true, "mcp__github__tool_01": true, "mcp__github__tool_02": true, "mcp__slack__tool_00": true, "mcp__slack__tool_02": true},
	})
	want := "mcp__slack__tool_02: Do thing 2 on slack\n" +
		"mcp__github__tool_01: Do thing 1 on github\n" +
		"mcp__github__tool_00: Do thing 0 on github\n" +
		"mcp__github__tool_02: Do thing 2 on github\n" +
		"mcp__slack__tool_00: Do thing 0 on slack\n" +
		"mcp__slack__tool_01: Post a message to a channel [new]\n"
	if diff := cmp.Diff(want, c.Text(nil)); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}
	wantGroups := "mcp__slack (3 tools): do thing 2 on slack; do thing 0 on slack; post a message to a channel\n" +
		"mcp__github (3 tools): Code hosting: repositories, issues and pull requests\n"
	if diff := cmp.Diff(wantGroups, c.GroupText()); diff != "" {
		t.Errorf("GroupText (-want +got):\n%s", diff)
	}
	if c.Grouped {
		t.Errorf("6 tools are grouped")
	}
	solo := selection.NewCatalog(pool(t, []string{"solo"}, 1).Tools(), selection.CatalogOptions{})
	if got, want := solo.GroupText(), "mcp__solo (1 tool): do thing 0 on solo\n"; got != want {
		t.Errorf("GroupText of one tool = %q, want %q", got, want)
	}
	withBrief := slices.Clone(tools)
	withBrief[0].Brief = "Open an issue. Then more."
	if got := selection.NewCatalog(withBrief, selection.CatalogOptions{}).Choices[0].Brief; got != "Open an issue" {
		t.Errorf("a tool's own brief: %q", got)
	}
	if got := c.Text([]string{"mcp__github"}); strings.Contains(got, "slack") || strings.Count(got, "\n") != 3 {
		t.Errorf("Text(github) = %q", got)
	}
	big := selection.NewCatalog(pool(t, []string{"a", "b"}, 16).Tools(), selection.CatalogOptions{})
	if !big.Grouped {
		t.Errorf("32 tools in 2 groups are not grouped")
	}
	same := selection.NewCatalog(tools, selection.CatalogOptions{})
	changed := slices.Clone(tools)
	changed[0].Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	if same.Hash() != selection.NewCatalog(tools, selection.CatalogOptions{}).Hash() ||
		same.Hash() == selection.NewCatalog(changed, selection.CatalogOptions{}).Hash() {
		t.Errorf("the pool hash does not follow the definitions")
	}
	// MCP servers register their tools in the order they finish
	// connecting: the same pool in another order is the same pool, or a
	// repeated task would miss the pattern cache whenever the servers
	// connected in another order.
	reordered := append(slices.Clone(tools[3:]), tools[:3]...)
	if got := selection.NewCatalog(reordered, selection.CatalogOptions{}).Hash(); got != same.Hash() {
		t.Errorf("the pool hash depends on the registration order: %s, then %s", same.Hash(), got)
	}
}

func TestParse(t *testing.T) {
	r := selection.NewResolver([]string{"mcp__github__create_issue", "mcp__slack__post_message", "mcp__linear__create_issue", "mcp__github"})
	for _, c := range []struct {
		answer  string
		names   []string
		unknown []string
		none    bool
	}{
		{"mcp__github__create_issue, mcp__slack__post_message", []string{"mcp__github__create_issue", "mcp__slack__post_message"}, nil, false},
		{"- `mcp__slack__post_message`: to notify\n- mcp__github__create_issue — file it", []string{"mcp__slack__post_message", "mcp__github__create_issue"}, nil, false},
		{"1. MCP__SLACK__POST_MESSAGE\n2. post_message", []string{"mcp__slack__post_message"}, nil, false},
		{"```\nmcp__github__create_issue\n```", []string{"mcp__github__create_issue"}, nil, false},
		{`["mcp__slack__post_message", "nope"]`, []string{"mcp__slack__post_message"}, []string{"nope"}, false},
		{`{"tools": [{"name": "mcp__github__create_issue"}]}`, []string{"mcp__github__create_issue"}, nil, false},
		{"```json\n{\"selected\": []}\n```", nil, nil, true},
		{"NONE", nil, nil, true},
		{"无", nil, nil, true},
		{"I would use mcp__github__create_issue and then mcp__slack__post_message.", []string{"mcp__github__create_issue", "mcp__slack__post_message"}, nil, false},
		{"create_issue", nil, []string{"create_issue"}, false}, // ambiguous suffix
		{"github", []string{"mcp__github"}, nil, false},
		{"mcp__github__create_issue, mcp__github__create_issue;mcp__x__y", []string{"mcp__github__create_issue"}, []string{"mcp__x__y"}, false},
		{"", nil, nil, false},
	} {
		p := selection.Parse(c.answer, r)
		if !cmp.Equal(p.Names, c.names) || !cmp.Equal(p.Unknown, c.unknown) || p.None != c.none {
			t.Errorf("Parse(%q) = %+v, want names %v unknown %v none %v", c.answer, p, c.names, c.unknown, c.none)
		}
	}
}

func FuzzParse(f *testing.F) {
	names := []string{"mcp__github__create_issue", "mcp__slack__post_message", "mcp__a__x", "mcp__b__x", "mcp__github"}
	r := selection.NewResolver(names)
	for _, s := range []string{"mcp__a__x, mcp__b__x", "- `x`\n- y", "```json\n[\"mcp__github\"]\n```", `{"tools":["post_message"]}`,
		"NONE", "[", "{\"name\": 1}", "1) mcp__github__create_issue: because", "\x00\xff,,,;;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		p := selection.Parse(answer, r)
		seen := map[string]bool{}
		for _, n := range p.Names {
			if !slices.Contains(names, n) {
				t.Fatalf("Parse(%q) selected %q, which is not a catalog name", answer, n)
			}
			if seen[n] {
				t.Fatalf("Parse(%q) selected %q twice", answer, n)
			}
			seen[n] = true
		}
		if p.None && len(p.Names) > 0 {
			t.Fatalf("Parse(%q) says none but selected %v", answer, p.Names)
		}
	})
}

func TestFeatures(t *testing.T) {
	a := selection.Features("Are the CI checks on PR #412 in acme/storefront green?")
	b := selection.Features("storefront ACME: green CI checks on pr #413, are they?")
	if a != b {
		t.Errorf("same pattern, different keys:\n%q\n%q", a, b)
	}
	if want := "0 acme checks ci green pr storefront"; a != want {
		t.Errorf("Features = %q, want %q", a, want)
	}
	if got := selection.Features("帮我看看 Sentry 错误"); got != "sentry 帮我 我看 看看 错误" {
		t.Errorf("CJK features = %q", got)
	}
	if selection.Similarity("merge the pull request", "please merge pull request") != 1 || selection.Similarity("a b", "") != 0 {
		t.Errorf("Similarity")
	}
}

func FuzzFeatures(f *testing.F) {
	for _, s := range []string{"Merge PR #412 now", "帮我看看 Sentry 上 checkout 项目", "don't 'quote' it", "ℌello Ａ１", "e\u0301t\u00e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		k := selection.Features(text)
		if again := selection.Features(k); again != k {
			t.Fatalf("Features is not idempotent: %q → %q → %q", text, k, again)
		}
		words := strings.Fields(text)
		slices.Reverse(words)
		if rev := selection.Features(strings.Join(words, " ")); rev != k {
			t.Fatalf("word order changed the key: %q → %q, reversed → %q", text, k, rev)
		}
		if low := selection.Features(strings.ToLower(text)); low != k {
			t.Fatalf("case changed the key: %q → %q, lower case → %q", text, k, low)
		}
	})
}

func TestCache(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	c := selection.NewCache(time.Hour, clock)
	k := selection.Key{Features: "ci green pr", Pool: "p1", Model: "m", System: "s"}
	c.Put(k, []string{"a", "b"}, nil)
	if names, _, ok := c.Get(k); !ok || !cmp.Equal(names, []string{"a", "b"}) {
		t.Fatalf("Get = %v, %v", names, ok)
	}
	for _, miss := range []selection.Key{{Features: "ci green pr", Pool: "p2", Model: "m", System: "s"},
		{Features: "ci green pr", Pool: "p1", Model: "m2", System: "s"}, {Features: "ci green pr", Pool: "p1", Model: "m", System: "s2"},
		{Features: "ci pr", Pool: "p1", Model: "m", System: "s"}} {
		if _, _, ok := c.Get(miss); ok {
			t.Errorf("%+v hit", miss)
		}
	}
	path := filepath.Join(t.TempDir(), "cache.json")
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded := selection.NewCache(time.Hour, clock)
	if err := loaded.Load(path); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := loaded.Get(k); !ok {
		t.Errorf("the saved entry was not loaded")
	}
	now = now.Add(time.Hour)
	if _, _, ok := c.Get(k); ok {
		t.Errorf("an expired entry hit")
	}
	if err := os.WriteFile(path, []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := loaded.Load(path); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("damaged file: %v", err)
	}
	if err := selection.NewCache(0, nil).Load(filepath.Join(t.TempDir(), "missing.json")); err != nil {
		t.Errorf("missing file: %v", err)
	}
}

func TestLockReselect(t *testing.T) {
	l := &selection.Lock{Task: "Are the CI checks on PR #412 green? If so, merge it.", Names: []string{"mcp__github__merge_pull_request"}}
	for _, c := range []struct {
		prompt string
		want   bool
	}{
		{"yes, do it", false},
		{"and squash the merge please", false},
		{"now rerun the failed checks on that pull request", false},
		{"New task: book a meeting room for Friday", true},
		{"换个任务，帮我订会议室", true},
		{"/reselect", true},
		{"book a meeting room for friday afternoon", true},
	} {
		if got, why := l.Reselect(c.prompt, nil); got != c.want {
			t.Errorf("Reselect(%q) = %v (%s), want %v", c.prompt, got, why, c.want)
		}
	}
}

// selector returns a selector over reg answered by the scripted model.
func selector(t *testing.T, reg *tool.Registry, model llm.Model, cfg selection.Config) *selection.Selector {
	t.Helper()
	cfg.Model, cfg.Tools = model, reg
	cfg.Now = func() time.Time { return time.Unix(1, 0) }
	s, err := selection.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return llm.ContentText(req.Messages[i].Content, "")
		}
	}
	return ""
}

func TestSelectorSmallPool(t *testing.T) {
	reg := pool(t, []string{"github", "slack"}, 3)
	model := llmtest.New(llmtest.Say("mcp__slack__tool_01, mcp__github__tool_02"), llmtest.Say("mcp__slack__tool_01"))
	cache := selection.NewCache(0, nil)
	s := selector(t, reg, model, selection.Config{Cache: cache, ModelID: "m"})
	res, err := s.Select(context.Background(), "post it on slack")
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != "model" || res.Requests != 1 || !cmp.Equal(res.Names, []string{"mcp__slack__tool_01", "mcp__github__tool_02"}) {
		t.Fatalf("result %+v", res)
	}
	req := model.Requests()[0]
	if !strings.HasPrefix(lastUser(req), selection.ToolRequest) || len(req.Messages) != 3 || len(req.Messages[0].Sections) != 0 ||
		!strings.Contains(*req.Messages[1].Sections[0].Text, "mcp__slack__tool_01: Do thing 1 on slack") {
		t.Errorf("request: %+v", req.Messages)
	}
	// The same pattern hits the cache; a new one asks again without
	// re-sending the unchanged catalog.
	if res, _ := s.Select(context.Background(), "Post it on Slack!"); res.Source != "cache" || res.Requests != 0 {
		t.Errorf("second selection %+v", res)
	}
	before := s.Messages()
	if _, err := s.Select(context.Background(), "another thing entirely"); err != nil {
		t.Fatal(err)
	}
	after := s.Messages()
	if !cmp.Equal(before, after[:len(before)]) || len(after) != len(before)+2 {
		t.Errorf("the conversation was not appended to: %d → %d messages", len(before), len(after))
	}
	// A new tool appends a catalog update marking it.
	if err := reg.Register(tool.Tool{Name: "mcp__slack__react", Description: "Adds an emoji reaction.", Exposure: tool.Deferred,
		Parameters: json.RawMessage(`{"type":"object"}`)}); err != nil {
		t.Fatal(err)
	}
	model.Add(llmtest.Say("mcp__slack__react"))
	res, err = s.Select(context.Background(), "react with a thumbs up")
	if err != nil || !cmp.Equal(res.Names, []string{"mcp__slack__react"}) {
		t.Fatalf("after a new tool: %+v, %v", res, err)
	}
	msgs := s.Messages()
	update := msgs[len(msgs)-3]
	if update.Role != llm.RoleSystem || !strings.Contains(*update.Sections[0].Text, "mcp__slack__react: Add an emoji reaction [new]") {
		t.Errorf("no catalog update before the request: %+v", update)
	}
}

func TestSelectorGroupsFirst(t *testing.T) {
	reg := pool(t, []string{"github", "slack", "linear"}, 12)
	model := llmtest.New(llmtest.Say("github, mcp__linear"), llmtest.Say("mcp__linear__tool_03\nmcp__github__tool_11"))
	res, err := selector(t, reg, model, selection.Config{}).Select(context.Background(), "file and link")
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 2 || !cmp.Equal(res.Groups, []string{"mcp__github", "mcp__linear"}) ||
		!cmp.Equal(res.Names, []string{"mcp__linear__tool_03", "mcp__github__tool_11"}) {
		t.Fatalf("result %+v", res)
	}
	second := lastUser(model.Requests()[1])
	if !strings.Contains(second, "mcp__linear__tool_03:") || strings.Contains(second, "mcp__slack__") {
		t.Errorf("the second request offers:\n%s", second)
	}
}

func TestSelectorFallbacks(t *testing.T) {
	ctx := context.Background()
	reg := pool(t, []string{"github", "slack"}, 3)
	t.Run("ask", func(t *testing.T) {
		model := llmtest.New(llmtest.Say("NONE"), llmtest.Say("mcp__github__tool_00"))
		var asked string
		s := selector(t, reg, model, selection.Config{Ask: func(_ context.Context, q string) (string, error) {
			asked = q
			return "on github", nil
		}})
		res, err := s.Select(ctx, "handle it")
		if err != nil || res.Source != "ask" || asked == "" || !strings.HasSuffix(lastUser(model.Requests()[1]), "handle it\non github") {
			t.Errorf("%+v, %v", res, err)
		}
	})
	t.Run("groups, then search", func(t *testing.T) {
		model := llmtest.New(llmtest.Say("NONE"), llmtest.Say("NONE"))
		res, err := selector(t, reg, model, selection.Config{}).Select(ctx, "handle it")
		if err != nil || res.Source != "search" || !res.Search || res.Requests != 2 ||
			!strings.HasPrefix(lastUser(model.Requests()[1]), selection.GroupRequest) {
			t.Errorf("%+v, %v", res, err)
		}
	})
	t.Run("full", func(t *testing.T) {
		model := llmtest.New(llmtest.Say("nothing"))
		res, err := selector(t, reg, model, selection.Config{Fallbacks: []selection.Fallback{selection.FallbackFull}}).Select(ctx, "x")
		if err != nil || res.Source != "full" || len(res.Names) != 6 {
			t.Errorf("%+v, %v", res, err)
		}
	})
	t.Run("unknown names add tool_search", func(t *testing.T) {
		model := llmtest.New(llmtest.Say("mcp__github__tool_00, mcp__jira__create"))
		res, err := selector(t, reg, model, selection.Config{}).Select(ctx, "x")
		if err != nil || !res.Search || !cmp.Equal(res.Unknown, []string{"mcp__jira__create"}) {
			t.Errorf("%+v, %v", res, err)
		}
	})
	if _, err := selection.ParseFallbacks("groups,bogus"); err == nil {
		t.Errorf("ParseFallbacks accepted bogus")
	}
}
