package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// rankerFlags are the flags that choose and configure a ranker.
type rankerFlags struct {
	ranker   string
	synonyms string
	groups   [][]string    // read from the synonyms file by check
	disable  search.Factor // factors switched off (eval --disable)
}

func (f *rankerFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.ranker, "ranker", search.ModeToolshelf, "ranking mode: toolshelf or pi (the reference's BM25)")
	cmd.Flags().StringVar(&f.synonyms, "synonyms", "", "file of extra synonym groups, one per line with forms separated by commas (toolshelf ranker only)")
}

// check validates the flags and reads the synonyms file, before any work.
// both reports that both rankers will run (eval --compare).
func (f *rankerFlags) check(both bool) error {
	if !slices.Contains(search.Modes(), f.ranker) {
		return usagef("unknown ranker %q: use %s", f.ranker, strings.Join(search.Modes(), " or "))
	}
	if f.synonyms == "" {
		return nil
	}
	if f.ranker != search.ModeToolshelf && !both {
		return usagef("--synonyms works with the toolshelf ranker only; drop it or use --ranker toolshelf")
	}
	file, err := os.Open(f.synonyms)
	if err != nil {
		return usagef("--synonyms: %v", err)
	}
	defer file.Close()
	if f.groups, err = search.ParseSynonyms(file); err != nil {
		return usagef("--synonyms %s: %v", f.synonyms, err)
	}
	return nil
}

// newRanker builds an empty ranker of the given mode; call check first.
func (f *rankerFlags) newRanker(mode string) (search.Ranker, error) {
	return search.New(mode, f.options())
}

// options returns the toolshelf ranker's options.
func (f *rankerFlags) options() *search.Options {
	return &search.Options{Synonyms: f.groups, Disable: f.disable}
}

// explainer is a ranker that can explain a score.
type explainer interface {
	Explain(q search.Query, name string) string
}

func newSearchCmd(e *env) *cobra.Command {
	var (
		catalogs []string
		limit    int
		asJSON   bool
		explain  []string
		rf       rankerFlags
	)
	cmd := &cobra.Command{
		Use:   "search [flags] QUERY",
		Short: "Search the shelf for tools",
		Long: `Search ranks the tools of the catalogs (by default the built-in catalog of 1,564
real MCP tools) for a query, the way the model's tool_search would.

Query syntax of the default ranker: free text in English, Chinese, Japanese or
Korean; a tool name (create_issue, mcp__github__create_issue) puts that tool first;
select:a,b lists exactly the named tools; +word requires a word in every hit.`,
		Example: `  toolshelf search "create issue github"
  toolshelf search --limit 3 --json "k8s pod logs"
  toolshelf search --ranker pi "open a pull request"
  toolshelf search --catalog ./my-servers "send a slack message"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("search needs a QUERY, e.g. toolshelf search \"create issue github\"")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit <= 0 {
				return usagef("--limit must be a positive integer, got %d", limit)
			}
			if err := rf.check(false); err != nil {
				return err
			}
			if len(explain) > 0 && rf.ranker != search.ModeToolshelf {
				return usagef("--explain works with the toolshelf ranker only")
			}
			query := strings.Join(args, " ")
			ranker, err := rf.newRanker(rf.ranker)
			if err != nil {
				return err
			}
			reg, err := loadShelf(e, catalogs)
			if err != nil {
				return err
			}
			out, err := toolsearch.New(reg, ranker).Find(query, limit)
			if err != nil {
				return usageError{err}
			}
			explained := map[string]string{}
			if ex, ok := ranker.(explainer); ok {
				for _, name := range explain {
					explained[name] = ex.Explain(search.Query{Text: query, Limit: limit}, name)
				}
			}
			if asJSON {
				return writeSearchJSON(e, reg, ranker.Name(), query, out, explained)
			}
			writeSearchText(e, reg, out, outputWidth(e.stdout))
			for _, name := range explain {
				printf(e.stdout, "\n%s:\n%s", name, explained[name])
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&catalogs, "catalog", nil, "catalog file or folder of *.json files (repeatable; default: the built-in catalog)")
	cmd.Flags().IntVar(&limit, "limit", toolsearch.DefaultLimit, "most tools to list")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringArrayVar(&explain, "explain", nil, "show how the score of the named tool comes about (repeatable)")
	rf.register(cmd)
	return cmd
}

// writeSearchText prints the hits as aligned columns (rank, name, score,
// the description's first line), each line within width columns: the
// description is cut to fit, down to searchMinDescription.
func writeSearchText(e *env, reg *tool.Registry, out toolsearch.Outcome, width int) {
	if len(out.Hits) == 0 {
		fmt.Fprintln(e.stdout, toolsearch.NoMatches)
		if h := out.Hint.String(); h != "" {
			printLine(e.stdout, h)
		}
		return
	}
	rows := make([][4]string, len(out.Hits))
	var widths [3]int
	for i, h := range out.Hits {
		score := fmt.Sprintf("%.3f", h.Score)
		if h.Exact {
			score = "exact"
		}
		rows[i] = [4]string{fmt.Sprint(i + 1), show(h.Name), score}
		for j := range widths {
			widths[j] = max(widths[j], utf8.RuneCountInString(rows[i][j]))
		}
	}
	const gap = 2
	room := max(searchMinDescription, width-(widths[0]+widths[1]+widths[2]+3*gap))
	tw := tabwriter.NewWriter(e.stdout, 0, 0, gap, ' ', 0)
	for i, h := range out.Hits {
		t, _ := reg.Get(h.Name)
		r := rows[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r[0], r[1], r[2], oneLine(toolsearch.FirstLine(t.Description), room))
	}
	tw.Flush()
}

// searchMinDescription is the fewest columns search keeps for a hit's
// description in a narrow terminal.
const searchMinDescription = 20

// searchHitJSON is one hit of `search --json`.
type searchHitJSON struct {
	Rank        int     `json:"rank"`
	Name        string  `json:"name"`
	Server      string  `json:"server,omitempty"`
	Tool        string  `json:"tool,omitempty"`
	Score       float64 `json:"score"`
	Exact       bool    `json:"exact,omitempty"`
	Description string  `json:"description"`
}

func writeSearchJSON(e *env, reg *tool.Registry, ranker, query string, out toolsearch.Outcome, explained map[string]string) error {
	hits := make([]searchHitJSON, len(out.Hits))
	for i, h := range out.Hits {
		t, _ := reg.Get(h.Name)
		hits[i] = searchHitJSON{Rank: i + 1, Name: h.Name, Server: t.Origin.Server, Tool: t.Origin.Tool,
			Score: h.Score, Exact: h.Exact, Description: toolsearch.FirstLine(t.Description)}
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if len(explained) == 0 {
		explained = nil
	}
	return enc.Encode(struct {
		Query   string            `json:"query"`
		Ranker  string            `json:"ranker"`
		Hits    []searchHitJSON   `json:"hits"`
		Hint    *search.Hint      `json:"hint,omitempty"`
		Explain map[string]string `json:"explain,omitempty"`
	}{query, ranker, hits, out.Hint, explained})
}

// truncate shortens s to at most n runes, marking a cut with "…".
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
