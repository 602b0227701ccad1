package search

import (
	_ "embed"
	"errors"
	"io"
	"slices"
	"strings"
)

//go:embed synonyms.txt
var synonymsText string

// ParseSynonyms reads a synonym table: one group per line, forms separated
// by commas, each form one or more words; # starts a comment. It returns
// the groups as written.
func ParseSynonyms(r io.Reader) ([][]string, error) {
	var groups [][]string
	err := tableLines(r, func(line string) error {
		var forms []string
		for _, f := range strings.Split(line, ",") {
			if f = strings.Join(strings.Fields(f), " "); f != "" {
				forms = append(forms, f)
			}
		}
		if len(forms) < 2 {
			return errors.New("a synonym group needs at least two forms separated by commas")
		}
		groups = append(groups, forms)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return groups, nil
}

// synonymTable finds synonym forms in analysed query terms.
type synonymTable struct {
	// alts maps an analysed form (terms joined by spaces) to every form
	// of every group that contains it, itself included.
	alts   map[string][][]string
	maxLen int
}

// buildSynonyms analyses the groups' forms with a. Forms that analyse to
// nothing (only stop words) are dropped.
func buildSynonyms(a *analyzer, groups [][]string) *synonymTable {
	st := &synonymTable{alts: make(map[string][][]string)}
	for _, g := range groups {
		var forms [][]string
		for _, f := range g {
			terms := a.fieldTerms(f, nil)
			if len(terms) == 0 || slices.ContainsFunc(forms, func(x []string) bool { return slices.Equal(x, terms) }) {
				continue
			}
			forms = append(forms, terms)
		}
		if len(forms) < 2 {
			continue
		}
		for _, f := range forms {
			key := strings.Join(f, " ")
			for _, other := range forms {
				if !slices.ContainsFunc(st.alts[key], func(x []string) bool { return slices.Equal(x, other) }) {
					st.alts[key] = append(st.alts[key], other)
				}
			}
			st.maxLen = max(st.maxLen, len(f))
		}
	}
	return st
}

// match returns the length of the longest form starting at terms[0] and
// its alternatives (the form itself included), or 0.
func (st *synonymTable) match(terms []string) (int, [][]string) {
	for l := min(st.maxLen, len(terms)); l >= 1; l-- {
		if alts, ok := st.alts[strings.Join(terms[:l], " ")]; ok {
			return l, alts
		}
	}
	return 0, nil
}
