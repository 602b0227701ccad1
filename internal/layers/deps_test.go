package layers

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// ownModel is a program that brings its own llm.Model to the front door
// (testdata/ownmodel): it names no provider, so it must link no provider
// SDK, no adapter and no emulator.
const ownModel = "./internal/layers/testdata/ownmodel"

// unlinked lists what a program with a model of its own must not depend
// on: the provider SDKs (any package of their modules), the adapters on
// them and the emulator with its stand-in model, which package adapter
// brings to the programs that name a provider.
var unlinked = []string{
	"github.com/anthropics/anthropic-sdk-go",
	"github.com/openai/openai-go",
	module + "/adapter",
	module + "/provider/anthropic",
	module + "/provider/openai",
	module + "/provider/gemini",
	module + "/emulator",
	module + "/internal/standin",
}

// TestOwnModelLinksNoProvider fails when the root package, or anything
// it imports, brings a provider SDK, an adapter or the emulator into a
// program that brings its own model: those belong in package adapter,
// which AgentConfig.NewModel names.
func TestOwnModelLinksNoProvider(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	// vet type-checks the program, so it keeps up with the API it shows.
	vet := exec.Command(goTool, "vet", ownModel)
	vet.Dir = "../.."
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet %s: %v\n%s", ownModel, err, out)
	}
	cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ownModel)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", ownModel, err, stderr.String())
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module) {
		t.Fatalf("go list -deps %s does not list the root package: is the listing right?\n%s", ownModel, out)
	}
	for _, u := range unlinked {
		var hits []string
		for _, dep := range deps {
			if dep == u || strings.HasPrefix(dep, u+"/") {
				hits = append(hits, dep)
			}
		}
		if len(hits) > 0 {
			t.Errorf("a program with its own model depends on %s (%d of its packages, such as %s): move what needs it out of the root package, and out of what the root imports, to package adapter", u, len(hits), hits[0])
		}
	}
}
