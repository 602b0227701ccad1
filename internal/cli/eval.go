package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/eval"
	"github.com/toolshelf/toolshelf/search"
)

func newEvalCmd(e *env) *cobra.Command {
	var (
		queries  string
		catalogs []string
		ks       string
		compare  bool
		asJSON   bool
		misses   bool
		rf       rankerFlags
	)
	cmd := &cobra.Command{
		Use:   "eval --queries FILE [flags]",
		Short: "Measure retrieval quality on labeled queries",
		Long: `Eval runs labeled queries (JSON Lines: {"id", "query", "lang", "kind", "relevant":
[{"server", "tool"}]}) against the shelf and reports recall@k (the share of queries
with a relevant tool in the first k hits), MRR@10 and nDCG@10, overall, per language
and per kind. --compare runs the toolshelf and pi rankers side by side in one
process. The last line of plain output sums up the selected ranker:
recall@8=<x> mrr=<x> ndcg@10=<x> n=<n>.`,
		Example: `  toolshelf eval --queries ../shared/eval/dev-queries.jsonl --compare
  toolshelf eval --queries testdata/queries.jsonl --ranker pi --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if queries == "" {
				return usagef("eval needs --queries FILE (labeled queries, JSON Lines)")
			}
			kList, err := parseKs(ks)
			if err != nil {
				return err
			}
			if misses && asJSON {
				return usagef("--misses prints text; the --json output already has every query's rank")
			}
			if err := rf.check(compare); err != nil {
				return err
			}
			modes := []string{rf.ranker}
			if compare {
				for _, m := range search.Modes() {
					if m != rf.ranker {
						modes = append(modes, m)
					}
				}
			}
			qs, err := eval.LoadQueries(queries)
			if err != nil {
				return fmt.Errorf("--queries: %w", err)
			}
			reg, err := loadShelf(e, catalogs)
			if err != nil {
				return err
			}
			shelf := eval.NewShelf(reg)
			var reports []*eval.Report
			for _, m := range modes {
				ranker, err := rf.newRanker(m)
				if err != nil {
					return err
				}
				rep, err := eval.Evaluate(ranker, shelf, qs, kList)
				if err != nil {
					return err
				}
				reports = append(reports, rep)
			}
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Queries string         `json:"queries"`
					Tools   int            `json:"tools"`
					Reports []*eval.Report `json:"reports"`
				}{queries, len(shelf.Docs), reports})
			}
			if misses {
				writeMisses(e.stdout, reports[0], qs)
			}
			writeEvalText(e.stdout, reports, kList, len(shelf.Docs))
			return nil
		},
	}
	cmd.Flags().StringVar(&queries, "queries", "", "labeled queries, JSON Lines (required)")
	cmd.Flags().StringArrayVar(&catalogs, "catalog", nil, "catalog file or folder (repeatable; default: the built-in catalog)")
	cmd.Flags().StringVar(&ks, "k", joinInts(eval.DefaultKs()), "comma-separated cut-offs for recall@k")
	cmd.Flags().BoolVar(&compare, "compare", false, "also run the other ranker and show both side by side")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reports as JSON, with per-query ranks")
	cmd.Flags().BoolVar(&misses, "misses", false, "list the queries whose first relevant tool is not in the top 8")
	rf.register(cmd)
	return cmd
}

// parseKs reads the --k list: positive integers, sorted and deduplicated.
func parseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		k, err := strconv.Atoi(f)
		if err != nil || k <= 0 || k > eval.Depth {
			return nil, usagef("--k: %q is not a cut-off between 1 and %d", f, eval.Depth)
		}
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, usagef("--k needs at least one cut-off, e.g. --k 1,5,10")
	}
	if !slices.Contains(ks, 8) {
		ks = append(ks, 8) // the summary line always reports recall@8
	}
	sort.Ints(ks)
	return slices.Compact(ks), nil
}

func writeEvalText(w io.Writer, reports []*eval.Report, ks []int, tools int) {
	names := make([]string, len(reports))
	for i, r := range reports {
		names[i] = r.Ranker
	}
	fmt.Fprintf(w, "%d queries, %d tools, ranker %s\n\n", reports[0].Overall.N, tools, strings.Join(names, " vs "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"group", "n", "ranker"}
	for _, k := range ks {
		header = append(header, fmt.Sprintf("recall@%d", k))
	}
	header = append(header, "mrr@10", "ndcg@10")
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	row := func(group string, get func(*eval.Report) (eval.Metrics, bool)) {
		first := true
		for _, r := range reports {
			m, ok := get(r)
			if !ok {
				continue
			}
			g, n := "", ""
			if first {
				g, n = group, strconv.Itoa(m.N)
				first = false
			}
			cells := []string{g, n, r.Ranker}
			for _, k := range ks {
				cells = append(cells, fmt.Sprintf("%.3f", m.Recall[k]))
			}
			cells = append(cells, fmt.Sprintf("%.3f", m.MRR), fmt.Sprintf("%.3f", m.NDCG10))
			printLine(tw, strings.Join(cells, "\t")+"\t") // groups come from the queries file
		}
	}
	row("overall", func(r *eval.Report) (eval.Metrics, bool) { return r.Overall, true })
	for _, lang := range slices.Sorted(maps.Keys(reports[0].ByLang)) {
		row("lang="+lang, func(r *eval.Report) (eval.Metrics, bool) { m, ok := r.ByLang[lang]; return m, ok })
	}
	for _, kind := range slices.Sorted(maps.Keys(reports[0].ByKind)) {
		row("kind="+kind, func(r *eval.Report) (eval.Metrics, bool) { m, ok := r.ByKind[kind]; return m, ok })
	}
	tw.Flush()
	m := reports[0].Overall
	fmt.Fprintf(w, "\nrecall@8=%.3f mrr=%.3f ndcg@10=%.3f n=%d\n", m.Recall[8], m.MRR, m.NDCG10, m.N)
}

func writeMisses(w io.Writer, r *eval.Report, qs []eval.Query) {
	fmt.Fprintf(w, "queries whose first relevant tool is not in the top 8 (%s):\n", r.Ranker)
	for i, q := range r.Queries {
		if q.Rank > 0 && q.Rank <= 8 {
			continue
		}
		var want []string
		for _, o := range qs[i].Relevant {
			want = append(want, o.String())
		}
		printf(w, "  %s [%s/%s] rank %d: %q\n    want %s\n    got  %s\n", q.ID, q.Lang, q.Kind, q.Rank,
			qs[i].Query, strings.Join(want, ", "), strings.Join(q.Top, ", "))
	}
	fmt.Fprintln(w)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
