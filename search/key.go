package search

import (
	"slices"
	"strings"
	"sync"
)

// keyAnalyzer is the default ranker's analyser, without an index: what
// [QueryKey] reads a query with.
var keyAnalyzer = sync.OnceValues(func() (*analyzer, error) {
	lx, err := builtinTables()
	if err != nil {
		return nil, err
	}
	return &analyzer{stem: newStemmer(), bilingual: lx, stops: stopWords}, nil
})

// QueryKey returns the form of a free-text query under which something
// learned about it is kept, such as a user's alias: its words read as the
// default ranker reads them (identifiers split, lower case, stop words
// and one-letter words dropped, each word reduced to its Porter2 stem, CJK
// runs as bigrams), each once, sorted, joined by spaces. So "Search the
// issues" and "issue search" share a key. A select: query, a query with no
// such word and a query of more than maxKeyWords words have none ("").
func QueryKey(text string) string {
	text = strings.TrimSpace(text)
	if len(text) >= 7 && strings.EqualFold(text[:7], "select:") {
		return ""
	}
	an, err := keyAnalyzer()
	if err != nil {
		return ""
	}
	terms := an.terms(strings.ReplaceAll(text, "+", " "), nil, false)
	for i, t := range terms {
		terms[i] = an.stem.family(t)
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	if len(terms) > maxKeyWords {
		return ""
	}
	return strings.Join(terms, " ")
}

// maxKeyWords is the most distinct words a query with a [QueryKey] has: a
// longer one is a request in the user's own words, which no later query
// repeats.
const maxKeyWords = 12
