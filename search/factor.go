package search

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Factor is one score factor or analysis step of the toolshelf ranker.
// A set of them (Factor values or-ed together) in [Options.Disable]
// switches them off, so an evaluation can measure what each one earns.
// The query syntax (select:, exact names, +required words) and the hints
// are not factors: they are what the ranker promises, not how it scores.
type Factor uint32

// The factors, in the order [Factors] lists them. With every factor off
// the ranker is the reference's plain BM25 over the same fields
// ([ReferenceParams]); each factor is one way toolshelf departs from it.
const (
	// FactorNameField weights the tool's own name by the fitted
	// [Params.Name]. Off, the name counts as in the reference.
	FactorNameField Factor = 1 << iota
	// FactorLead weights the description's first sentence by
	// [Params.Lead]. Off, it counts like the rest of the description.
	FactorLead
	// FactorServerName weights the server's name by [Params.Server]. Off,
	// it counts as in the reference.
	FactorServerName
	// FactorParams weights the parameters' text by [Params.Params]. Off,
	// it counts as in the reference.
	FactorParams
	// FactorSchemaText indexes the parameters' titles, string enum values,
	// additionalProperties and $defs too. Off, the reference's schema
	// text: descriptions and property names.
	FactorSchemaText
	// FactorServerText weights the server's description and
	// instructions by [Params.ServerText]. Off, they count as in the
	// reference.
	FactorServerText
	// FactorLength uses the fitted saturation and length normalisation
	// ([Params.K1], [Params.B]). Off, BM25's usual 1.2 and 0.75.
	FactorLength
	// FactorNameCoverage scales a tool up when the query explains its
	// name: the share of the name's words the query matched, times the
	// root of the share of the query's specificity in them, times
	// [Params.NameBoost].
	FactorNameCoverage
	// FactorSynonyms matches the forms of the synonym table's groups at
	// [Params.Synonym].
	FactorSynonyms
	// FactorAliases matches the forms of the alias table's groups (one
	// word spelled two ways: info, information) as the word the query
	// used.
	FactorAliases
	// FactorStemming stems English words with Porter2. Off, the
	// reference's light plural stemmer.
	FactorStemming
	// FactorStopWords drops function words, request filler and
	// one-letter words. Off, the reference's 21 stop words.
	FactorStopWords
	// FactorIdentifiers splits words as toolshelf does: identifiers at
	// snake, kebab and camel case with acronym plurals (PRs, IDs) kept
	// whole, letters of every script kept. Off, the reference's split:
	// at camel-case boundaries and every character outside a-z and 0-9
	// (CJK runs are analysed as with it on).
	FactorIdentifiers
	// FactorJoined indexes the joined form of a word of several parts
	// (createissue for create_issue) and matches a query's identifier
	// whole.
	FactorJoined
	// FactorBigrams indexes CJK runs as character bigrams. Off, a run is
	// one term.
	FactorBigrams
	// FactorBilingual translates CJK dictionary words to English terms.
	FactorBilingual
	factorEnd

	// FactorsAll is every factor: the reference's BM25.
	FactorsAll = factorEnd - 1
)

var factorNames = [...]string{
	"name-field", "lead", "server-name", "params", "schema-text", "server-text", "length", "name-coverage", "synonyms",
	"aliases", "stemming", "stop-words", "identifiers", "joined", "bigrams", "bilingual",
}

// Factors returns every factor, one bit each, in a fixed order.
func Factors() []Factor {
	out := make([]Factor, 0, len(factorNames))
	for f := Factor(1); f < factorEnd; f <<= 1 {
		out = append(out, f)
	}
	return out
}

// Has reports whether every factor of g is in f.
func (f Factor) Has(g Factor) bool { return f&g == g }

// String returns the factors' names, comma-separated, such as
// "synonyms,stemming"; "" for none.
func (f Factor) String() string {
	var names []string
	for g := f; g != 0; g &= g - 1 {
		i := bits.TrailingZeros32(uint32(g))
		if i < len(factorNames) {
			names = append(names, factorNames[i])
		} else {
			names = append(names, fmt.Sprintf("factor%d", i))
		}
	}
	return strings.Join(names, ",")
}

// ParseFactors reads a comma-separated list of factor names, as
// [Factor.String] writes them. An unknown name is an error that lists the
// known ones. "all" names every factor.
func ParseFactors(s string) (Factor, error) {
	var f Factor
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "all" {
			f |= FactorsAll
			continue
		}
		i := slices.Index(factorNames[:], name)
		if i < 0 {
			return 0, fmt.Errorf("unknown ranking factor %q: use one of %s, or all", name, strings.Join(factorNames[:], ", "))
		}
		f |= 1 << i
	}
	return f, nil
}
