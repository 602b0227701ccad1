package search

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
)

// FitSet is one evaluation set the fit learns from: a shelf of documents
// and labeled queries over it.
type FitSet struct {
	// Name names the set in errors.
	Name string
	// Docs are the set's tools.
	Docs []Document
	// Queries are the labeled queries the fit scores.
	Queries []FitQuery
}

// FitQuery is one labeled query: its text and the names of the documents
// that satisfy it (a name not among the set's documents is a miss).
type FitQuery struct {
	// Text is the query.
	Text string
	// Relevant are the names of the documents that satisfy it.
	Relevant []string
}

// fitCutoff is the depth of the MRR the fit maximises.
const fitCutoff = 10

// FitIndex is a set indexed once for fitting: the ranker's analysis fixed,
// its parameters free.
type FitIndex struct {
	set  FitSet
	base *BM25F

	// parsed caches the set's parsed queries by the parameters parsing
	// reads (the synonym and stem weights), which most steps of a fit
	// leave alone.
	mu     sync.Mutex
	parsed map[[3]float64][]parsedQuery
}

// NewFitIndex indexes a set with the given analysis factors off; the
// parameters are chosen per evaluation ([FitIndex.MRR]).
func NewFitIndex(set FitSet, disable Factor) (*FitIndex, error) {
	if len(set.Docs) == 0 {
		return nil, fmt.Errorf("fit set %s: no documents", set.Name)
	}
	p := FitStart() // keeps the synonym table; the parameters are set per evaluation
	r, err := newBM25F(Options{Disable: disable &^ paramFactors}, p, 0)
	if err != nil {
		return nil, err
	}
	r.Add(set.Docs...)
	return &FitIndex{set: set, base: r}, nil
}

// paramFactors are the factors that only select parameters: with them off
// the index is the same.
const paramFactors = FactorNameField | FactorLead | FactorServerName | FactorParams | FactorServerText |
	FactorLength | FactorNameCoverage

// withParams returns a ranker that shares r's index, analysis and synonym
// table and scores with p. It must not be changed (Add, Remove) and r must
// not be changed while it is used.
func (r *BM25F) withParams(p Params) *BM25F {
	c := &BM25F{off: r.off, params: p, weight: p.fields(), an: r.an, syn: r.syn, idx: r.idx, docs: r.docs,
		exact: r.exact, nameWords: r.nameWords, shortKeys: r.shortKeys, nameTerms: r.nameTerms, families: r.families}
	c.wlen = make([]float32, len(r.wlen))
	for slot := range c.wlen {
		c.wlen[slot] = float32(c.weightedLen(int32(slot)))
	}
	return c
}

// RR returns, per query of the set, the reciprocal rank of its first
// relevant hit within the first ten (0 when none is there), when the
// ranker scores with p and the parameter factors of disable off.
func (x *FitIndex) RR(p Params, disable Factor) ([]float64, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	r := x.base.withParams(p.withFactorsOff(disable))
	pqs := x.parse(r)
	out := make([]float64, len(x.set.Queries))
	for i, q := range x.set.Queries {
		out[i] = r.reciprocalRank(q, pqs[i])
	}
	return out, nil
}

// parse returns the set's queries parsed by r, from the cache when r's
// parsing parameters have been seen.
func (x *FitIndex) parse(r *BM25F) []parsedQuery {
	pqs, done := x.cached(r)
	if !done {
		for i, q := range x.set.Queries {
			pqs[i] = r.parseQuery(q.Text)
		}
		x.store(r, pqs)
	}
	return pqs
}

// parseKey is what parsing reads of a ranker's parameters.
func parseKey(r *BM25F) [3]float64 {
	return [3]float64{r.params.Synonym, r.params.LongSynonym, r.params.Stem}
}

// cached returns the set's queries parsed under r's parsing parameters
// and true, or a slice to parse them into and false.
func (x *FitIndex) cached(r *BM25F) ([]parsedQuery, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if pqs, ok := x.parsed[parseKey(r)]; ok {
		return pqs, true
	}
	return make([]parsedQuery, len(x.set.Queries)), false
}

// store caches the set's queries parsed under r's parsing parameters.
func (x *FitIndex) store(r *BM25F, pqs []parsedQuery) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.parsed == nil || len(x.parsed) >= maxParsedCache {
		x.parsed = make(map[[3]float64][]parsedQuery)
	}
	x.parsed[parseKey(r)] = pqs
}

// maxParsedCache bounds a FitIndex's cache of parsed query sets.
const maxParsedCache = 8

// fitStep is one parameter the fit searches, its largest value, and
// whether 0 is one of its values to try.
type fitStep struct {
	name    string
	value   func(*Params) *float64
	max     float64
	canZero bool
}

var fitSteps = []fitStep{
	{"name", func(p *Params) *float64 { return &p.Name }, 20, true},
	{"lead", func(p *Params) *float64 { return &p.Lead }, 20, true},
	{"params", func(p *Params) *float64 { return &p.Params }, 20, true},
	{"server", func(p *Params) *float64 { return &p.Server }, 20, true},
	{"server_text", func(p *Params) *float64 { return &p.ServerText }, 20, true},
	{"k1", func(p *Params) *float64 { return &p.K1 }, 10, false},
	{"b", func(p *Params) *float64 { return &p.B }, 1, true},
	{"synonym", func(p *Params) *float64 { return &p.Synonym }, 1, false},
	{"long_synonym", func(p *Params) *float64 { return &p.LongSynonym }, 1, false},
	{"stem", func(p *Params) *float64 { return &p.Stem }, 1, false},
	{"name_boost", func(p *Params) *float64 { return &p.NameBoost }, 4, true},
}

// fitScales are the factors of its value each step tries on a
// parameter; fitFromZero are the values it tries on a parameter at 0.
var (
	fitScales   = []float64{0.5, 0.7, 0.85, 1.2, 1.4, 2}
	fitFromZero = []float64{0.1, 0.3, 1}
)

// fitRounds bounds the passes over the parameters; a pass that improves
// nothing ends the fit sooner.
const fitRounds = 4

// fitGain is the least improvement of the objective a change must bring.
const fitGain = 1e-4

// FitStart returns the parameters a fit starts from: the reference's, with
// the synonym, stem and name weights halfway.
func FitStart() Params {
	p := ReferenceParams()
	p.Synonym, p.LongSynonym, p.NameBoost, p.Stem = 0.3, 1, 0.5, 0.5
	return p
}

// Fit chooses the parameters that maximise the mean, over the sets, of
// each set's MRR@10 (every set counts the same, whatever its size), by
// coordinate ascent from start: each pass takes every parameter in turn,
// tries 0 where 0 is allowed and its value times 0.5, 0.7, 0.85, 1.2, 1.4
// and 2 (0.1, 0.3 and 1 when it is 0), and keeps the best value if it
// gains at least 1e-4; the passes end when one changes nothing, after
// four at most. Values are rounded to three digits. It is deterministic:
// the same sets give the same result, bit for bit.
func Fit(sets []*FitIndex, disable Factor, start Params) (Params, float64, error) {
	if len(sets) == 0 {
		return Params{}, 0, fmt.Errorf("fit: no sets")
	}
	p := start
	best, err := fitObjective(sets, p, disable)
	if err != nil {
		return Params{}, 0, err
	}
	for range fitRounds {
		improved := false
		for _, st := range fitSteps {
			cur := *st.value(&p)
			var tries []float64
			if st.canZero && cur != 0 {
				tries = append(tries, 0)
			}
			if cur == 0 {
				tries = append(tries, fitFromZero...)
			}
			for _, s := range fitScales {
				if v := round3(cur * s); v > 0 && v <= st.max && v != cur {
					tries = append(tries, v)
				}
			}
			bestV := cur
			for _, v := range tries {
				q := p
				*st.value(&q) = v
				if q.check() != nil {
					continue
				}
				got, err := fitObjective(sets, q, disable)
				if err != nil {
					return Params{}, 0, err
				}
				if got > best+fitGain {
					best, bestV = got, v
				}
			}
			if bestV != cur {
				*st.value(&p) = bestV
				improved = true
			}
		}
		if !improved {
			break
		}
	}
	return p, best, nil
}

// round3 rounds to three significant digits, so that fitted values are
// short and the same on every platform.
func round3(v float64) float64 {
	if v == 0 {
		return 0
	}
	e := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*e) / e
}

// fitObjective is the mean of the sets' MRR@10 under p, computed in
// parallel over chunks of each set's queries and summed in a fixed order,
// so that the result does not depend on scheduling.
func fitObjective(sets []*FitIndex, p Params, disable Factor) (float64, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	p = p.withFactorsOff(disable)
	type job struct{ set, chunk int }
	rankers := make([]*BM25F, len(sets))
	parsed := make([][]parsedQuery, len(sets))
	sums := make([][]float64, len(sets))
	var jobs []job
	fresh := make([]bool, len(sets)) // parsed in the jobs, to be cached after
	for i, x := range sets {
		rankers[i] = x.base.withParams(p)
		var done bool
		parsed[i], done = x.cached(rankers[i])
		fresh[i] = !done
		n := (len(x.set.Queries) + fitChunk - 1) / fitChunk
		sums[i] = make([]float64, n)
		for c := range n {
			jobs = append(jobs, job{i, c})
		}
	}
	next := make(chan job)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for j := range next {
				x := sets[j.set]
				lo, hi := j.chunk*fitChunk, min((j.chunk+1)*fitChunk, len(x.set.Queries))
				sum := 0.0
				for i := lo; i < hi; i++ {
					if fresh[j.set] {
						parsed[j.set][i] = rankers[j.set].parseQuery(x.set.Queries[i].Text)
					}
					sum += rankers[j.set].reciprocalRank(x.set.Queries[i], parsed[j.set][i])
				}
				sums[j.set][j.chunk] = sum
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for i, x := range sets {
		if fresh[i] {
			x.store(rankers[i], parsed[i])
		}
	}
	total := 0.0
	for i, x := range sets {
		if len(x.set.Queries) == 0 {
			continue
		}
		sum := 0.0
		for _, v := range sums[i] {
			sum += v
		}
		total += sum / float64(len(x.set.Queries))
	}
	return total / float64(len(sets)), nil
}

// fitChunk is how many queries one job of the fit's objective scores.
const fitChunk = 64

// reciprocalRank returns 1 / the rank of q's first relevant hit within the
// first ten, 0 when none is there.
func (r *BM25F) reciprocalRank(q FitQuery, pq parsedQuery) float64 {
	res := r.searchParsed(Query{Text: q.Text, Limit: fitCutoff}, pq)
	for j, h := range res.Hits {
		if slices.Contains(q.Relevant, h.Name) {
			return 1 / float64(j+1)
		}
	}
	return 0
}

// ParamFactor reports whether switching f off only changes parameters
// (the index is the same); the others change how text is analysed.
func ParamFactor(f Factor) bool { return f&^paramFactors == 0 }
