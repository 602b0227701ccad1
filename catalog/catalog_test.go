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

func TestParse(t *testing.T) {
	data := `{
  "server": "files",
  "package": "@example/files-mcp",
  "version": "1.2.3",
  "registry": "npm",
  "title": "Files",
  "description": "  Read and write files.\n",
  "instructions": "Use absolute paths.",
  "capabilities": {"tools": {}},
  "tools": [
    {
      "name": "read_file",
      "title": "Read File",
      "description": "Read a file.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "path": {"type": "string", "description": "The  path"},
          "encoding": {"type": "string", "enum": ["utf-8", "base64"]}
        },
        "required": ["path"],
        "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#"
      },
      "outputSchema": {
        "type": "object",
        "properties": { "content": { "type": "string" } }
      },
      "annotations": {"title": "Read", "readOnlyHint": true, "destructiveHint": false, "openWorldHint": false}
    },
    {
      "name": "write_file",
      "description": "Write a file.",
      "inputSchema": {"type": "object", "properties": {}},
      "annotations": null,
      "outputSchema": null,
      "_meta": {"ignored": true}
    },
    {"name": "ping", "title": null, "description": null}
  ]
}`
	got, err := catalog.Parse("testdata/files.json", []byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	yes, no := true, false
	want := &catalog.Server{
		Name:         "files",
		File:         "testdata/files.json",
		Package:      "@example/files-mcp",
		Version:      "1.2.3",
		Title:        "Files",
		Description:  "Read and write files.",
		Instructions: "Use absolute paths.",
		Tools: []catalog.Entry{
			{
				Name:        "read_file",
				Title:       "Read File",
				Description: "Read a file.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"The  path"},` +
					`"encoding":{"type":"string","enum":["utf-8","base64"]}},"required":["path"],"additionalProperties":false,` +
					`"$schema":"http://json-schema.org/draft-07/schema#"}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}}}`),
				Annotations:  &tool.Annotations{Title: "Read", ReadOnly: &yes, Destructive: &no, OpenWorld: &no},
			},
			{
				Name:        "write_file",
				Description: "Write a file.",
				InputSchema: json.RawMessage(emptySchema),
			},
			{
				Name:        "ping",
				InputSchema: json.RawMessage(emptySchema),
			},
		},
	}
	if diff := cmp.Diff(want, got, rawAsString); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestParseServerName(t *testing.T) {
	tests := []struct {
		name string
		file string
		data string
		want string
	}{
		{"from the file", "catalogs/my-server.json", `{"tools": []}`, "my-server"},
		{"from a nested file", "a/b.c/gitlab_ref.json", `{"tools": []}`, "gitlab_ref"},
		{"file without extension", "dir/weird", `{"tools": []}`, "weird"},
		{"other extension", "x/srv.catalog", `{"tools": []}`, "srv"},
		{"empty server", "x/fallback.json", `{"server": "", "tools": []}`, "fallback"},
		{"null server", "x/fallback.json", `{"server": null, "tools": []}`, "fallback"},
		{"server wins", "x/file.json", `{"server": "github", "tools": []}`, "github"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := catalog.Parse(tt.file, []byte(tt.data))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if s.Name != tt.want {
				t.Errorf("Name = %q, want %q", s.Name, tt.want)
			}
			if s.File != tt.file {
				t.Errorf("File = %q, want %q", s.File, tt.file)
			}
			if len(s.Tools) != 0 {
				t.Errorf("Tools = %v, want none", entryNames(s))
			}
		})
	}
}

func TestParseInputSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string // the inputSchema member, "" for none
		want   string
	}{
		{"missing", "", emptySchema},
		{"null", `null`, emptySchema},
		{"empty object", `{}`, emptySchema},
		{"blank object", "{ \n }", emptySchema},
		{"complete", `{"type":"object","properties":{"b":{},"a":{}}}`, `{"type":"object","properties":{"b":{},"a":{}}}`},
		{"properties first", `{"properties":{"a":{}},"type":"object"}`, `{"properties":{"a":{}},"type":"object"}`},
		{"no type", `{"properties": {"a": {"type": "string"}}, "required": ["a"]}`, `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`},
		{"no properties", `{"required": [], "type": "object"}`, `{"properties":{},"required":[],"type":"object"}`},
		{"neither", `{"$schema": "x", "z": 1, "a": 2}`, `{"type":"object","properties":{},"$schema":"x","z":1,"a":2}`},
		{"only $schema", `{"$schema":"http://json-schema.org/draft-07/schema#"}`, `{"type":"object","properties":{},"$schema":"http://json-schema.org/draft-07/schema#"}`},
		{"escapes kept", `{"description":"\u00e9 <b> \"q\""}`, `{"type":"object","properties":{},"description":"\u00e9 <b> \"q\""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			member := ""
			if tt.schema != "" {
				member = `, "inputSchema": ` + tt.schema
			}
			s, err := catalog.Parse("s.json", []byte(`{"tools": [{"name": "t"`+member+`}]}`))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(s.Tools) != 1 {
				t.Fatalf("Parse returned %d tools, want 1", len(s.Tools))
			}
			if got := string(s.Tools[0].InputSchema); got != tt.want {
				t.Errorf("InputSchema = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseToolProblems(t *testing.T) {
	long := strings.Repeat("n", 129)
	tests := []struct {
		name     string
		tool     string // the bad tool, placed second
		wantTool string // Problem.Tool
		wantErr  string // the whole Error() text
	}{
		{"missing name", `{"description": "x"}`, "",
			`catalog f.json: tool #2: missing "name"; the tool was skipped`},
		{"null name", `{"name": null}`, "",
			`catalog f.json: tool #2: missing "name"; the tool was skipped`},
		{"name not a string", `{"name": 5}`, "",
			`catalog f.json: tool #2: "name" must be a string; the tool was skipped`},
		{"blank name", `{"name": "  "}`, "  ",
			`catalog f.json: tool #2 "  ": empty "name"; the tool was skipped`},
		{"name too long", `{"name": "` + long + `"}`, long,
			`catalog f.json: tool #2 "` + long + `": name is 129 characters long; MCP allows 128; the tool was skipped`},
		{"inputSchema an array", `{"name": "bad", "inputSchema": []}`, "bad",
			`catalog f.json: tool #2 "bad": "inputSchema" must be a JSON Schema object; the tool was skipped`},
		{"inputSchema a string", `{"name": "bad", "inputSchema": "object"}`, "bad",
			`catalog f.json: tool #2 "bad": "inputSchema" must be a JSON Schema object; the tool was skipped`},
		{"inputSchema of type string", `{"name": "bad", "inputSchema": {"type": "string"}}`, "bad",
			`catalog f.json: tool #2 "bad": "inputSchema" must have "type": "object", not "string"; the tool was skipped`},
		{"inputSchema of type list", `{"name": "bad", "inputSchema": {"type": ["object", "null"]}}`, "bad",
			`catalog f.json: tool #2 "bad": "inputSchema" must have "type": "object", not ["object","null"]; the tool was skipped`},
		{"duplicate name", `{"name": "first", "description": "again"}`, "first",
			`catalog f.json: tool #2 "first": duplicate tool name: a server lists each name once; the tool was skipped`},
		{"tool a number", `5`, "",
			`catalog f.json: tool #2: not a JSON object; the tool was skipped`},
		{"tool a string", `"read_file"`, "",
			`catalog f.json: tool #2: not a JSON object; the tool was skipped`},
		{"tool null", `null`, "",
			`catalog f.json: tool #2: not a JSON object; the tool was skipped`},
		{"tool an array", `[{"name": "x"}]`, "",
			`catalog f.json: tool #2: not a JSON object; the tool was skipped`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"server": "s", "tools": [{"name": "first"}, ` + tt.tool + `, {"name": "third"}]}`
			s, err := catalog.Parse("f.json", []byte(data))
			if s == nil {
				t.Fatalf("Parse returned no server: %v", err)
			}
			if diff := cmp.Diff([]string{"first", "third"}, entryNames(s)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			ps := problems(t, err)
			if diff := cmp.Diff([]problemSummary{{"f.json", 1, tt.wantTool}}, summarize(ps)); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			if tt.wantErr != "" && ps[0].Error() != tt.wantErr {
				t.Errorf("Error() = %s\nwant      %s", ps[0].Error(), tt.wantErr)
			}
			for _, part := range []string{"f.json", "#2", tt.wantTool, "skipped"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
			if !errors.Is(err, ps[0].Err) {
				t.Errorf("errors.Is(err, Problem.Err) = false; Problem should unwrap to its Err")
			}
		})
	}
}

func TestParseSeveralProblems(t *testing.T) {
	data := `{"tools": [
		{"name": "a"},
		{"name": "b", "description": 1},
		{"name": "a"},
		7,
		{"name": "c"},
		{"name": "b"}
	]}`
	s, err := catalog.Parse("dir/srv.json", []byte(data))
	if s == nil {
		t.Fatalf("Parse returned no server: %v", err)
	}
	// b loads without its malformed description, so the second b is a
	// duplicate.
	if diff := cmp.Diff([]string{"a", "b", "c"}, entryNames(s)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	want := []problemSummary{{"dir/srv.json", 1, "b"}, {"dir/srv.json", 2, "a"}, {"dir/srv.json", 3, ""},
		{"dir/srv.json", 5, "b"}}
	if diff := cmp.Diff(want, summarize(problems(t, err))); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestParseFileProblems(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string // the whole Error() text
	}{
		{"empty", ``, `catalog f.json: not a catalog: expected a JSON object {"server": ..., "tools": [...]}`},
		{"blank", " \n\t", `catalog f.json: not a catalog: expected a JSON object {"server": ..., "tools": [...]}`},
		{"array", `[{"name": "x"}]`, `catalog f.json: not a catalog: expected a JSON object {"server": ..., "tools": [...]}`},
		{"string", `"tools"`, `catalog f.json: not a catalog: expected a JSON object {"server": ..., "tools": [...]}`},
		{"null", `null`, `catalog f.json: not a catalog: expected a JSON object {"server": ..., "tools": [...]}`},
		{"invalid JSON on line 1", `{"tools" []}`,
			`catalog f.json: invalid JSON: line 1 column 10: invalid character '[' after object key`},
		{"invalid JSON on line 3", "{\n  \"tools\": [\n    {\"name\": x}\n  ]\n}",
			`catalog f.json: invalid JSON: line 3 column 14: invalid character 'x' looking for beginning of value`},
		{"trailing comma", "{\n\"tools\": [],\n}",
			`catalog f.json: invalid JSON: line 3 column 1: invalid character '}' looking for beginning of object key string`},
		{"newline in a string", "{\"a\nb\": 1}",
			`catalog f.json: invalid JSON: line 1 column 4: invalid character '\n' in string literal`},
		{"truncated", "{\n  \"tools\": [\n",
			`catalog f.json: invalid JSON: line 2 column 13: unexpected end of JSON input`},
		{"trailing garbage", `{"tools": []} x`,
			`catalog f.json: invalid JSON: line 1 column 15: invalid character 'x' after top-level value`},
		{"no tools", `{"server": "s"}`,
			`catalog f.json: no "tools" array: a catalog is {"server": "name", "tools": [...]} as returned by tools/list`},
		{"null tools", `{"server": "s", "tools": null}`,
			`catalog f.json: no "tools" array: a catalog is {"server": "name", "tools": [...]} as returned by tools/list`},
		{"tools an object", `{"server": "s", "tools": {"name": "x"}}`, `catalog f.json: "tools" must be an array of tool objects`},
		{"tools a string", `{"server": "s", "tools": "x"}`, `catalog f.json: "tools" must be an array of tool objects`},
		{"server not a string", `{"server": 5, "tools": []}`, `catalog f.json: "server" must be a string`},
		{"bad server name", `{"server": "my server", "tools": []}`,
			`catalog f.json: server name "my server": use letters, digits, _ and - only (set "server" in the file)`},
		{"server name with a slash", `{"server": "a/b", "tools": [{"name": "x"}]}`,
			`catalog f.json: server name "a/b": use letters, digits, _ and - only (set "server" in the file)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := catalog.Parse("f.json", []byte(tt.data))
			if s != nil {
				t.Errorf("Parse returned server %+v, want nil", s)
			}
			ps := problems(t, err)
			if diff := cmp.Diff([]problemSummary{{"f.json", -1, ""}}, summarize(ps)); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			if got := err.Error(); got != tt.wantErr {
				t.Errorf("Error() = %s\nwant      %s", got, tt.wantErr)
			}
		})
	}
}

// TestParseServerNameFromBadFileName checks that a file name that is not a
// usable server name is a whole-file problem.
func TestParseServerNameFromBadFileName(t *testing.T) {
	s, err := catalog.Parse("dir/my.tools.json", []byte(`{"tools": [{"name": "x"}]}`))
	if s != nil {
		t.Errorf("Parse returned server %q, want nil", s.Name)
	}
	want := `catalog dir/my.tools.json: server name "my.tools": use letters, digits, _ and - only (set "server" in the file)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
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
			if diff := cmp.Diff(tt.wantServers, serverSummary(servers)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantProblems, summarize(problems(t, err))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			for _, want := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v does not contain %q", err, want)
				}
			}
		})
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
			if diff := cmp.Diff(tt.wantServers, serverSummary(servers)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantProblems, summarize(problems(t, err))); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			for _, want := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v does not contain %q", err, want)
				}
			}
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
	s := &catalog.Server{Name: "s", File: "hand.json", Tools: []catalog.Entry{
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

// TestParseIgnoresMalformedOptionalValues checks that a malformed optional
// value is left out with a problem, and the tool or file still loads.
func TestParseIgnoresMalformedOptionalValues(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		wantErr string
	}{
		{"description not a string", `{"name": "bad", "description": 5}`,
			`catalog f.json: tool #2 "bad": "description" must be a string; the value was ignored`},
		{"description an object", `{"name": "bad", "description": {"en": "x"}}`,
			`catalog f.json: tool #2 "bad": "description" must be a string; the value was ignored`},
		{"title not a string", `{"name": "bad", "title": ["x"]}`,
			`catalog f.json: tool #2 "bad": "title" must be a string; the value was ignored`},
		{"outputSchema an array", `{"name": "bad", "outputSchema": [1]}`,
			`catalog f.json: tool #2 "bad": "outputSchema" must be a JSON Schema object; the value was ignored`},
		{"annotations of the wrong type", `{"name": "bad", "annotations": {"readOnlyHint": "yes"}}`,
			`catalog f.json: tool #2 "bad": "annotations" must be an object with boolean readOnlyHint, destructiveHint, idempotentHint, openWorldHint and a string title; the value was ignored`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"server": "s", "tools": [{"name": "first"}, ` + tt.tool + `, {"name": "third"}]}`
			s, err := catalog.Parse("f.json", []byte(data))
			if s == nil {
				t.Fatalf("Parse returned no server: %v", err)
			}
			if diff := cmp.Diff([]string{"first", "bad", "third"}, entryNames(s)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			ps := problems(t, err)
			if len(ps) != 1 || !ps[0].Ignored || ps[0].Error() != tt.wantErr {
				t.Errorf("problems %v, want one ignored value: %s", ps, tt.wantErr)
			}
		})
	}
	s, err := catalog.Parse("f.json", []byte(`{"server": "s", "version": 1.2, "instructions": ["x"], "tools": [{"name": "t"}]}`))
	if s == nil || s.Version != "" || s.Instructions != "" || len(s.Tools) != 1 {
		t.Fatalf("server %+v (%v), want it loaded without version and instructions", s, err)
	}
	want := `catalog f.json: "version" must be a string; the value was ignored` + "\n" +
		`catalog f.json: "instructions" must be a string; the value was ignored`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestParseCountsNameLengthInCharacters(t *testing.T) {
	name := strings.Repeat("é", 100) // 200 bytes, 100 characters
	s, err := catalog.Parse("f.json", []byte(`{"server": "s", "tools": [{"name": "`+name+`"}]}`))
	if err != nil || len(s.Tools) != 1 {
		t.Errorf("a 100-character name was rejected: %v", err)
	}
}
