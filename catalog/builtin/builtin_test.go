package builtin_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/tool"
)

const (
	wantServers = 53
	wantTools   = 1564
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestServers(t *testing.T) {
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatalf("Servers: %v", err)
	}
	if len(servers) != wantServers {
		t.Errorf("Servers() returned %d servers, want %d", len(servers), wantServers)
	}
	total := 0
	seen := map[string]bool{}
	var files []string
	for _, s := range servers {
		total += len(s.Tools)
		if seen[s.Name] {
			t.Errorf("server %q is listed twice", s.Name)
		}
		seen[s.Name] = true
		files = append(files, s.File)
		// Every built-in file names its server after itself.
		if want := strings.TrimSuffix(s.File, ".json"); s.Name != want {
			t.Errorf("file %s holds server %q, want %q", s.File, s.Name, want)
		}
		if len(s.Tools) == 0 {
			t.Errorf("server %q has no tools", s.Name)
		}
		if s.Package == "" || s.Version == "" {
			t.Errorf("server %q: package %q, version %q, want both", s.Name, s.Package, s.Version)
		}
	}
	if total != wantTools {
		t.Errorf("Servers() holds %d tools, want %d", total, wantTools)
	}
	if !slices.IsSorted(files) {
		t.Errorf("servers are not in file-name order: %v", files)
	}

	again, err := builtin.Servers()
	if err != nil || len(again) != len(servers) || (len(again) > 0 && again[0] != servers[0]) {
		t.Errorf("a second Servers() call did not return the shared result")
	}
}

// TestServersMatchReadme checks the per-file tool counts in README.md.
func TestServersMatchReadme(t *testing.T) {
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^\| ([a-z0-9-]+\.json) \|.*\| (\d+) \|$`)
	want := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[2])
			want[m[1]] = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range servers {
		got[s.File] = len(s.Tools)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools per file, README.md (-want) and the catalog (+got):\n%s", diff)
	}
}

func TestLoad(t *testing.T) {
	reg := tool.NewRegistry()
	namer := tool.NewNamer()
	if err := builtin.Load(reg, namer); err != nil {
		t.Fatalf("Load: %v", err)
	}
	tools := reg.Tools()
	if len(tools) != wantTools || reg.Len() != wantTools {
		t.Errorf("Load registered %d tools, want %d", len(tools), wantTools)
	}
	if active := reg.ActiveNames(); len(active) != 0 {
		t.Errorf("%d tools are active after Load, want none: %v", len(active), active)
	}

	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[tool.Origin]bool{}
	for _, s := range servers {
		for _, e := range s.Tools {
			listed[tool.Origin{Server: s.Name, Tool: e.Name}] = true
		}
	}

	names := map[string]bool{}
	origins := map[tool.Origin]bool{}
	for _, tl := range tools {
		if names[tl.Name] {
			t.Errorf("name %q is registered twice", tl.Name)
		}
		names[tl.Name] = true
		if !validName.MatchString(tl.Name) {
			t.Errorf("invalid name %q", tl.Name)
		}
		if tl.Exposure != tool.Deferred {
			t.Errorf("%s: exposure %q, want deferred", tl.Name, tl.Exposure)
		}
		if tl.Description == "" {
			t.Errorf("%s has no description", tl.Name)
		}
		if !strings.HasPrefix(string(tl.Parameters), "{") {
			t.Errorf("%s: parameters %.40s are not an object", tl.Name, tl.Parameters)
		}
		if tl.Namespace == nil || tl.Namespace.Name != tool.NamespaceName(tl.Origin.Server) {
			t.Errorf("%s: namespace %+v, want %s", tl.Name, tl.Namespace, tool.NamespaceName(tl.Origin.Server))
		}
		if !listed[tl.Origin] {
			t.Errorf("%s: origin %v is not a catalog tool", tl.Name, tl.Origin)
		}
		if origins[tl.Origin] {
			t.Errorf("origin %v is registered twice", tl.Origin)
		}
		origins[tl.Origin] = true
		if o, ok := namer.Lookup(tl.Name); !ok || o != tl.Origin {
			t.Errorf("namer.Lookup(%q) = %v, %v, want %v", tl.Name, o, ok, tl.Origin)
		}
		if got := namer.Name(tl.Origin.Server, tl.Origin.Tool); got != tl.Name {
			t.Errorf("namer.Name(%v) = %q, want %q", tl.Origin, got, tl.Name)
		}
	}
	if len(origins) != len(listed) {
		t.Errorf("registered %d origins, the catalog lists %d", len(origins), len(listed))
	}

	// A few known tools, including one whose schema had neither "type" nor
	// "properties".
	for name, wantPrefix := range map[string]string{
		"mcp__github__create_pull_request": `{`,
		"mcp__gitlab_ref__create_issue":    `{"type":"object","properties":{},"$schema":`,
		"mcp__memory__create_entities":     `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"entities":`,
	} {
		tl, ok := reg.Get(name)
		if !ok {
			t.Errorf("%s is not registered", name)
			continue
		}
		if !strings.HasPrefix(string(tl.Parameters), wantPrefix) {
			t.Errorf("%s: parameters start %.80s, want %s", name, tl.Parameters, wantPrefix)
		}
	}

	// Loading again into the same registry keeps the names and adds nothing.
	if err := builtin.Load(reg, namer); err != nil {
		t.Fatalf("second Load: %v", err)
	}
	if diff := cmp.Diff(toolNames(tools), toolNames(reg.Tools())); diff != "" {
		t.Errorf("tools after a second Load (-want +got):\n%s", diff)
	}
}

// TestLoadFreshNamer checks that the names do not depend on the Namer's
// history: a second registry with its own Namer gets the same names.
func TestLoadFreshNamer(t *testing.T) {
	var all [][]string
	for range 2 {
		reg := tool.NewRegistry()
		if err := builtin.Load(reg, tool.NewNamer()); err != nil {
			t.Fatal(err)
		}
		all = append(all, toolNames(reg.Tools()))
	}
	if diff := cmp.Diff(all[0], all[1]); diff != "" {
		t.Errorf("names differ between two loads (-first +second):\n%s", diff)
	}
}

// TestChecksums checks the embedded files against SHA256SUMS, which is not
// embedded and is read from the package folder.
func TestChecksums(t *testing.T) {
	f, err := os.Open("mcp/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("malformed SHA256SUMS line %q", line)
		}
		name = strings.TrimPrefix(name, "*")
		if _, dup := want[name]; dup {
			t.Errorf("SHA256SUMS lists %s twice", name)
		}
		want[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}

	fsys := builtin.FS()
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, de := range entries {
		if de.IsDir() || path.Ext(de.Name()) != ".json" {
			t.Errorf("unexpected embedded entry %s", de.Name())
			continue
		}
		data, err := fs.ReadFile(fsys, de.Name())
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		got[de.Name()] = hex.EncodeToString(sum[:])
	}
	if len(got) != wantServers {
		t.Errorf("%d files are embedded, want %d", len(got), wantServers)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checksums, SHA256SUMS (-want) and embedded (+got):\n%s", diff)
	}
}

func toolNames(tools []tool.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
