package search

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sync"
)

// Params are the toolshelf ranker's continuous parameters: the BM25F
// weights of a tool's fields, BM25's saturation and length normalisation,
// and the weights of the synonym and name factors.
//
// The ranker scores a document as BM25 over one bag of words in which each
// field's words count as often as the field's weight says (Robertson,
// Zaragoza and Taylor's BM25F): with [ReferenceParams] and every factor off
// it is the reference's plain BM25. The defaults ([DefaultParams]) are
// fitted on the evaluation suite by `toolshelf eval --fit`, which writes
// weights.json in this package's folder; the binary embeds that file.
//
// The weights are relative to the rest of the description (after its
// first sentence), which counts once: scaling every weight alike would
// change nothing that k1 cannot.
type Params struct {
	// Name weights the tool's own name, split into words.
	Name float64 `json:"name"`
	// Lead weights the description's first sentence.
	Lead float64 `json:"lead"`
	// Params weights parameter names, descriptions and enum values.
	Params float64 `json:"params"`
	// Server weights the server's short name.
	Server float64 `json:"server"`
	// ServerText weights the server's description and instructions.
	ServerText float64 `json:"server_text"`
	// K1 is BM25's term-frequency saturation.
	K1 float64 `json:"k1"`
	// B is BM25's length normalisation, from 0 (none) to 1 (full).
	B float64 `json:"b"`
	// Synonym scales matches of a synonym the query did not use (ticket
	// for issue) relative to the word it used.
	Synonym float64 `json:"synonym"`
	// LongSynonym scales Synonym in a query of more than six words: a
	// user's request, in the user's own words, rather than the keywords a
	// model searches with.
	LongSynonym float64 `json:"long_synonym"`
	// Stem weights matches of another word of the query word's Porter2
	// family (created, creation for create; [FactorStemming]) relative to
	// the word itself.
	Stem float64 `json:"stem"`
	// NameBoost is how much more a tool scores, at most, when the query
	// explains its name ([FactorNameCoverage]).
	NameBoost float64 `json:"name_boost"`
}

// ReferenceParams returns the parameters under which the ranker, with
// every factor off, scores as the reference's plain BM25 (k1 1.2, b 0.75):
// the reference indexes a tool's name twice (as written and with spaces
// for underscores) and the server's name once more inside it, and every
// other text once.
func ReferenceParams() Params {
	return Params{Name: 2, Lead: 1, Params: 1, Server: 3, ServerText: 1, K1: piK1, B: piB}
}

// check reports parameters the ranker cannot use.
func (p Params) check() error {
	for _, v := range []float64{p.Name, p.Lead, p.Params, p.Server, p.ServerText, p.K1, p.B, p.Synonym, p.LongSynonym, p.Stem, p.NameBoost} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("ranking parameters %+v: want finite numbers of 0 or more", p)
		}
	}
	switch {
	case p.K1 == 0:
		return fmt.Errorf("ranking parameter k1 is 0: want a positive saturation such as %v", piK1)
	case p.B > 1:
		return fmt.Errorf("ranking parameter b is %v: want a length normalisation from 0 to 1", p.B)
	case p.Synonym > 1:
		return fmt.Errorf("ranking parameter synonym is %v: want a weight from 0 to 1", p.Synonym)
	case p.LongSynonym > 1:
		return fmt.Errorf("ranking parameter long_synonym is %v: want a weight from 0 to 1", p.LongSynonym)
	case p.Stem > 1:
		return fmt.Errorf("ranking parameter stem is %v: want a weight from 0 to 1", p.Stem)
	}
	return nil
}

// fields returns the field weights by field.
func (p Params) fields() [maxFields]float64 {
	return [maxFields]float64{fieldName: p.Name, fieldLead: p.Lead, fieldBody: 1, fieldParams: p.Params,
		fieldServer: p.Server, fieldServerText: p.ServerText}
}

// withFactorsOff returns p with the parameters of the factors in off set to
// the reference's values.
func (p Params) withFactorsOff(off Factor) Params {
	ref := ReferenceParams()
	if off.Has(FactorNameField) {
		p.Name = ref.Name
	}
	if off.Has(FactorLead) {
		p.Lead = 1
	}
	if off.Has(FactorServerName) {
		p.Server = ref.Server
	}
	if off.Has(FactorParams) {
		p.Params = ref.Params
	}
	if off.Has(FactorServerText) {
		p.ServerText = ref.ServerText
	}
	if off.Has(FactorLength) {
		p.K1, p.B = ref.K1, ref.B
	}
	if off.Has(FactorNameCoverage) {
		p.NameBoost = 0
	}
	if off.Has(FactorSynonyms) {
		p.Synonym = 0
	}
	if off.Has(FactorStemming) {
		p.Stem = 0
	}
	return p
}

// Weights is the file `toolshelf eval --fit` writes: the fitted default
// parameters, the factors the fit left on, and the parameters of each
// leave-one-set-out fold.
type Weights struct {
	// About says what wrote the file.
	About string `json:"about"`
	// Suite names the suite the weights were fitted on, Seed the seed of
	// its fit and test halves.
	Suite string `json:"suite"`
	Seed  uint64 `json:"seed"`
	// Disable lists the factors the fit switched off, as
	// [Factor.String] writes them.
	Disable string `json:"disable"`
	// Params are the default parameters, fitted on the fit halves of
	// every set.
	Params Params `json:"params"`
	// Folds holds, per set name, the parameters fitted on every other
	// set's fit half.
	Folds map[string]Params `json:"folds"`
}

// Encode writes w as the fitting command writes it: indented JSON with a
// final newline, keys in a fixed order, so that a re-run can be compared
// byte for byte.
func (w Weights) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseWeights reads a weights file; every parameter set in it must be
// usable.
func ParseWeights(data []byte) (Weights, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w Weights
	if err := dec.Decode(&w); err != nil {
		return Weights{}, fmt.Errorf("weights: %v; write it with toolshelf eval --fit", err)
	}
	if err := w.Params.check(); err != nil {
		return Weights{}, fmt.Errorf("weights: %w", err)
	}
	if _, err := ParseFactors(w.Disable); err != nil {
		return Weights{}, fmt.Errorf("weights: %w", err)
	}
	for name, p := range w.Folds {
		if err := p.check(); err != nil {
			return Weights{}, fmt.Errorf("weights: fold %s: %w", name, err)
		}
	}
	return w, nil
}

//go:embed weights.json
var weightsJSON []byte

// embeddedWeights is weights.json, parsed once.
var embeddedWeights = sync.OnceValues(func() (Weights, error) { return ParseWeights(weightsJSON) })

// FittedWeights returns the embedded weights file.
func FittedWeights() (Weights, error) { return embeddedWeights() }

// DefaultParams returns the default ranker's parameters: the fitted ones
// of the embedded weights file.
func DefaultParams() Params {
	w, err := embeddedWeights()
	if err != nil {
		// weights.json is part of the package; TestEmbeddedWeights
		// parses it.
		panic(err)
	}
	return w.Params
}

// DefaultDisable returns the factors the fit left off in the default
// ranker.
func DefaultDisable() Factor {
	w, err := embeddedWeights()
	if err != nil {
		panic(err)
	}
	f, _ := ParseFactors(w.Disable)
	return f
}
