package layers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/toolshelf/toolshelf"

// layer gives every package of the module its level: a package may import
// only packages of a higher level. Keep it in step with
// docs/ARCHITECTURE.md; a package missing here fails the test.
var layer = map[string]int{
	"cmd/toolshelf":       0,
	"examples/library":    0,
	"internal/pays":       0,
	"internal/cli":        1,
	"internal/bench":      2,
	"gateway":             2,
	"adapter":             3,
	"":                    4, // the root package, toolshelf: the front door
	"internal/eval":       5,
	"internal/lexicon":    5,
	"lint":                5,
	"agent":               5,
	"codemode":            5,
	"catalog/builtin":     5,
	"provider/anthropic":  5,
	"provider/openai":     5,
	"provider/gemini":     5,
	"internal/standin":    5,
	"mcpclient":           5,
	"session":             6,
	"catalog":             6,
	"toolsearch":          6,
	"selection":           6,
	"provider":            6,
	"emulator":            6,
	"internal/usage":      6,
	"tool":                7,
	"search":              7,
	"transcript":          7,
	"llm/llmtest":         7,
	"tokens":              7,
	"internal/ecma":       8,
	"mcpclient/mcptest":   7,
	"llm":                 8,
	"internal/cut":        8,
	"internal/atomicfile": 8,
	"internal/adapt":      7,
	"internal/reftext":    8,
	"internal/safetext":   8,
	"internal/jsonscan":   8,
	"internal/userdir":    7,
	"internal/claudecode": 8,
	"internal/oauthtest":  8,
	"internal/layers":     9,

	// tests only: those that need both provider SDKs
	"internal/integration": 9,
}

// confined lists third-party modules that only the named packages may
// import (an SDK's types must not leak into other packages' APIs).
var confined = map[string][]string{
	"github.com/spf13/cobra":                 {"internal/cli"},
	"github.com/spf13/pflag":                 {"internal/cli"},
	"github.com/anthropics/anthropic-sdk-go": {"provider/anthropic"},
	"github.com/openai/openai-go":            {"provider/openai"},
	"github.com/modelcontextprotocol/go-sdk": {"mcpclient", "gateway"},
	"github.com/kljensen/snowball":           {"search"},
	"github.com/agnivade/levenshtein":        {"search", "codemode", "internal/cli"},
	"modernc.org/quickjs":                    {"codemode"},
	"modernc.org/memory":                     {"codemode"},
	"github.com/tiktoken-go/tokenizer":       {"tokens"},
	"github.com/dlclark/regexp2":             {"internal/ecma"},
	"github.com/schollz/progressbar":         {"internal/cli"},
	"github.com/go-jose/go-jose":             {"gateway"},
	"golang.org/x/oauth2":                    {"mcpclient", "gateway"},
}

// standalone lists packages that must stay independent of the rest of
// the module: everything they depend on, directly or not, within the
// module is one of the named packages or under a named folder (a name
// ending in "/"). The emulator checks the adapters' requests, so it must
// not be built from the code it checks (provider and its adapters, or
// anything else of toolshelf's): the stand-in models that know toolshelf
// live in internal/standin.
var standalone = map[string][]string{
	"emulator": {"llm", "tokens", "internal/"},
}

func TestImportsPointDown(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list imports: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		from, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s has no layer: add it to the table here and to docs/ARCHITECTURE.md", pkg)
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if imp == module {
				rel, ok = "", true // the root package
			}
			if ok {
				to, known := layer[rel]
				switch {
				case !known:
					// reported where the package itself is listed
				case to <= from:
					t.Errorf("%s (layer %d) imports %s (layer %d): imports must point down", pkg, from, rel, to)
				}
				continue
			}
			for mod, allowed := range confined {
				if (imp == mod || strings.HasPrefix(imp, mod+"/")) && !allowedIn(pkg, allowed) {
					t.Errorf("%s imports %s, which only %v may use", pkg, imp, allowed)
				}
			}
		}
	}
	if seen < len(layer)/2 {
		t.Errorf("go list found only %d known packages", seen)
	}
}

// TestStandalonePackagesDependOnlyOnTheirAllowance fails when a package
// of standalone depends, directly or through another package, on a
// package of the module outside its allowance.
func TestStandalonePackagesDependOnlyOnTheirAllowance(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	for pkg, allowed := range standalone {
		if _, ok := layer[pkg]; !ok {
			t.Errorf("standalone package %s has no layer", pkg)
		}
		cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", module+"/"+pkg)
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr.String())
		}
		deps := 0
		for _, dep := range strings.Fields(string(out)) {
			rel, ok := strings.CutPrefix(dep, module+"/")
			if !ok || rel == pkg {
				continue
			}
			deps++
			if !within(rel, allowed) {
				t.Errorf("%s depends on %s: it may depend only on %v of this module; move the code that needs %[2]s out of %[1]s", pkg, rel, allowed)
			}
		}
		if deps == 0 {
			t.Errorf("go list -deps %s found no package of the module: is the listing right?", pkg)
		}
	}
}

// within reports whether pkg is one of allowed, or under one that ends in
// "/".
func within(pkg string, allowed []string) bool {
	for _, a := range allowed {
		if pkg == a || strings.HasSuffix(a, "/") && strings.HasPrefix(pkg, a) {
			return true
		}
	}
	return false
}

func allowedIn(pkg string, allowed []string) bool {
	for _, a := range allowed {
		if pkg == a || strings.HasPrefix(pkg, a+"/") {
			return true
		}
	}
	return false
}

// TestLayerTableMatchesArchitectureDoc keeps docs/ARCHITECTURE.md naming
// every package the table knows.
func TestLayerTableMatchesArchitectureDoc(t *testing.T) {
	doc, err := readFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for pkg, l := range layer {
		name := pkg
		if pkg == "" {
			name = "toolshelf" // the root package
		}
		row := fmt.Sprintf("| %d | `%s` |", l, name)
		if l == 9 {
			row = fmt.Sprintf("| — | `%s` |", pkg)
		}
		if !strings.Contains(doc, row) {
			missing = append(missing, row)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/ARCHITECTURE.md's layer table lacks the rows %q", missing)
	}
}

func readFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}

// TestCIRunsTheREADMETestCommand keeps .ci/run running the test command
// that README.md gives new users, without -short, and with CI set.
func TestCIRunsTheREADMETestCommand(t *testing.T) {
	readme, err := readFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := readFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(readme, "```sh\n")
	lines := strings.Split(block, "\n")
	if !ok || len(lines) < 2 || !strings.HasPrefix(lines[0], "go run ./cmd/toolshelf ") {
		t.Fatalf("README.md must open with a sh block: the go run ./cmd/toolshelf command, then the test command")
	}
	if !strings.Contains(ci, "\n"+lines[1]+"\n") {
		t.Errorf(".ci/run does not run the README's test command %q", lines[1])
	}
	// CI runs every test: -short is the inner loop's.
	if strings.Contains(lines[1], "-short") {
		t.Errorf("the README's test command %q passes -short, which skips the corpus, bench and real-client tests CI must run", lines[1])
	}
	// With CI set, a real-server test whose servers are missing fails
	// instead of skipping, wherever .ci/run runs.
	if !strings.Contains(ci, "\nexport CI=") {
		t.Error(".ci/run does not export CI, so tests of real servers it failed to install would be skipped, not failed")
	}
}
