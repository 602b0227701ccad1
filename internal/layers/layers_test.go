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
	"cmd/toolshelf":      0,
	"internal/cli":       1,
	"bench":              2,
	"eval":               3,
	"lint":               3,
	"agent":              3,
	"catalog/builtin":    3,
	"provider/anthropic": 3,
	"provider/openai":    3,
	"emulator":           3,
	"mcpclient":          3,
	"session":            4,
	"catalog":            4,
	"toolsearch":         4,
	"selection":          4,
	"provider":           4,
	"tool":               5,
	"search":             5,
	"transcript":         5,
	"llm/llmtest":        5,
	"tokens":             5,
	"internal/adapt":     5,
	"internal/ecma":      6,
	"mcpclient/mcptest":  5,
	"llm":                6,
	"internal/cut":       6,
	"internal/reftext":   6,
	"internal/safetext":  6,
	"internal/userdir":   6,
	"internal/layers":    9,
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
	"github.com/agnivade/levenshtein":        {"search"},
	"github.com/tiktoken-go/tokenizer":       {"tokens"},
	"github.com/dlclark/regexp2":             {"internal/ecma"},
	"github.com/schollz/progressbar":         {"internal/cli"},
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
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
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
		row := fmt.Sprintf("| %d | `%s` |", l, pkg)
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
// that README.md gives new users.
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
}
