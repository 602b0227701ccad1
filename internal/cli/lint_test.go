package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// writeLintCatalog writes a catalog file for server name with the given
// JSON tool objects and returns its path.
func writeLintCatalog(t *testing.T, name string, tools ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".json")
	doc := `{"server":"` + name + `","tools":[` + strings.Join(tools, ",") + `]}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLintBuiltinCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("lints the whole corpus three times; go test without -short runs it")
	}
	code, out, errOut := run(t, "lint")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q: want 0, the corpus has warnings but no errors", code, errOut)
	}
	if !strings.HasPrefix(out, "Summary: 1564 tools of 53 servers") {
		t.Errorf("the output does not start with the summary:\n%.300s", out)
	}
	for _, want := range []string{"  warning ", "          fix: ", "description-length", "\nUnreachable: ", "--fix saves ", "more findings not shown: --all prints every one"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(out, "\n"); n > 100 {
		t.Errorf("lint printed %d lines without --all; a reader wants the summary and the worst findings", n)
	}
	if code, out, errOut := run(t, "lint", "--fail-on", "warning", "--all"); code != 1 || !strings.Contains(errOut, "at or above warning (--fail-on warning)") ||
		!strings.Contains(out, "== github\n") || strings.Contains(out, "not shown") {
		t.Errorf("--fail-on warning --all: exit %d, stderr %q: want 1 for the corpus's warnings, and every finding", code, errOut)
	}
	// At k 1 some tools of the corpus fall outside: each is named with
	// its best rank and the query.
	if code, out, errOut := run(t, "lint", "--k", "1", "--fail-on", "never"); code != 0 || !strings.Contains(out, "best rank") {
		t.Errorf("--k 1: exit %d, %s; output has no best rank", code, errOut)
	}
	if code, _, errOut := run(t, "lint", "--fail-on", "never", "--disable", "unreachable"); code != 0 {
		t.Errorf("--fail-on never: exit %d, %s", code, errOut)
	}
	if code, _, errOut := run(t, "lint", "--fail-on", "error", "--disable", "unreachable"); code != 0 {
		t.Errorf("--fail-on error (the corpus has no errors): exit %d, %s", code, errOut)
	}
}

func TestLintJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("lints the whole corpus; go test without -short runs it")
	}
	code, out, _ := run(t, "lint", "--json", "--fail-on", "never")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Servers, Tools, K int
		Findings          []struct{ Rule, Severity, Server, Tool, Message, Fix string }
		Counts            []struct {
			Rule  string
			Count int
		}
		Unreachable []struct {
			Server, Tool string
			BestRank     int `json:"best_rank"`
		}
		Slimmed []struct {
			Schema        json.RawMessage
			Before, After int
		}
		TokensBefore int `json:"tokens_before"`
		TokensAfter  int `json:"tokens_after"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%.500s", err, out)
	}
	// No built-in tool is unreachable with the default ranker; the lint
	// package's tests cover the unreachable rule.
	if rep.Servers != 53 || rep.Tools != 1564 || rep.K != 5 || len(rep.Findings) == 0 || len(rep.Counts) == 0 ||
		len(rep.Slimmed) == 0 || rep.TokensAfter >= rep.TokensBefore {
		t.Errorf("report: %d servers, %d tools, k %d, %d findings, %d counts, %d unreachable, %d slimmed, %d -> %d tokens",
			rep.Servers, rep.Tools, rep.K, len(rep.Findings), len(rep.Counts), len(rep.Unreachable), len(rep.Slimmed),
			rep.TokensBefore, rep.TokensAfter)
	}
	if f := rep.Findings[0]; f.Severity == "" || f.Rule == "" || f.Server == "" || f.Message == "" || f.Fix == "" {
		t.Errorf("first finding %+v", f)
	}
}

func TestLintFix(t *testing.T) {
	t.Parallel()
	path := writeLintCatalog(t, "tracker",
		`{"name":"list_issues","description":"List the issues of a repository.","inputSchema":{"type":"object","properties":{"owner":{"type":"string","description":"Owner of the issues"},"per_page":{"type":"integer","default":30,"examples":[10],"description":"Results per page. Defaults to 30."}},"required":["owner"]}}`,
		`{"name":"close_issue","description":"Close an issue.","inputSchema":{"type":"object","properties":{"number":{"type":"integer","description":"The issue's number, as in its URL"}}}}`,
	)
	code, out, errOut := run(t, "lint", "--catalog", path, "--fix", "--fail-on", "never")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "tracker/list_issues: ") || !strings.Contains(lines[0], " -> ") {
		t.Fatalf("first line %q: want the tool and its tokens", lines[0])
	}
	want := `{"type":"object","properties":{"owner":{"type":"string"},"per_page":{"type":"integer","default":30,"description":"Results per page."}},"required":["owner"]}`
	if lines[1] != want {
		t.Errorf("schema\n got %s\nwant %s", lines[1], want)
	}
	if strings.Contains(out, "close_issue:") {
		t.Errorf("a tool --fix leaves alone is listed:\n%s", out)
	}
	if !strings.Contains(out, "--fix saves ") || !strings.Contains(out, "in 1 of 2 tools") {
		t.Errorf("no total:\n%s", out)
	}
}

func TestLintCatalogExitStatus(t *testing.T) {
	t.Parallel()
	clean := writeLintCatalog(t, "notes",
		`{"name":"create_note","description":"Create a note in the notebook.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}}}}`,
		`{"name":"delete_note","description":"Delete a note from the notebook.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}}}`,
	)
	code, out, errOut := run(t, "lint", "--catalog", clean, "--fail-on", "info")
	if code != 0 || !strings.Contains(out, "Summary: 2 tools of 1 server, 0 findings") {
		t.Errorf("clean catalog: exit %d, %s\n%s", code, errOut, out)
	}
	colliding := writeLintCatalog(t, "files",
		`{"name":"read-file","description":"Read a file.","inputSchema":{}}`,
		`{"name":"read_file","description":"Read a text file.","inputSchema":{}}`,
	)
	code, out, errOut = run(t, "lint", "--catalog", colliding, "--fail-on", "error")
	if code != 1 || !strings.Contains(out, "name-collision") || !strings.Contains(errOut, "2 findings at or above error") {
		t.Errorf("colliding names: exit %d, %s\n%s", code, errOut, out)
	}
}

// TestLintRefusedTools checks that tools providers would reject are lint
// errors, reported once (not also as warnings), and that a catalog of
// nothing else still lints.
func TestLintRefusedTools(t *testing.T) {
	t.Parallel()
	path := writeLintCatalog(t, "shaky",
		`{"name":"regex","description":"Match a pattern.","inputSchema":{"type":"object","properties":{"q":{"type":"string","pattern":"(((("}}}}`,
		`{"name":"loop","description":"Refer to itself.","inputSchema":{"type":"object","$ref":"#"}}`,
		`{"name":"wordy","description":"`+strings.Repeat("w", 1<<20)+`"}`,
	)
	code, out, errOut := run(t, "lint", "--catalog", path, "--fail-on", "error", "--disable", "unreachable")
	if code != 1 || !strings.Contains(errOut, "3 findings at or above error") {
		t.Errorf("exit %d, stderr %q: want 1 for three errors", code, errOut)
	}
	for _, want := range []string{"regex\n  error   invalid-schema: ", "loop\n  error   invalid-schema: ", "wordy\n  error   too-large: ",
		"Summary: 3 tools of 1 server, 3 findings (3 errors"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%.3000s", want, out)
		}
	}
	if strings.Contains(errOut, "warning") {
		t.Errorf("refused tools are also warnings: %s", errOut)
	}
	if len(out) > 10000 {
		t.Errorf("output is %d bytes long", len(out))
	}
}

func TestLintUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"lint", "--k", "0"},
		{"lint", "--fail-on", "fatal"},
		{"lint", "--disable", "no-such-rule"},
		{"lint", "extra"},
	} {
		if code, _, errOut := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2; %s", args, code, errOut)
		}
	}
	if code, _, errOut := run(t, "lint", "--catalog", filepath.Join(t.TempDir(), "missing.json")); code != 1 || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing catalog: exit %d, %s", code, errOut)
	}
}

// TestLintSummaryFirstAndBounded: lint prints its summary first, then at
// most 20 findings, the most severe first, and says how many more --all
// prints; warnings, which a server's author must fix, do not fail it
// unless --fail-on warning asks.
func TestLintSummaryFirstAndBounded(t *testing.T) {
	t.Parallel()
	long := "Lists the items of a folder. It reads them. It sorts them. It pages them. It counts them."
	var tools []string
	for i := range 30 {
		tools = append(tools, fmt.Sprintf(`{"name":"list_items_%d","description":%q,"inputSchema":{"type":"object","properties":{"name":{"type":"string","description":"The name"}}}}`, i, long))
	}
	path := writeLintCatalog(t, "folders", tools...)
	code, out, errOut := run(t, "lint", "--catalog", path, "--disable", "unreachable", "--disable", "near-duplicate")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q: want 0 for warnings and info", code, errOut)
	}
	if !strings.HasPrefix(out, "Summary: 30 tools of 1 server, 60 findings (0 errors, 30 warnings, 30 info)\n") {
		t.Errorf("the output does not start with the summary:\n%s", out)
	}
	if n := strings.Count(out, "\n  warning "); n != 20 || strings.Contains(out, "\n  info ") {
		t.Errorf("%d warnings shown and info %v; want the 20 most severe findings", n, strings.Contains(out, "\n  info "))
	}
	if !strings.HasSuffix(out, "\n40 more findings not shown: --all prints every one, --json the whole report\n") {
		t.Errorf("the output does not end saying what is not shown:\n%s", out)
	}
	code, out, _ = run(t, "lint", "--catalog", path, "--disable", "unreachable", "--disable", "near-duplicate", "--all")
	if code != 0 || strings.Count(out, "\n  warning ") != 30 || strings.Count(out, "\n  info ") != 30 || strings.Contains(out, "not shown") {
		t.Errorf("--all: exit %d, not every finding:\n%s", code, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > maxWidth {
			t.Errorf("a line of %d columns, over %d: %s", n, maxWidth, line)
		}
	}
	if code, _, errOut := run(t, "lint", "--catalog", path, "--disable", "unreachable", "--disable", "near-duplicate", "--fail-on", "warning"); code != 1 || !strings.Contains(errOut, "30 findings at or above warning") {
		t.Errorf("--fail-on warning: exit %d, stderr %q; want 1", code, errOut)
	}
}
