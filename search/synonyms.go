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

// aliasesText is the alias table: groups of forms that are one word spelled
// two ways (info, information), which a query's form matches at full weight.
//
//go:embed aliases.txt
var aliasesText string

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
	alts map[string][][]string
	// same maps an analysed form to the forms that are aliases of it
	// (one word spelled two ways), which count as the form itself.
	same   map[string][][]string
	maxLen int
}

// buildSynonyms analyses the groups' forms with a. Forms that analyse to
// nothing (only stop words) are dropped.
func buildSynonyms(a *analyzer, groups, aliases [][]string) *synonymTable {
	st := &synonymTable{alts: make(map[string][][]string), same: make(map[string][][]string)}
	st.add(a, groups, st.alts)
	st.add(a, aliases, st.alts)
	st.add(a, aliases, st.same)
	return st
}

// add analyses the groups' forms with a into to.
func (st *synonymTable) add(a *analyzer, groups [][]string, to map[string][][]string) {
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
				if !slices.ContainsFunc(to[key], func(x []string) bool { return slices.Equal(x, other) }) {
					to[key] = append(to[key], other)
				}
			}
			st.maxLen = max(st.maxLen, len(f))
		}
	}
}

// alias reports whether form is an alias of used: one word spelled two
// ways, or the same form.
func (st *synonymTable) alias(used, form []string) bool {
	if slices.Equal(used, form) {
		return true
	}
	return slices.ContainsFunc(st.same[strings.Join(used, " ")], func(x []string) bool { return slices.Equal(x, form) })
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
