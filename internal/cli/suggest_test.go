package cli

import (
	"strings"
	"testing"
)

// TestDidYouMean: a mistyped command or flag is a usage error that names
// what was probably meant; a word close to nothing gets no guess.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in stderr
		not  string // not in stderr
	}{
		{[]string{"serch", "github issues"}, `unknown command "serch" for "toolshelf"; did you mean "search"?`, ""},
		{[]string{"stat"}, `did you mean "stats"?`, ""},
		{[]string{"mcp", "lst"}, `unknown command "lst" for "toolshelf mcp"; did you mean "list"?`, ""},
		{[]string{"sessions", "shwo", "last"}, `did you mean "show"?`, ""},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "toolshelf"; "toolshelf --help" lists the commands`, "did you mean"},
		{[]string{"run", "--provder", "emulator", "hello"}, "unknown flag: --provder; did you mean --provider?", ""},
		{[]string{"search", "--limt", "2", "x"}, "unknown flag: --limt; did you mean --limit?", ""},
		{[]string{"bench", "--profle", "team"}, "did you mean --profile?", ""},
		{[]string{"bench", "--prof", "team"}, "did you mean --profile?", ""},
		{[]string{"search", "-ranker", "pi", "x"}, "did you mean --ranker?", ""},
		{[]string{"stats", "--jsn"}, "did you mean --json?", ""},
		{[]string{"search", "--zzzzzz", "x"}, "unknown flag: --zzzzzz", "did you mean"},
	} {
		code, _, errOut := run(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || (c.not != "" && strings.Contains(errOut, c.not)) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
