package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/internal/atomicfile"
	"github.com/toolshelf/toolshelf/internal/eval"
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
		sf       suiteFlags
	)
	cmd := &cobra.Command{
		Use:   "eval (--queries FILE | --suite FILE) [flags]",
		Short: "Measure retrieval quality on labeled queries",
		Long: `Eval runs labeled queries (JSON Lines: {"id", "query", "lang", "kind", "relevant":
[{"server", "tool"}]}) against the shelf and reports recall@k (the share of queries
with a relevant tool in the first k hits), MRR@10 and nDCG@10, overall, per language
and per kind. --compare runs the toolshelf and pi rankers side by side in one
process. The last line of plain output sums up the selected ranker:
recall@8=<x> mrr=<x> ndcg@10=<x> n=<n>.

--suite runs every set of a suite file (JSON: {"sets": [{"name", "catalogs",
"queries", "tasks"}]}, paths relative to the file; no catalogs means the built-in
one; tasks are task files whose steps' queries are labeled with the step's tool)
with both rankers in one process, and prints each set's table with the difference,
then one line per set. --suite repeats to add a suite of your own; --set picks sets.
Each set is split into a fit half and a test half by a hash of its query ids
(a task's steps stay together); --suite reports the test half (--half fit or
all for the others). Besides toolshelf and pi it runs "base" (every factor off:
the reference's BM25 on toolshelf's index) and "left-out" (the parameters fitted
without the set, from the embedded weights file).
--fit FILE fits the default ranker's parameters on the fit halves of the suite's
sets, and one fold per set without it, judges every factor on the left-out sets,
and writes the weights file (search/weights.json in the repository; rebuild to
embed it). --ablate also runs the default ranker with each score factor and
analysis step switched off and prints what each earns (MRR@10) on every set;
--disable switches factors off in the default ranker ("all" for every one). The
last line of suite output sums up the MRR@10 differences:
suite <set>=<toolshelf - pi> ...`,
		Example: `  toolshelf eval --queries ../shared/eval/dev-queries.jsonl --compare
  toolshelf eval --queries testdata/queries.jsonl --ranker pi --json
  toolshelf eval --suite testdata/suite.json --ablate
  toolshelf eval --suite testdata/suite.json --fit search/weights.json
  toolshelf eval --suite testdata/suite.json --suite my-suite.json --set dev --set mine`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			kList, err := parseKs(ks)
			if err != nil {
				return err
			}
			if err := sf.check(); err != nil {
				return err
			}
			if len(sf.files) > 0 {
				switch {
				case queries != "" || len(catalogs) > 0:
					return usagef("--suite names its own catalogs and queries: drop --queries and --catalog")
				case misses:
					return usagef("--misses works with --queries; with --suite use --json for every query's rank")
				case rf.ranker != search.ModeToolshelf:
					return usagef("--suite runs both rankers: drop --ranker")
				}
				if err := rf.check(true); err != nil {
					return err
				}
				return runSuite(e, sf, rf, kList, asJSON)
			}
			if queries == "" {
				return usagef("eval needs --queries FILE (labeled queries, JSON Lines) or --suite FILE")
			}
			if sf.ablate || len(sf.sets) > 0 || sf.fit != "" || sf.half != "" {
				return usagef("--ablate, --set, --half and --fit work with --suite")
			}
			if misses && asJSON {
				return usagef("--misses prints text; the --json output already has every query's rank")
			}
			if err := rf.check(compare); err != nil {
				return err
			}
			if sf.disable != 0 && rf.ranker != search.ModeToolshelf && !compare {
				return usagef("--disable works with the toolshelf ranker only; drop it or use --ranker toolshelf")
			}
			rf.disable = sf.disable
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
			for _, u := range reports[0].Unlabeled {
				printf(e.stderr, "toolshelf: warning: %s\n", u)
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
	sf.register(cmd)
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
	writeEvalTable(w, reports, ks, false)
	m := reports[0].Overall
	fmt.Fprintf(w, "\nrecall@8=%.3f mrr=%.3f ndcg@10=%.3f n=%d\n", m.Recall[8], m.MRR, m.NDCG10, m.N)
}

// writeEvalTable prints a row per group and report; with delta and two
// reports, a row of the first's figures minus the second's after each.
func writeEvalTable(w io.Writer, reports []*eval.Report, ks []int, delta bool) {
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
		if !delta || len(reports) != 2 {
			return
		}
		a, okA := get(reports[0])
		b, okB := get(reports[1])
		if !okA || !okB {
			return
		}
		cells := []string{"", "", "Δ"}
		for _, k := range ks {
			cells = append(cells, fmt.Sprintf("%+.3f", a.Recall[k]-b.Recall[k]))
		}
		cells = append(cells, fmt.Sprintf("%+.3f", a.MRR-b.MRR), fmt.Sprintf("%+.3f", a.NDCG10-b.NDCG10))
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	row("overall", func(r *eval.Report) (eval.Metrics, bool) { return r.Overall, true })
	for _, lang := range slices.Sorted(maps.Keys(reports[0].ByLang)) {
		row("lang="+lang, func(r *eval.Report) (eval.Metrics, bool) { m, ok := r.ByLang[lang]; return m, ok })
	}
	for _, kind := range slices.Sorted(maps.Keys(reports[0].ByKind)) {
		row("kind="+kind, func(r *eval.Report) (eval.Metrics, bool) { m, ok := r.ByKind[kind]; return m, ok })
	}
	for _, l := range []string{eval.LengthShort, eval.LengthLong} {
		row("length="+l, func(r *eval.Report) (eval.Metrics, bool) { m, ok := r.ByLength[l]; return m, ok })
	}
	tw.Flush()
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

// suiteFlags are eval's suite flags.
type suiteFlags struct {
	files      []string
	sets       []string
	ablate     bool
	disableStr string
	disable    search.Factor // parsed by check
	half       string
	fit        string
}

func (f *suiteFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.files, "suite", nil, "suite file of (catalog, queries) sets, e.g. testdata/suite.json (repeatable: the sets add up)")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "run only this set of the suite (repeatable)")
	cmd.Flags().BoolVar(&f.ablate, "ablate", false, "with --suite: also run the default ranker with each factor off and print what each earns")
	names := make([]string, 0, len(search.Factors()))
	for _, fa := range search.Factors() {
		names = append(names, fa.String())
	}
	cmd.Flags().StringVar(&f.disableStr, "disable", "", "comma-separated factors to switch off in the toolshelf ranker: "+strings.Join(names, ", ")+", or all")
	cmd.Flags().StringVar(&f.half, "half", "", "with --suite: the queries to report, test (default), fit or all")
	cmd.Flags().StringVar(&f.fit, "fit", "", "with --suite: fit the ranker's parameters on the fit halves and write the weights file here")
}

// check parses --disable.
func (f *suiteFlags) check() error {
	d, err := search.ParseFactors(f.disableStr)
	if err != nil {
		return usagef("--disable: %v", err)
	}
	f.disable = d
	switch f.half {
	case "", halfTest, halfFit, halfAll:
	default:
		return usagef("--half %q: use test, fit or all", f.half)
	}
	if f.fit != "" && (f.ablate || f.disable != 0 || f.half != "") {
		return usagef("--fit fits the default ranker on the fit halves: drop --ablate, --disable and --half")
	}
	return nil
}

// The halves --half names.
const (
	halfTest = "test"
	halfFit  = "fit"
	halfAll  = "all"
)

// suiteOutput is eval --suite --json's output.
type suiteOutput struct {
	Suites   []string          `json:"suites"`
	Half     string            `json:"half"`
	Disabled string            `json:"disabled,omitempty"`
	Sets     []*eval.SetReport `json:"sets"`
	Ablation []eval.Ablation   `json:"ablation,omitempty"`
}

func runSuite(e *env, sf suiteFlags, rf rankerFlags, ks []int, asJSON bool) error {
	var suite *eval.Suite
	for _, file := range sf.files {
		s, err := eval.LoadSuite(file)
		if err != nil {
			return fmt.Errorf("--suite: %w", err)
		}
		if suite == nil {
			suite = s
		} else if err := suite.Merge(s); err != nil {
			return fmt.Errorf("--suite %s: %w", file, err)
		}
	}
	if len(sf.sets) > 0 {
		if err := suite.Only(sf.sets); err != nil {
			return usagef("--set: %v", err)
		}
	}
	sets, err := suite.Load(builtin.Load)
	if err != nil {
		return err
	}
	for _, s := range sets {
		for _, w := range s.Warnings {
			printf(e.stderr, "toolshelf: warning: set %s: %v\n", s.Name, w)
		}
	}
	if sf.fit != "" {
		return runFit(e, sets, sf)
	}
	half := sf.half
	if half == "" {
		half = halfTest
	}
	if half != halfAll {
		for i, s := range sets {
			sets[i] = s.Half(eval.FitSeed, half == halfFit)
		}
	}
	weights, err := search.FittedWeights()
	if err != nil {
		return err
	}
	rf.disable = sf.disable
	opts := rf.options()
	rankings := append(eval.Rankings(opts), eval.BaseRanking(), eval.FoldRanking(weights, opts))
	if sf.ablate {
		rankings = append(rankings, eval.Ablations(opts)...)
	}
	reports, err := eval.RunSuite(sets, rankings, ks)
	if err != nil {
		return err
	}
	var ablation []eval.Ablation
	if sf.ablate {
		if ablation, err = eval.AblationTable(reports, search.ModeToolshelf); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(suiteOutput{Suites: sf.files, Half: half, Disabled: sf.disable.String(), Sets: reports, Ablation: ablation})
	}
	names := make([]string, len(sets))
	for i, s := range sets {
		names[i] = s.Name
		printf(e.stdout, "== set %s: %d queries (%s half), %d tools\n\n", s.Name, len(s.Queries), half, reports[i].Tools)
		writeEvalTable(e.stdout, reports[i].Reports[:2], ks, true)
		fmt.Fprintln(e.stdout)
	}
	if sf.disable != 0 {
		fmt.Fprintf(e.stdout, "toolshelf runs with %s off\n", sf.disable)
	}
	writeSuiteTable(e.stdout, reports, half)
	if ablation != nil {
		fmt.Fprintln(e.stdout)
		writeAblation(e.stdout, ablation, names)
	}
	var sum []string
	for _, r := range reports {
		sum = append(sum, fmt.Sprintf("%s=%+.3f", r.Name, r.Reports[0].Overall.MRR-r.Reports[1].Overall.MRR))
	}
	printf(e.stdout, "\nsuite mrr toolshelf-pi %s\n", strings.Join(sum, " "))
	return nil
}

// runFit fits the weights file on the sets' fit halves and writes it.
func runFit(e *env, sets []*eval.LoadedSet, sf suiteFlags) error {
	suite := strings.Join(sf.files, " ")
	f, err := eval.FitSuite(sets, eval.FitSeed, filepath.ToSlash(suite), func(s string) {
		printf(e.stderr, "toolshelf: %s\n", s)
	})
	if err != nil {
		return err
	}
	data, err := f.Weights.Encode()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(sf.fit, data, 0o644); err != nil {
		return fmt.Errorf("--fit: %w", err)
	}
	names := make([]string, len(sets))
	for i, s := range sets {
		names[i] = s.Name
	}
	fmt.Fprintf(e.stdout, "Factors, judged on each left-out set's fit half with the parameters fitted without it (MRR@10 the factor earns); a factor stays when it costs no set more than %.2f beyond three standard errors (marked *) and helps beyond them in as many folds as it hurts beyond them\n\n", eval.Hurts)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	printLine(tw, "factor\t"+strings.Join(names, "\t")+"\tstays\t")
	for _, v := range f.Verdicts {
		cells := []string{v.Name}
		for i, x := range v.Earned {
			mark := ""
			if v.Costs(i) {
				mark = "*"
			}
			cells = append(cells, fmt.Sprintf("%+.3f%s", x, mark))
		}
		verdict := "yes"
		if !v.Stays() {
			verdict = "NO"
		}
		printLine(tw, strings.Join(append(cells, verdict), "\t")+"\t")
	}
	tw.Flush()
	p := f.Weights.Params
	printf(e.stdout, "\nfitted: name %g lead %g params %g server %g server-text %g k1 %g b %g synonym %g (long requests ×%g) stem %g name-boost %g; off: %s\n",
		p.Name, p.Lead, p.Params, p.Server, p.ServerText, p.K1, p.B, p.Synonym, p.LongSynonym, p.Stem, p.NameBoost, orNone(f.Weights.Disable))
	printf(e.stdout, "mean fit-half mrr@10 %.4f; wrote %s: rebuild toolshelf to embed it, then run eval --suite for the test halves\n",
		f.Objective, sf.fit)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// writeSuiteTable prints one line per set: MRR@10 of toolshelf, pi, the
// base and the left-out fold, with the differences from pi, and recall@1
// and recall@8 of toolshelf and pi.
func writeSuiteTable(w io.Writer, reports []*eval.SetReport, half string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "MRR@10 on each set's %s half; Δ is the difference from pi\n\n", half)
	fmt.Fprintln(tw, "set\ttools\tqueries\ttoolshelf\tpi\tΔ\tbase\tΔ base\tleft-out\tΔ left-out\ttoolshelf r@1\tpi r@1\ttoolshelf r@8\tpi r@8\t")
	mrr := func(r *eval.SetReport, name string) (string, string) {
		rep, pi := r.Report(name), r.Report(search.ModePI)
		if rep == nil || pi == nil {
			return "—", "—"
		}
		return fmt.Sprintf("%.3f", rep.Overall.MRR), fmt.Sprintf("%+.3f", rep.Overall.MRR-pi.Overall.MRR)
	}
	for _, r := range reports {
		ts, pi := r.Reports[0].Overall, r.Reports[1].Overall
		base, dBase := mrr(r, eval.RankingBase)
		fold, dFold := mrr(r, eval.RankingFold)
		printLine(tw, fmt.Sprintf("%s\t%d\t%d\t%.3f\t%.3f\t%+.3f\t%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t", r.Name, r.Tools, ts.N,
			ts.MRR, pi.MRR, ts.MRR-pi.MRR, base, dBase, fold, dFold, ts.Recall[1], pi.Recall[1], ts.Recall[8], pi.Recall[8]))
	}
	tw.Flush()
}

// writeAblation prints what each factor earns on every set.
func writeAblation(w io.Writer, ablation []eval.Ablation, sets []string) {
	fmt.Fprintf(w, "Ablation: MRR@10 each factor earns (the default minus the default with the factor off); it generalises when it earns >= %.4f on at least 3 sets and loses no set more than %.2f\n\n", eval.Helps, eval.Hurts)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	printLine(tw, "factor\t"+strings.Join(sets, "\t")+"\thelps on\tgeneralises\t")
	for _, a := range ablation {
		cells := []string{a.Name}
		for _, v := range a.Earned {
			cells = append(cells, fmt.Sprintf("%+.3f", v))
		}
		verdict := "yes"
		if !a.Generalises() {
			verdict = "NO"
		}
		cells = append(cells, fmt.Sprintf("%d/%d", a.HelpsOn(), len(a.Earned)), verdict)
		printLine(tw, strings.Join(cells, "\t")+"\t")
	}
	tw.Flush()
}
