package cli

import (
	"strings"
	"testing"
)

// TestDidYouMean: a mistyped command or flag is a usage error that names
// what was probably meant; a word close to nothing gets no guess.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
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
		{[]string{"stats", "--log-formt", "json"}, "did you mean --log-format?", ""},
		{[]string{"search", "--zzzzzz", "x"}, "unknown flag: --zzzzzz", "did you mean"},
	} {
		code, _, errOut := run(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || (c.not != "" && strings.Contains(errOut, c.not)) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestVerboseMeansOneThing: -v is --verbose on every command, root
// included, and --version has no shorthand.
func TestVerboseMeansOneThing(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "toolshelf version ") {
		t.Errorf("--version: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = run(t, "-v")
	if code != 0 || strings.Contains(out, "toolshelf version ") || !strings.Contains(out, "Usage:") {
		t.Errorf("-v alone: exit %d, %q; want the help, not the version", code, out)
	}
	for _, args := range [][]string{{"run", "--help"}, {"chat", "--help"}, {"serve", "--help"}, {"mcp", "list", "--help"}, {"search", "--help"}, {"--help"}} {
		code, out, _ := run(t, args...)
		if code != 0 || !strings.Contains(out, "-v, --verbose") || strings.Contains(out, "-v, --version") {
			t.Errorf("%q: exit %d; want -v, --verbose in:\n%s", args, code, out)
		}
	}
	// Before the command and after it, -v is the same flag.
	for _, args := range [][]string{
		{"-v", "run", "--provider", "emulator", "--mcp", testMCP(t, nil), "--no-session", "--metrics", "off", "--log-format", "text", "Echo the text"},
		{"run", "-v", "--provider", "emulator", "--mcp", testMCP(t, nil), "--no-session", "--metrics", "off", "--log-format", "text", "Echo the text"},
	} {
		errOut := &watcher{} // the servers' logs are written concurrently
		code := Main(t.Context(), args, strings.NewReader(""), &watcher{}, errOut)
		if code != 0 || !strings.Contains(errOut.String(), "level=INFO msg=connected server=t") {
			t.Errorf("%q: exit %d; want the info log of the connection in:\n%s", args, code, errOut.String())
		}
	}
}
