package toolshelf_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// learnTools are a program's deferred tools for the learning tests.
func learnTools() []tool.Tool {
	ok := tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.TextResult("ok"), nil })
	obj := json.RawMessage(`{"type":"object"}`)
	return []tool.Tool{
		{Name: "note_create", Description: "Create a note in the notebook.", Parameters: obj, Exposure: tool.Deferred, Handler: ok},
		{Name: "file_read", Description: "Read a file from disk.", Parameters: obj, Exposure: tool.Deferred, Handler: ok},
		{Name: "mail_send", Description: "Send an email message.", Parameters: obj, Exposure: tool.Deferred, Handler: ok},
	}
}

func searchCall(id, query string) llmtest.Reply {
	args, _ := json.Marshal(map[string]string{"query": query})
	return llmtest.Call(llm.ToolCall{ID: id, Name: toolsearch.Name, Arguments: args})
}

// loadedBy returns what the tool_search call of id loaded, from the
// transcript.
func loadedBy(t *testing.T, msgs []llm.Message, id string) []string {
	t.Helper()
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult && m.ToolCallID == id {
			var d toolsearch.Details
			if err := json.Unmarshal(m.Details, &d); err != nil {
				t.Fatalf("details of %s: %v", id, err)
			}
			return d.Loaded
		}
	}
	t.Fatalf("no result of %s", id)
	return nil
}

// TestMissThenHitIsLearned runs a conversation whose first search finds
// nothing and whose second finds the tool the model then calls; the next
// conversation, on a new shelf of the same user, finds that tool with its
// first search, at rank 1.
func TestMissThenHitIsLearned(t *testing.T) {
	lex := filepath.Join(t.TempDir(), "state", "lexicon", "aliases.json")
	cfg := toolshelf.Config{Tools: learnTools(), Lexicon: lex}
	newShelf := func() *toolshelf.Shelf {
		s, err := toolshelf.New(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}

	// Before: the query finds nothing.
	shelf := newShelf()
	if out, err := shelf.Searcher().Find("jot this down", 8); err != nil || len(out.Hits) != 0 {
		t.Fatalf("before learning: %+v, %v; want no hit", out.Hits, err)
	}
	model := llmtest.New(searchCall("s1", "jot this down"), searchCall("s2", "create a note"),
		llmtest.Call(llm.ToolCall{ID: "c1", Name: "note_create", Arguments: json.RawMessage(`{}`)}), llmtest.Say("done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "jot down: buy milk")
	if got := loadedBy(t, a.Messages(), "s1"); len(got) != 0 {
		t.Fatalf("the first search loaded %v: the test needs a miss", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(lex)
	if err != nil {
		t.Fatalf("nothing learned: %v", err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("the lexicon has mode %04o, want 0600", info.Mode().Perm())
	}

	// The next session's first query loads the tool.
	shelf = newShelf()
	model = llmtest.New(searchCall("s1", "Jot this down"), llmtest.Say("done"))
	b, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	run(t, b, "jot down: buy bread")
	if got := loadedBy(t, b.Messages(), "s1"); len(got) == 0 || got[0] != "note_create" {
		t.Errorf("the next session's first search loaded %v, want note_create first", got)
	}
	b.Close()

	// The lexicon holds the query as written; a search ranks its tool first.
	shelf = newShelf()
	l, err := os.ReadFile(lex)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(l), `"jot this down"`) {
		t.Fatalf("lexicon %s: want the learned query", l)
	}
	out, err := shelf.Searcher().Find("jot this down", 8)
	if err != nil || len(out.Hits) == 0 || out.Hits[0].Name != "note_create" || !slices.Equal(out.Learned, []string{"note_create"}) {
		t.Errorf("rank of the learned tool: %+v, %v", out, err)
	}
}

// TestAliasNeverPassesAnExactName learns file_read as the alias of the
// query mail_send, which names another tool exactly.
func TestAliasNeverPassesAnExactName(t *testing.T) {
	lex := filepath.Join(t.TempDir(), "lexicon", "aliases.json")
	cfg := toolshelf.Config{Tools: learnTools(), Lexicon: lex}
	shelf, err := toolshelf.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	// mail_send loads mail_send, which is not called: a miss; the next
	// search's file_read is called.
	model := llmtest.New(searchCall("s1", "mail_send"), searchCall("s2", "read a file"),
		llmtest.Call(llm.ToolCall{ID: "c1", Name: "file_read", Arguments: json.RawMessage(`{}`)}), llmtest.Say("done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "read it")
	a.Close()
	next, err := toolshelf.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	out, err := next.Searcher().Find("mail_send", 8)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Learned, []string{"file_read"}) {
		t.Fatalf("the alias was not learned: %+v", out)
	}
	if len(out.Hits) < 2 || out.Hits[0].Name != "mail_send" || !out.Hits[0].Exact || out.Hits[1].Name != "file_read" {
		t.Errorf("hits %+v: want the exact name first, the learned tool second", out.Hits)
	}
}

// TestLexiconRefused checks that a lexicon that is a link is not read and
// that the conversation says so and goes on.
func TestLexiconRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lexicon")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(target, []byte(`{"version":1,"entries":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	lex := filepath.Join(dir, "aliases.json")
	if err := os.Symlink(target, lex); err != nil {
		t.Fatal(err)
	}
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: learnTools(), Lexicon: lex})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	var notes []toolshelf.Note
	model := llmtest.New(searchCall("s1", "jot this down"), searchCall("s2", "create a note"),
		llmtest.Call(llm.ToolCall{ID: "c1", Name: "note_create", Arguments: json.RawMessage(`{}`)}), llmtest.Say("done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, Notify: func(n toolshelf.Note) { notes = append(notes, n) }})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "jot")
	a.Close()
	found := false
	for _, n := range notes {
		found = found || (n.Kind == toolshelf.NoteLexicon && strings.Contains(n.Text, "symbolic link"))
	}
	if !found {
		t.Errorf("notes %v: want one that the lexicon is a link", notes)
	}
	if data, err := os.ReadFile(target); err != nil || string(data) != `{"version":1,"entries":[]}` {
		t.Errorf("the link's target was changed: %q, %v", data, err)
	}
}

// TestResumedSessionLearnsOnce resumes a session that learned an alias:
// what it resumed with is not learned again.
func TestResumedSessionLearnsOnce(t *testing.T) {
	dir := t.TempDir()
	lex := filepath.Join(t.TempDir(), "lexicon", "aliases.json")
	cfg := toolshelf.Config{Tools: learnTools(), Lexicon: lex}
	uses := func() string {
		data, err := os.ReadFile(lex)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Entries []struct {
				Query string `json:"query"`
				Uses  int    `json:"uses"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, e := range f.Entries {
			b.WriteString(e.Query + "=" + strconv.Itoa(e.Uses) + ";")
		}
		return b.String()
	}
	shelf, err := toolshelf.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	model := llmtest.New(searchCall("s1", "jot this down"), searchCall("s2", "create a note"),
		llmtest.Call(llm.ToolCall{ID: "c1", Name: "note_create", Arguments: json.RawMessage(`{}`)}), llmtest.Say("done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, Session: &toolshelf.SessionConfig{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "jot down: buy milk")
	path := a.Session().Path()
	a.Close()
	a.Close() // a second Close learns nothing twice
	// The miss learned its alias; the hit's own query is one too.
	if got := uses(); got != "create a note=1;jot this down=1;" {
		t.Fatalf("after the first conversation: %s", got)
	}
	b, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: llmtest.New(llmtest.Say("ok")),
		Session: &toolshelf.SessionConfig{Dir: dir, Resume: path}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, b, "thanks")
	b.Close()
	if got := uses(); got != "create a note=1;jot this down=1;" {
		t.Errorf("after the resumed conversation: %s, want each alias used once", got)
	}
}
