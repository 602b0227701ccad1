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

// The factors, in the order [Factors] lists them.
const (
	// FactorNameField weights the tool's own name above its description.
	// Off, the name counts like the description's first sentence.
	FactorNameField Factor = 1 << iota
	// FactorLead weights the description's first sentence above the
	// rest. Off, the whole description counts like its first sentence.
	FactorLead
	// FactorServerName indexes the server's name. Off, it is not
	// searched.
	FactorServerName
	// FactorNameCoverage scales a tool up when the query explains its
	// name: the share of the name's words the query matched, times the
	// root of the share of the query's specificity in them.
	FactorNameCoverage
	// FactorSynonyms matches the forms of the synonym table's groups.
	FactorSynonyms
	// FactorAliases matches the forms of the alias table's groups (one
	// word spelled two ways: info, information) as the word the query
	// used.
	FactorAliases
	// FactorStemming stems English words (Porter2).
	FactorStemming
	// FactorStopWords drops function words and request filler. Off, only
	// one-letter words are dropped.
	FactorStopWords
	// FactorIdentifiers splits identifiers (snake, kebab, camel case)
	// into their words. Off, an identifier is one word.
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
)

var factorNames = [...]string{
	"name-field", "lead", "server-name", "name-coverage", "synonyms", "aliases", "stemming", "stop-words",
	"identifiers", "joined", "bigrams", "bilingual",
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
// known ones.
func ParseFactors(s string) (Factor, error) {
	var f Factor
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.Index(factorNames[:], name)
		if i < 0 {
			return 0, fmt.Errorf("unknown ranking factor %q: use one of %s", name, strings.Join(factorNames[:], ", "))
		}
		f |= 1 << i
	}
	return f, nil
}
