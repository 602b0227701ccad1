package eval

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/toolshelf/toolshelf/search"
)

// FitSeed is the seed of the suite's fit and test halves.
const FitSeed = 1

// InFitHalf reports whether the query with the given id is in the fit
// half of its set: a hash of the seed and the query's group (the id up to
// its first '/', so that the steps of one task stay together) decides,
// whatever the order of the file.
func InFitHalf(id string, seed uint64) bool {
	group, _, _ := strings.Cut(id, "/")
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s", seed, group)
	return h.Sum64()&1 == 0
}

// Half returns a copy of the set with only the queries of its fit half
// (fit) or its test half.
func (ls *LoadedSet) Half(seed uint64, fit bool) *LoadedSet {
	out := *ls
	out.Queries = slices.DeleteFunc(slices.Clone(ls.Queries), func(q Query) bool { return InFitHalf(q.ID, seed) != fit })
	return &out
}

// fitSet turns a set's queries into what the fit scores; a label the
// shelf lacks is left out, so that its query counts as a miss.
func (ls *LoadedSet) fitSet() search.FitSet {
	fs := search.FitSet{Name: ls.Name, Docs: ls.Shelf.Docs}
	names, _ := ls.Shelf.resolve(ls.Queries)
	for i, q := range ls.Queries {
		fs.Queries = append(fs.Queries, search.FitQuery{Text: q.Query, Relevant: names[i]})
	}
	return fs
}

// FactorVerdict is what one factor earned in the leave-one-set-out folds:
// per set, the MRR@10 of the fold's parameters on the left-out set's fit
// half, minus the same with the factor off.
type FactorVerdict struct {
	// Factor is the factor.
	Factor search.Factor `json:"-"`
	// Name is the factor's name.
	Name string `json:"factor"`
	// Earned holds, per set in the suite's order, what the factor adds.
	Earned []float64 `json:"earned"`
	// Noise holds, per set, three standard errors of Earned (of the mean
	// of the per-query differences): a loss within it is what the set's
	// size can explain.
	Noise []float64 `json:"noise"`
}

// Costs reports whether the factor costs the i-th set: it loses more
// than [Hurts] and more than the noise.
func (v FactorVerdict) Costs(i int) bool {
	return v.Earned[i] < -Hurts && -v.Earned[i] > v.Noise[i]
}

// Stays reports whether the factor stays in the default ranker: it costs
// no set ([FactorVerdict.Costs]: more than [Hurts], beyond what the set's
// size explains: a set of 78 queries moves by 0.013 when one query falls
// from the first rank to below the tenth), and it helps, beyond the
// noise, in at least as many folds as it hurts beyond the noise. Effects
// within the noise count for neither side: counted by their sign, a
// factor whose effect is near zero everywhere stays or goes by chance. A
// factor that changes nothing on any set (no set has text it reads, such
// as CJK tool text for bigrams) stays: there is no evidence against it.
func (v FactorVerdict) Stays() bool {
	helps, hurts := 0, 0
	for i, e := range v.Earned {
		switch {
		case v.Costs(i):
			return false
		case e >= Helps && e > v.Noise[i]:
			helps++
		case e <= -Helps && -e > v.Noise[i]:
			hurts++
		}
	}
	return helps >= hurts
}

// pairedDiff returns the mean of on[i] - off[i] and three times its
// standard error: the verdicts make one test per factor and set (16 × 10
// on the repository's suite), and at two standard errors several would
// find a cost by chance.
func pairedDiff(on, off []float64) (mean, noise float64) {
	n := float64(len(on))
	if n < 2 {
		return 0, 0
	}
	for i := range on {
		mean += on[i] - off[i]
	}
	mean /= n
	ss := 0.0
	for i := range on {
		d := on[i] - off[i] - mean
		ss += d * d
	}
	return mean, 3 * math.Sqrt(ss/(n-1)/n)
}

// Fitted is the result of [FitSuite]: the weights file and the verdict on
// every factor.
type Fitted struct {
	Weights  search.Weights
	Verdicts []FactorVerdict
	// Objective is the default parameters' mean MRR@10 over the sets'
	// fit halves.
	Objective float64
}

// FitSuite fits the ranker's parameters on the fit halves of the sets:
// the default parameters on all of them, and for each set a fold fitted
// on all the others. A factor stays on only if, with each fold's
// parameters, it costs no left-out set's fit half more than [Hurts]
// beyond noise and helps beyond noise in as many folds as it hurts
// ([FactorVerdict.Stays]); the
// parameters are then fitted again with the others off. The test halves
// are not read. progress, if not nil, hears what is being fitted.
func FitSuite(sets []*LoadedSet, seed uint64, suite string, progress func(string)) (*Fitted, error) {
	if len(sets) < 2 {
		return nil, fmt.Errorf("fit: %d sets: leaving one set out needs at least two", len(sets))
	}
	say := func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	fitSets := make([]search.FitSet, len(sets))
	for i, s := range sets {
		fitSets[i] = s.Half(seed, true).fitSet()
	}
	index := func(disable search.Factor) ([]*search.FitIndex, error) {
		out := make([]*search.FitIndex, len(fitSets))
		err := forEach(len(fitSets), func(i int) (err error) {
			out[i], err = search.NewFitIndex(fitSets[i], disable)
			return err
		})
		return out, err
	}
	// fitAll fits the default on every set and a fold per left-out set.
	fitAll := func(xs []*search.FitIndex, disable search.Factor) (search.Params, float64, map[string]search.Params, error) {
		say("fitting the default on %d sets", len(xs))
		p, obj, err := search.Fit(xs, disable, search.FitStart())
		if err != nil {
			return search.Params{}, 0, nil, err
		}
		folds := map[string]search.Params{}
		for i := range xs {
			say("fitting the fold without %s", sets[i].Name)
			others := append(slices.Clone(xs[:i]), xs[i+1:]...)
			// Each fold starts from the default: it converges in fewer
			// passes to the same kind of optimum.
			fp, _, err := search.Fit(others, disable, p)
			if err != nil {
				return search.Params{}, 0, nil, err
			}
			folds[sets[i].Name] = fp
		}
		return p, obj, folds, nil
	}
	xs, err := index(0)
	if err != nil {
		return nil, err
	}
	p, obj, folds, err := fitAll(xs, 0)
	if err != nil {
		return nil, err
	}
	verdicts, err := judgeFactors(sets, fitSets, xs, folds, say)
	if err != nil {
		return nil, err
	}
	var off search.Factor
	for _, v := range verdicts {
		if !v.Stays() {
			off |= v.Factor
		}
	}
	if off != 0 {
		say("fitting again with %s off", off)
		if xs, err = index(off); err != nil {
			return nil, err
		}
		if p, obj, folds, err = fitAll(xs, off); err != nil {
			return nil, err
		}
	}
	names := make([]string, len(sets))
	for i, s := range sets {
		names[i] = s.Name
	}
	w := search.Weights{
		About: "Written by toolshelf eval --fit: do not edit. The default ranker's parameters, fitted on the fit halves " +
			"of every set, and per set the parameters fitted without it (leave one set out).",
		Suite: suite, Seed: seed, Disable: off.String(), Params: p, Folds: folds,
	}
	return &Fitted{Weights: w, Verdicts: verdicts, Objective: obj}, nil
}

// judgeFactors measures, for every factor and fold, what the factor earns
// on the left-out set's fit half under the fold's parameters. Sets are
// judged in parallel; each result goes to its own place, so the verdicts
// do not depend on scheduling.
func judgeFactors(sets []*LoadedSet, fitSets []search.FitSet, xs []*search.FitIndex, folds map[string]search.Params,
	say func(string, ...any)) ([]FactorVerdict, error) {
	factors := search.Factors()
	earned := make([][]float64, len(sets)) // by set, then factor
	noise := make([][]float64, len(sets))
	say("judging %d factors on %d left-out sets", len(factors), len(sets))
	err := forEach(len(sets), func(i int) error {
		s := sets[i]
		on, err := xs[i].RR(folds[s.Name], 0)
		if err != nil {
			return err
		}
		for _, f := range factors {
			x := xs[i]
			if !search.ParamFactor(f) {
				// An analysis step: index the set again without it.
				if x, err = search.NewFitIndex(fitSets[i], f); err != nil {
					return err
				}
			}
			off, err := x.RR(folds[s.Name], f)
			if err != nil {
				return err
			}
			m, n := pairedDiff(on, off)
			earned[i] = append(earned[i], m)
			noise[i] = append(noise[i], n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]FactorVerdict, len(factors))
	for j, f := range factors {
		out[j] = FactorVerdict{Factor: f, Name: f.String()}
		for i := range sets {
			out[j].Earned = append(out[j].Earned, earned[i][j])
			out[j].Noise = append(out[j].Noise, noise[i][j])
		}
	}
	return out, nil
}

// forEach calls f for 0 to n-1, as many at once as there are processors,
// and returns every error. Each call writes only its own results, so what
// they compute does not depend on scheduling.
func forEach(n int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
