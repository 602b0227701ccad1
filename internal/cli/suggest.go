package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// maxSuggestions bounds the names a "did you mean" lists.
const maxSuggestions = 3

// unknownCommand is the error for a word that is not one of cmd's
// subcommands, with the ones it is closest to.
func unknownCommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
			if slices.ContainsFunc(c.SuggestFor, func(s string) bool { return strings.EqualFold(s, word) }) {
				return fmt.Errorf("%s; did you mean %q?", msg, c.Name())
			}
		}
	}
	if s := closest(word, names); len(s) > 0 {
		return fmt.Errorf("%s; did you mean %s?", msg, orList(quoteAll(s, `"`, `"`)))
	}
	return fmt.Errorf("%s; %q lists the commands", msg, cmd.CommandPath()+" --help")
}

// withFlagSuggestion adds to a flag parser's "unknown flag" error the flags
// of cmd (its own and those it inherits) the name was probably meant to
// be. A long name given with one dash ("-provider"), which the parser
// reads as shorthands, is matched as the long name. Other errors pass
// unchanged.
func withFlagSuggestion(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return err
	}
	typed := ne.GetSpecifiedName()
	if short := ne.GetSpecifiedShortnames(); short != "" {
		if len(short) == 1 {
			return err
		}
		typed = short // -provider: a long name with one dash
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := closest(typed, names); len(s) > 0 {
		return fmt.Errorf("%w; did you mean %s?", err, orList(quoteAll(s, "--", "")))
	}
	return err
}

// closest returns the names nearest to typed, sorted: those a prefix of
// which it is (at least two letters), or within two edits (one for words
// of three letters or fewer), keeping only the nearest.
func closest(typed string, names []string) []string {
	typed = strings.ToLower(typed)
	maxDist := 2
	if len(typed) <= 3 {
		maxDist = 1
	}
	best, found := maxDist+1, []string(nil)
	for _, name := range names {
		lower := strings.ToLower(name)
		d := levenshtein.ComputeDistance(typed, lower)
		if len(typed) >= 2 && strings.HasPrefix(lower, typed) {
			d = min(d, 1)
		}
		switch {
		case d >= len(name) || d > maxDist || d > best:
		case d < best:
			best, found = d, []string{name}
		default:
			found = append(found, name)
		}
	}
	slices.Sort(found)
	return found[:min(len(found), maxSuggestions)]
}

func quoteAll(names []string, before, after string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = before + n + after
	}
	return out
}

// orList joins "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
