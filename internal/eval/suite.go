package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
)

// Suite is a list of evaluation sets, each a shelf of tools and labeled
// queries over it, run together so that a ranking change is judged on all
// of them at once.
//
// A suite file is JSON:
//
//	{"sets": [
//	  {"name": "dev", "queries": ["dev-queries.jsonl"]},
//	  {"name": "tasks", "tasks": ["../internal/bench/tasks.jsonl", "dev-tasks.jsonl"]},
//	  {"name": "metatool", "catalogs": ["external/metatool/catalog"],
//	   "queries": ["external/metatool/queries.jsonl"]}
//	]}
//
// Paths are relative to the suite file's folder. A set without catalogs
// searches the built-in catalog; "builtin": true adds it to the set's own.
type Suite struct {
	// Sets are the suite's sets, in file order.
	Sets []Set `json:"sets"`
}

// Set is one evaluation set of a [Suite].
type Set struct {
	// Name names the set in reports: letters, digits, '.', '_' and '-'.
	Name string `json:"name"`
	// Catalogs are catalog files or folders; none means the built-in
	// catalog.
	Catalogs []string `json:"catalogs,omitempty"`
	// Builtin adds the built-in catalog to Catalogs.
	Builtin bool `json:"builtin,omitempty"`
	// Queries are labeled query files ([ReadQueries]).
	Queries []string `json:"queries,omitempty"`
	// Tasks are task files whose steps' queries become labeled queries
	// ([ReadTaskQueries]).
	Tasks []string `json:"tasks,omitempty"`
}

var setName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,40}$`)

// ReadSuite reads a suite file; name is the source's name for messages.
// Paths are returned as written. Every problem is reported.
func ReadSuite(r io.Reader, name string) (*Suite, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var s Suite
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf(`%s: not a suite file: %v; want {"sets": [{"name": ..., "queries": [...]}]}`, name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: more than one JSON value: write one suite object", name)
	}
	if len(s.Sets) == 0 {
		return nil, fmt.Errorf(`%s: no sets: list them in "sets"`, name)
	}
	var errs []error
	seen := map[string]bool{}
	for i, set := range s.Sets {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s: set %d (%q): %s", name, i+1, set.Name, fmt.Sprintf(format, args...)))
		}
		switch {
		case !setName.MatchString(set.Name):
			bad("a set needs a name of 1 to 40 letters, digits, '.', '_' or '-'")
		case seen[set.Name]:
			bad("the name is used by an earlier set")
		case len(set.Queries)+len(set.Tasks) == 0:
			bad(`no "queries" or "tasks" files`)
		case set.Builtin && len(set.Catalogs) == 0:
			bad(`"builtin" adds the built-in catalog to the set's "catalogs", and there are none: drop it`)
		case slices.Contains(append(append(slices.Clone(set.Catalogs), set.Queries...), set.Tasks...), ""):
			bad("an empty path")
		}
		seen[set.Name] = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &s, nil
}

// LoadSuite reads a suite file and makes its paths relative to the
// current folder.
func LoadSuite(path string) (*Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := ReadSuite(f, path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	rel := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p
			if !filepath.IsAbs(p) {
				out[i] = filepath.Join(dir, filepath.FromSlash(p))
			}
		}
		return out
	}
	for i := range s.Sets {
		set := &s.Sets[i]
		set.Catalogs, set.Queries, set.Tasks = rel(set.Catalogs), rel(set.Queries), rel(set.Tasks)
	}
	return s, nil
}

// Merge appends the sets of other suites; a name used twice is an error.
func (s *Suite) Merge(others ...*Suite) error {
	for _, o := range others {
		for _, set := range o.Sets {
			if slices.ContainsFunc(s.Sets, func(x Set) bool { return x.Name == set.Name }) {
				return fmt.Errorf("two suites have a set named %q: rename one", set.Name)
			}
			s.Sets = append(s.Sets, set)
		}
	}
	return nil
}

// Only keeps the named sets, in the suite's order; a name no set has is
// an error that lists the names.
func (s *Suite) Only(names []string) error {
	var all []string
	for _, set := range s.Sets {
		all = append(all, set.Name)
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return fmt.Errorf("no set named %q: the suite has %s", n, strings.Join(all, ", "))
		}
	}
	s.Sets = slices.DeleteFunc(s.Sets, func(set Set) bool { return !slices.Contains(names, set.Name) })
	return nil
}

// Builtin registers the built-in catalog; package catalog/builtin's Load
// is one.
type Builtin func(reg *tool.Registry, namer *tool.Namer) error

// LoadedSet is a [Set] read: its shelf and its queries.
type LoadedSet struct {
	Set
	// Shelf holds the set's loadable tools.
	Shelf *Shelf
	// Queries are the set's labeled queries, files in order.
	Queries []Query
	// Warnings are the catalogs' problems: tools that were skipped.
	Warnings []error
}

// Load reads the set's catalogs (builtin registers the built-in one) and
// queries. A label that names no tool on the shelf is a warning, not an
// error: its query can only miss it.
func (s Set) Load(builtin Builtin) (*LoadedSet, error) {
	reg := tool.NewRegistry()
	namer := tool.NewNamer()
	ls := &LoadedSet{Set: s}
	if len(s.Catalogs) == 0 || s.Builtin {
		if builtin == nil {
			return nil, fmt.Errorf("set %s: searches the built-in catalog, and none was given", s.Name)
		}
		if err := builtin(reg, namer); err != nil {
			return nil, fmt.Errorf("set %s: built-in catalog: %w", s.Name, err)
		}
	}
	var servers []*catalog.Server
	for _, p := range s.Catalogs {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("set %s: catalog %s: no such file or folder", s.Name, p)
		}
		ss, err := catalog.ReadPath(p)
		servers = append(servers, ss...)
		ls.Warnings = append(ls.Warnings, catalog.Problems(err)...)
	}
	ls.Warnings = append(ls.Warnings, catalog.Problems(catalog.Register(reg, namer, tool.Deferred, servers...))...)
	ls.Shelf = NewShelf(reg)
	if len(ls.Shelf.Docs) == 0 {
		return nil, fmt.Errorf("set %s: no tools loaded from its catalogs", s.Name)
	}
	ids := map[string]string{}
	add := func(file string, qs []Query) error {
		for _, q := range qs {
			if prev, dup := ids[q.ID]; dup {
				return fmt.Errorf("set %s: query id %s is in both %s and %s: make the ids unique", s.Name, q.ID, prev, file)
			}
			ids[q.ID] = file
		}
		ls.Queries = append(ls.Queries, qs...)
		return nil
	}
	for _, p := range s.Queries {
		qs, err := LoadQueries(p)
		if err != nil {
			return nil, fmt.Errorf("set %s: %w", s.Name, err)
		}
		if err := add(p, qs); err != nil {
			return nil, err
		}
	}
	for _, p := range s.Tasks {
		qs, err := LoadTaskQueries(p)
		if err != nil {
			return nil, fmt.Errorf("set %s: %w", s.Name, err)
		}
		if err := add(p, qs); err != nil {
			return nil, err
		}
	}
	_, missing := ls.Shelf.resolve(ls.Queries)
	ls.Warnings = append(ls.Warnings, missing...)
	return ls, nil
}

// Load reads every set of the suite.
func (s *Suite) Load(builtin Builtin) ([]*LoadedSet, error) {
	out := make([]*LoadedSet, len(s.Sets))
	for i, set := range s.Sets {
		ls, err := set.Load(builtin)
		if err != nil {
			return nil, err
		}
		out[i] = ls
	}
	return out, nil
}

// Task query kinds: the first query a step's model would search with,
// and the rephrasing it would try next.
const (
	KindFirst     = "first"
	KindRephrased = "rephrased"
)

// ReadTaskQueries reads a task file (JSON Lines, the benchmark's format:
// {"id", "prompt", "lang", "steps": [{"server", "tool", "queries"}]}) and
// returns each step's queries as labeled queries: relevant is the step's
// tool, the id is task/step/query (tt01/2/1), the kind is [KindFirst] or
// [KindRephrased] and the language is the task's. name is the source's
// name for messages; every problem is reported with its line.
func ReadTaskQueries(r io.Reader, name string) ([]Query, error) {
	type step struct {
		Server  string   `json:"server"`
		Tool    string   `json:"tool"`
		Queries []string `json:"queries"`
	}
	type task struct {
		ID     string `json:"id"`
		Prompt string `json:"prompt"`
		Lang   string `json:"lang"`
		Steps  []step `json:"steps"`
	}
	var qs []Query
	ids := map[string]int{}
	err := readJSONLines(r, name, "task", func(n int, t task, bad func(string, ...any)) {
		if t.ID == "" {
			bad(`missing "id"`)
			return
		}
		if prev, dup := ids[t.ID]; dup {
			bad("task %s: the id is already used on line %d", t.ID, prev)
			return
		}
		ids[t.ID] = n
		if len(t.Steps) == 0 {
			bad(`task %s: no "steps"`, t.ID)
			return
		}
		if t.Lang == "" {
			t.Lang = "en"
		}
		for i, st := range t.Steps {
			if st.Server == "" || st.Tool == "" {
				bad(`task %s: step %d needs "server" and "tool"`, t.ID, i+1)
				continue
			}
			if len(st.Queries) == 0 {
				bad(`task %s: step %d has no "queries"`, t.ID, i+1)
			}
			for j, text := range st.Queries {
				if strings.TrimSpace(text) == "" {
					bad("task %s: step %d: query %d is empty", t.ID, i+1, j+1)
					continue
				}
				kind := KindFirst
				if j > 0 {
					kind = KindRephrased
				}
				qs = append(qs, Query{ID: fmt.Sprintf("%s/%d/%d", t.ID, i+1, j+1), Query: text, Lang: t.Lang, Kind: kind,
					Relevant: []tool.Origin{{Server: st.Server, Tool: st.Tool}}})
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no tasks", name)
	}
	return qs, nil
}

// LoadTaskQueries reads a task file's step queries ([ReadTaskQueries]).
func LoadTaskQueries(path string) ([]Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTaskQueries(f, path)
}

// Ranking is one ranker configuration a suite runs.
type Ranking struct {
	// Name names the configuration in reports, such as "toolshelf",
	// "pi" or "-synonyms".
	Name string
	// New returns an empty ranker for the named set; nil (with no
	// error) when the configuration has none for it, as a
	// leave-one-set-out fold has none for a set it was not fitted
	// without.
	New func(set string) (search.Ranker, error)
}

// Names of the suite's extra rankings.
const (
	// RankingBase is the default ranker with every factor off: the
	// reference's BM25 over toolshelf's index.
	RankingBase = "base"
	// RankingFold is, on each set, the default ranker with the
	// parameters fitted without that set.
	RankingFold = "left-out"
)

// Rankings returns the default ranker and the reference, in that order;
// opts configures the default one and may be nil.
func Rankings(opts *search.Options) []Ranking {
	return []Ranking{
		{Name: search.ModeToolshelf, New: func(string) (search.Ranker, error) { return search.New(search.ModeToolshelf, opts) }},
		{Name: search.ModePI, New: func(string) (search.Ranker, error) { return search.New(search.ModePI, nil) }},
	}
}

// BaseRanking returns the default ranker with every factor off
// ([RankingBase]).
func BaseRanking() Ranking {
	return Ranking{Name: RankingBase, New: func(string) (search.Ranker, error) {
		return search.New(search.ModeToolshelf, &search.Options{Disable: search.FactorsAll})
	}}
}

// FoldRanking returns, for each set, the default ranker with the
// parameters the weights file fitted without that set ([RankingFold]);
// opts (which may be nil) configures the rest.
func FoldRanking(w search.Weights, opts *search.Options) Ranking {
	return Ranking{Name: RankingFold, New: func(set string) (search.Ranker, error) {
		p, ok := w.Folds[set]
		if !ok {
			return nil, nil
		}
		o := search.Options{}
		if opts != nil {
			o = *opts
		}
		o.Params = &p
		return search.New(search.ModeToolshelf, &o)
	}}
}

// Ablations returns, for each factor, the default ranker with that factor
// switched off (on top of opts, which may be nil), named -factor.
func Ablations(opts *search.Options) []Ranking {
	var out []Ranking
	for _, f := range search.Factors() {
		o := search.Options{}
		if opts != nil {
			o = *opts
		}
		if o.Disable.Has(f) || search.DefaultDisable().Has(f) {
			continue
		}
		o.Disable |= f
		out = append(out, Ranking{Name: "-" + f.String(), New: func(string) (search.Ranker, error) {
			return search.New(search.ModeToolshelf, &o)
		}})
	}
	return out
}

// SetReport is how every ranking fared on one set.
type SetReport struct {
	// Name is the set's.
	Name string `json:"name"`
	// Tools is the number of tools searched.
	Tools int `json:"tools"`
	// Reports holds one report per ranking, in the order given; each
	// report's Ranker is the ranking's name. A ranking with no ranker
	// for the set has a nil report.
	Reports []*Report `json:"reports"`
}

// Report returns the report of the named ranking, nil if none.
func (r *SetReport) Report(ranking string) *Report {
	for _, rep := range r.Reports {
		if rep != nil && rep.Ranker == ranking {
			return rep
		}
	}
	return nil
}

// RunSuite evaluates every ranking on every set, in parallel (one ranker
// per set and ranking, indexed afresh), and returns a report per set in
// the sets' order.
func RunSuite(sets []*LoadedSet, rankings []Ranking, ks []int) ([]*SetReport, error) {
	out := make([]*SetReport, len(sets))
	for i, s := range sets {
		out[i] = &SetReport{Name: s.Name, Tools: len(s.Shelf.Docs), Reports: make([]*Report, len(rankings))}
	}
	type job struct{ set, ranking int }
	jobs := make(chan job)
	errs := make([]error, len(sets)*len(rankings))
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(errs)) {
		wg.Go(func() {
			for j := range jobs {
				r, err := rankings[j.ranking].New(sets[j.set].Name)
				if err == nil && r != nil {
					var rep *Report
					if rep, err = Evaluate(r, sets[j.set].Shelf, sets[j.set].Queries, ks); err == nil {
						rep.Ranker = rankings[j.ranking].Name
						out[j.set].Reports[j.ranking] = rep
					}
				}
				if err != nil {
					errs[j.set*len(rankings)+j.ranking] = fmt.Errorf("set %s, %s: %w", sets[j.set].Name, rankings[j.ranking].Name, err)
				}
			}
		})
	}
	for s := range sets {
		for r := range rankings {
			jobs <- job{s, r}
		}
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Ablation is what one factor earns on each set of a suite: the default
// ranker's MRR@10 minus its MRR@10 with the factor switched off.
type Ablation struct {
	// Factor is the factor switched off.
	Factor search.Factor `json:"-"`
	// Name is the factor's name.
	Name string `json:"factor"`
	// Earned holds, per set in the suite's order, what the factor adds
	// to MRR@10; negative when switching it off is better.
	Earned []float64 `json:"earned"`
}

// Helps is the least MRR@10 a factor must add on a set to count as
// helping there, and Hurts the most it may take away from any set.
const (
	Helps = 0.0005
	Hurts = 0.01
)

// HelpsOn returns the number of sets where the factor earns at least
// [Helps].
func (a Ablation) HelpsOn() int {
	n := 0
	for _, e := range a.Earned {
		if e >= Helps {
			n++
		}
	}
	return n
}

// Worst returns the least the factor earns on any set.
func (a Ablation) Worst() float64 {
	return slices.Min(a.Earned)
}

// Generalises reports whether the factor helps on at least three sets and
// costs no set more than [Hurts].
func (a Ablation) Generalises() bool {
	return a.HelpsOn() >= 3 && a.Worst() >= -Hurts
}

// AblationTable reads, from reports of a suite run with the default ranking
// (named base) and the rankings [Ablations] returns, what each factor
// earns on every set.
func AblationTable(reports []*SetReport, base string) ([]Ablation, error) {
	var out []Ablation
	for _, f := range search.Factors() {
		name := "-" + f.String()
		a := Ablation{Factor: f, Name: f.String()}
		for _, sr := range reports {
			b, off := sr.Report(base), sr.Report(name)
			if b == nil || off == nil {
				a.Earned = nil
				break
			}
			a.Earned = append(a.Earned, b.Overall.MRR-off.Overall.MRR)
		}
		if a.Earned != nil {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ablation in the reports: run the suite with the rankings of Ablations and %s", base)
	}
	return out, nil
}
