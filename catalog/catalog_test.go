package catalog_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/tool"
)

// rawAsString shows schemas as text in diffs.
var rawAsString = cmp.Transformer("rawAsString", func(m json.RawMessage) string { return string(m) })

const emptySchema = `{"type":"object","properties":{}}`

// problems returns the *catalog.Problem values joined in err, in order. It
// fails the test if err holds anything else.
func problems(t *testing.T, err error) []*catalog.Problem {
	t.Helper()
	if err == nil {
		return nil
	}
	var out []*catalog.Problem
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		p, ok := e.(*catalog.Problem)
		if !ok {
			t.Errorf("error %q (%T) is not a *catalog.Problem", e, e)
			return
		}
		out = append(out, p)
	}
	walk(err)
	return out
}

// problemSummary is what tests compare of a Problem.
type problemSummary struct {
	File  string
	Index int
	Tool  string
}

func summarize(ps []*catalog.Problem) []problemSummary {
	var out []problemSummary
	for _, p := range ps {
		out = append(out, problemSummary{p.File, p.Index, p.Tool})
	}
	return out
}

func entryNames(s *catalog.Server) []string {
	var out []string
	for _, e := range s.Tools {
		out = append(out, e.Name)
	}
	return out
}

func catalogFS() fstest.MapFS {
	return fstest.MapFS{
		"cat/b.json":        {Data: []byte(`{"server": "beta", "tools": [{"name": "b1"}]}`)},
		"cat/a.json":        {Data: []byte(`{"tools": [{"name": "a1"}, {"name": "a2"}]}`)},
		"cat/c.JSON":        {Data: []byte(`{"tools": [{"name": "c1"}]}`)},
		"cat/d.json":        {Data: []byte(`{"tools": [{"name": "d1"}, {"description": "nameless"}]}`)},
		"cat/e.json":        {Data: []byte(`{"tools": x}`)},
		"cat/notes.txt":     {Data: []byte(`{"tools": []}`)},
		"cat/json":          {Data: []byte(`{"tools": []}`)},
		"cat/sub/f.json":    {Data: []byte(`{"tools": [{"name": "f1"}]}`)},
		"cat/dir.json/g":    {Data: []byte(`{"tools": [{"name": "g1"}]}`)},
		"empty/readme.md":   {Data: []byte(`nothing here`)},
		"empty/sub/x.json":  {Data: []byte(`{"tools": []}`)},
		"single/only.json":  {Data: []byte(`{"tools": [{"name": "o1"}]}`)},
		"single/other.json": {Data: []byte(`{"tools": [{"name": "o2"}]}`)},
	}
}

func serverSummary(ss []*catalog.Server) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name+"@"+s.File+":"+strings.Join(entryNames(s), ","))
	}
	return out
}

func TestReadFS(t *testing.T) {
	tests := []struct {
		name         string
		path         string
		wantServers  []string
		wantProblems []problemSummary
		wantErr      []string // substrings of the error
	}{
		{
			name: "folder",
			path: "cat",
			wantServers: []string{
				"a@cat/a.json:a1,a2",
				"beta@cat/b.json:b1",
				"c@cat/c.JSON:c1",
				"d@cat/d.json:d1",
			},
			wantProblems: []problemSummary{{"cat/d.json", 1, ""}, {"cat/e.json", -1, ""}},
			wantErr:      []string{`catalog cat/d.json: tool #2: missing "name"`, "catalog cat/e.json: invalid JSON: line 1 column 11: "},
		},
		{
			name:        "file",
			path:        "single/only.json",
			wantServers: []string{"only@single/only.json:o1"},
		},
		{
			name:         "bad file",
			path:         "cat/e.json",
			wantProblems: []problemSummary{{"cat/e.json", -1, ""}},
		},
		{
			name:        "file without extension",
			path:        "cat/json",
			wantServers: []string{"json@cat/json:"},
		},
		{
			name:         "folder without catalogs",
			path:         "empty",
			wantProblems: []problemSummary{{"empty", -1, ""}},
			wantErr:      []string{"catalog empty: folder has no *.json catalog files"},
		},
		{
			name:         "missing",
			path:         "nope.json",
			wantProblems: []problemSummary{{"nope.json", -1, ""}},
			wantErr:      []string{"catalog nope.json: cannot read: file does not exist"},
		},
		{
			name: "root",
			path: ".",
			// The root holds only folders.
			wantProblems: []problemSummary{{".", -1, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers, err := catalog.ReadFS(catalogFS(), tt.path)
			checkRead(t, servers, err, tt.wantServers, tt.wantProblems, tt.wantErr)
		})
	}
}

// checkRead compares what ReadFS or ReadPath returned with what a test
// wants: the servers, the problems and parts of the error text.
func checkRead(t *testing.T, servers []*catalog.Server, err error, wantServers []string,
	wantProblems []problemSummary, wantErr []string) {
	t.Helper()
	if diff := cmp.Diff(wantServers, serverSummary(servers)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantProblems, summarize(problems(t, err))); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	for _, want := range wantErr {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not contain %q", err, want)
		}
	}
}

func TestReadFSMissingIsNotExist(t *testing.T) {
	_, err := catalog.ReadFS(catalogFS(), "nope")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFS of a missing file: error %v, want one that wraps fs.ErrNotExist", err)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadPath(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"cat/z.json":      `{"server": "zed", "tools": [{"name": "z1"}]}`,
		"cat/a.json":      `{"tools": [{"name": "a1"}, {"name": 3}]}`,
		"cat/bad.json":    `{"tools": 1}`,
		"cat/sub/s.json":  `{"tools": [{"name": "s1"}]}`,
		"cat/readme.txt":  `hello`,
		"empty/.keep":     ``,
		"single/one.json": `{"tools": [{"name": "x"}]}`,
	})
	cat := filepath.Join(dir, "cat")
	tests := []struct {
		name         string
		path         string
		wantServers  []string
		wantProblems []problemSummary
		wantErr      []string
	}{
		{
			name:        "file",
			path:        filepath.Join(dir, "single", "one.json"),
			wantServers: []string{"one@" + filepath.Join(dir, "single", "one.json") + ":x"},
		},
		{
			name:        "unclean file path",
			path:        dir + "/single/../single/./one.json",
			wantServers: []string{"one@" + filepath.Join(dir, "single", "one.json") + ":x"},
		},
		{
			name: "folder",
			path: cat,
			wantServers: []string{
				"a@" + filepath.Join(cat, "a.json") + ":a1",
				"zed@" + filepath.Join(cat, "z.json") + ":z1",
			},
			wantProblems: []problemSummary{{filepath.Join(cat, "a.json"), 1, ""}, {filepath.Join(cat, "bad.json"), -1, ""}},
			wantErr: []string{
				"catalog " + filepath.Join(cat, "a.json") + `: tool #2: "name" must be a string`,
				"catalog " + filepath.Join(cat, "bad.json") + `: "tools" must be an array`,
			},
		},
		{
			name: "folder with a trailing slash",
			path: cat + string(filepath.Separator),
			wantServers: []string{
				"a@" + filepath.Join(cat, "a.json") + ":a1",
				"zed@" + filepath.Join(cat, "z.json") + ":z1",
			},
			wantProblems: []problemSummary{{filepath.Join(cat, "a.json"), 1, ""}, {filepath.Join(cat, "bad.json"), -1, ""}},
		},
		{
			name:         "empty folder",
			path:         filepath.Join(dir, "empty"),
			wantProblems: []problemSummary{{filepath.Join(dir, "empty"), -1, ""}},
			wantErr:      []string{"catalog " + filepath.Join(dir, "empty") + ": folder has no *.json catalog files"},
		},
		{
			name:         "missing file",
			path:         filepath.Join(dir, "missing.json"),
			wantProblems: []problemSummary{{filepath.Join(dir, "missing.json"), -1, ""}},
			wantErr:      []string{"catalog " + filepath.Join(dir, "missing.json") + ": cannot read: "},
		},
		{
			name:         "missing folder",
			path:         filepath.Join(dir, "nowhere", "x.json"),
			wantProblems: []problemSummary{{filepath.Join(dir, "nowhere", "x.json"), -1, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers, err := catalog.ReadPath(tt.path)
			checkRead(t, servers, err, tt.wantServers, tt.wantProblems, tt.wantErr)
		})
	}
}

func TestReadPathMissingIsNotExist(t *testing.T) {
	_, err := catalog.ReadPath(filepath.Join(t.TempDir(), "missing.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadPath of a missing file: error %v, want one that wraps fs.ErrNotExist", err)
	}
}

// TestReadPathRelative checks that relative paths are reported as given.
func TestReadPathRelative(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"top.json":     `{"tools": [{"name": "t"}]}`,
		"cat/a.json":   `{"tools": [{"name": "a"}]}`,
		"cat/bad.json": `{`,
	})
	t.Chdir(dir)
	tests := []struct {
		path         string
		wantServers  []string
		wantProblems []problemSummary
	}{
		{"top.json", []string{"top@top.json:t"}, nil},
		{"./top.json", []string{"top@top.json:t"}, nil},
		{"cat", []string{"a@" + filepath.Join("cat", "a.json") + ":a"}, []problemSummary{{filepath.Join("cat", "bad.json"), -1, ""}}},
		{"cat/a.json", []string{"a@" + filepath.Join("cat", "a.json") + ":a"}, nil},
		{".", []string{"top@top.json:t"}, nil},
		{"gone.json", nil, []problemSummary{{"gone.json", -1, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			servers, err := catalog.ReadPath(tt.path)
			if diff := cmp.Diff(tt.wantServers, serverSummary(servers)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantProblems, summarize(problems(t, err))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func mustParse(t *testing.T, file, data string) *catalog.Server {
	t.Helper()
	s, err := catalog.Parse(file, []byte(data))
	if err != nil {
		t.Fatalf("Parse(%s): %v", file, err)
	}
	return s
}

func TestAsTools(t *testing.T) {
	yes := true
	s := mustParse(t, "srv.json", `{
		"server": "git-hub",
		"description": "GitHub tools",
		"instructions": "Be nice.",
		"tools": [
			{"name": "create-issue", "title": "Create issue", "description": "  Open an issue.  ",
			 "inputSchema": {"properties": {"title": {"type": "string"}}}, "annotations": {"readOnlyHint": true}},
			{"name": "titled", "title": "Only a title", "description": " \n "},
			{"name": "bare"},
			{"name": "titled-annotation", "annotations": {"title": "Annotated"}}
		]}`)
	namer := tool.NewNamer()
	got := s.AsTools(namer, tool.Codemode)
	ns := &tool.Namespace{Name: "mcp__git_hub", Description: "GitHub tools", Instructions: "Be nice."}
	want := []tool.Tool{
		{
			Name:        "mcp__git_hub__create_issue",
			Title:       "Create issue",
			Description: "Open an issue.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`),
			Exposure:    tool.Codemode,
			Namespace:   ns,
			Annotations: &tool.Annotations{ReadOnly: &yes},
			Origin:      tool.Origin{Server: "git-hub", Tool: "create-issue"},
		},
		{
			Name:        "mcp__git_hub__titled",
			Title:       "Only a title",
			Description: "Only a title",
			Parameters:  json.RawMessage(emptySchema),
			Exposure:    tool.Codemode,
			Namespace:   ns,
			Origin:      tool.Origin{Server: "git-hub", Tool: "titled"},
		},
		{
			Name:        "mcp__git_hub__bare",
			Description: "MCP tool bare from server git-hub",
			Parameters:  json.RawMessage(emptySchema),
			Exposure:    tool.Codemode,
			Namespace:   ns,
			Origin:      tool.Origin{Server: "git-hub", Tool: "bare"},
		},
		{
			Name:        "mcp__git_hub__titled_annotation",
			Description: "MCP tool titled-annotation from server git-hub",
			Parameters:  json.RawMessage(emptySchema),
			Exposure:    tool.Codemode,
			Namespace:   ns,
			Annotations: &tool.Annotations{Title: "Annotated"},
			Origin:      tool.Origin{Server: "git-hub", Tool: "titled-annotation"},
		},
	}
	if diff := cmp.Diff(want, got, rawAsString); diff != "" {
		t.Errorf("AsTools (-want +got):\n%s", diff)
	}
	for _, tl := range got {
		if o, ok := namer.Lookup(tl.Name); !ok || o != tl.Origin {
			t.Errorf("namer.Lookup(%q) = %v, %v, want %v", tl.Name, o, ok, tl.Origin)
		}
	}
}

func TestRegister(t *testing.T) {
	first := mustParse(t, "a/files.json", `{"server": "files", "description": "Files.", "instructions": "Paths are absolute.",
		"tools": [{"name": "read-file", "description": "Read."}, {"name": "read_file", "title": "Read too"}, {"name": "stat"}]}`)
	second := mustParse(t, "b/files.json", `{"server": "files", "tools": [{"name": "other"}]}`)
	third := mustParse(t, "b/memory.json", `{"tools": [{"name": "remember", "description": "Remember."}]}`)

	reg := tool.NewRegistry()
	namer := tool.NewNamer()
	err := catalog.Register(reg, namer, "", first, second, third)

	ps := problems(t, err)
	if diff := cmp.Diff([]problemSummary{{"b/files.json", -1, ""}}, summarize(ps)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	wantErr := `catalog b/files.json: server "files" is already loaded from a/files.json; the second copy was skipped`
	if err == nil || err.Error() != wantErr {
		t.Errorf("error = %v, want %s", err, wantErr)
	}

	if active := reg.ActiveNames(); len(active) != 0 {
		t.Errorf("ActiveNames() = %v, want none: catalog tools are deferred", active)
	}
	filesNS := &tool.Namespace{Name: "mcp__files", Description: "Files.", Instructions: "Paths are absolute."}
	memoryNS := &tool.Namespace{Name: "mcp__memory"}
	schema := json.RawMessage(emptySchema)
	want := []tool.Tool{
		{Name: namer.Name("files", "read-file"), Description: "Read.", Parameters: schema, Exposure: tool.Deferred,
			Namespace: filesNS, Origin: tool.Origin{Server: "files", Tool: "read-file"}},
		{Name: namer.Name("files", "read_file"), Title: "Read too", Description: "Read too", Parameters: schema, Exposure: tool.Deferred,
			Namespace: filesNS, Origin: tool.Origin{Server: "files", Tool: "read_file"}},
		{Name: "mcp__files__stat", Description: "MCP tool stat from server files", Parameters: schema, Exposure: tool.Deferred,
			Namespace: filesNS, Origin: tool.Origin{Server: "files", Tool: "stat"}},
		{Name: "mcp__memory__remember", Description: "Remember.", Parameters: schema, Exposure: tool.Deferred,
			Namespace: memoryNS, Origin: tool.Origin{Server: "memory", Tool: "remember"}},
	}
	if diff := cmp.Diff(want, reg.Tools(), rawAsString); diff != "" {
		t.Errorf("registered tools (-want +got):\n%s", diff)
	}
	for _, n := range []string{want[0].Name, want[1].Name} {
		if !strings.HasPrefix(n, "mcp__files__read_file_") || len(n) != len("mcp__files__read_file_")+8 {
			t.Errorf("colliding tool named %q, want mcp__files__read_file_ and 8 hex digits", n)
		}
	}
	for _, tl := range reg.Tools() {
		if tl.Handler != nil {
			t.Errorf("%s has a handler; catalog tools have none", tl.Name)
		}
		if tl.Namespace.Name != tool.NamespaceName(tl.Origin.Server) {
			t.Errorf("%s: namespace %q, want NamespaceName(%q)", tl.Name, tl.Namespace.Name, tl.Origin.Server)
		}
	}

	// Registering the same servers again replaces the tools in place under
	// the same names; only the duplicate is reported.
	v := reg.Version()
	err = catalog.Register(reg, namer, tool.Deferred, first, third)
	if err != nil {
		t.Errorf("second Register: %v", err)
	}
	if diff := cmp.Diff(want, reg.Tools(), rawAsString); diff != "" {
		t.Errorf("tools after registering again (-want +got):\n%s", diff)
	}
	if reg.Version() != v+2 {
		t.Errorf("Version() = %d, want %d (one change per server)", reg.Version(), v+2)
	}
}

func TestRegisterExposure(t *testing.T) {
	s := mustParse(t, "s.json", `{"tools": [{"name": "a"}, {"name": "b"}]}`)
	tests := []struct {
		exposure   tool.Exposure
		want       tool.Exposure
		wantActive []string
	}{
		{"", tool.Deferred, nil},
		{tool.Deferred, tool.Deferred, nil},
		{tool.Codemode, tool.Codemode, nil},
		{tool.Hidden, tool.Hidden, nil},
		{tool.Direct, tool.Direct, []string{"mcp__s__a", "mcp__s__b"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.exposure), func(t *testing.T) {
			reg := tool.NewRegistry()
			if err := catalog.Register(reg, tool.NewNamer(), tt.exposure, s); err != nil {
				t.Fatal(err)
			}
			for _, tl := range reg.Tools() {
				if tl.Exposure != tt.want {
					t.Errorf("%s: exposure %q, want %q", tl.Name, tl.Exposure, tt.want)
				}
			}
			if diff := cmp.Diff(tt.wantActive, reg.ActiveNames()); diff != "" {
				t.Errorf("ActiveNames() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRegisterInvalidTool checks that a tool the registry rejects (here, a
// hand-built entry with an array schema) is reported with its file while the
// server's other tools register.
func TestRegisterInvalidTool(t *testing.T) {
	s := &catalog.Server{Name: "s", File: "hand.json", Tools: []catalog.ListedTool{
		{Name: "good", InputSchema: json.RawMessage(emptySchema)},
		{Name: "bad", InputSchema: json.RawMessage(`[1]`)},
	}}
	reg := tool.NewRegistry()
	err := catalog.Register(reg, tool.NewNamer(), "", s)
	if !errors.Is(err, tool.ErrInvalid) {
		t.Errorf("error %v does not wrap tool.ErrInvalid", err)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "catalog hand.json: ") || !strings.Contains(err.Error(), "mcp__s__bad") {
		t.Errorf("error %v does not name the file and the tool", err)
	}
	if diff := cmp.Diff([]string{"mcp__s__good"}, toolNames(reg.Tools())); diff != "" {
		t.Errorf("registered (-want +got):\n%s", diff)
	}
}

// TestRegisterCollidingServers checks that servers whose names sanitise
// alike keep distinct tool names.
func TestRegisterCollidingServers(t *testing.T) {
	dash := mustParse(t, "a.json", `{"server": "my-srv", "tools": [{"name": "go"}]}`)
	under := mustParse(t, "b.json", `{"server": "my_srv", "tools": [{"name": "go"}]}`)
	reg := tool.NewRegistry()
	namer := tool.NewNamer()
	if err := catalog.Register(reg, namer, "", dash, under); err != nil {
		t.Fatal(err)
	}
	tools := reg.Tools()
	if len(tools) != 2 {
		t.Fatalf("registered %v, want two tools", toolNames(tools))
	}
	if tools[0].Name != "mcp__my_srv__go" || tools[1].Name == tools[0].Name {
		t.Errorf("names %v: want mcp__my_srv__go for the first server and a suffixed name for the second", toolNames(tools))
	}
	for _, tl := range tools {
		if o, ok := namer.Lookup(tl.Name); !ok || o != tl.Origin {
			t.Errorf("Lookup(%q) = %v, %v, want %v", tl.Name, o, ok, tl.Origin)
		}
	}
}

func toolNames(tools []tool.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
