package catalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/tool"
)

// fuzzSeeds returns catalog files to start from: every built-in server
// with its first three tools as they are written (the whole files are up
// to 800 KB, which would slow every mutation down), and files with each
// kind of problem Parse reports.
func fuzzSeeds(f *testing.F) [][]byte {
	f.Helper()
	fsys := builtin.FS()
	names, err := fs.Glob(fsys, "*.json")
	if err != nil || len(names) == 0 {
		f.Fatalf("no built-in catalog files (%v)", err)
	}
	var seeds [][]byte
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			f.Fatal(err)
		}
		var top map[string]json.RawMessage
		var tools []json.RawMessage
		if err := json.Unmarshal(data, &top); err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		if err := json.Unmarshal(top["tools"], &tools); err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		top["tools"], _ = json.Marshal(tools[:min(3, len(tools))])
		seed, err := json.Marshal(top)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, seed)
	}
	for _, s := range []string{
		``, `[]`, `null`, `{}`, `{"tools":null}`, `{"tools":{}}`, `{"server":5,"tools":[]}`,
		`{"server":"bad name","tools":[]}`, "\xef\xbb\xbf{\"tools\":[]}", `{"tools":[`, "{\n\"tools\": [1,]}",
		`{"server":"s","description":7,"version":1.2,"tools":[null,1,{},{"name":""},{"name":" "},{"name":5}]}`,
		`{"server":"s","tools":[{"name":"a"},{"name":"a"},{"name":"b","inputSchema":[]},{"name":"c","inputSchema":{"type":"string"}}]}`,
		`{"server":"s","tools":[{"name":"a","inputSchema":{},"outputSchema":"x","annotations":[],"title":{},"description":[]}]}`,
		`{"server":"s","tools":[{"name":"a","inputSchema":{ "required" : ["x"] , "type":"object"},"annotations":{"readOnlyHint":false,"title":"<&>"}}]}`,
		`{"server":"s","tools":[{"name":"\u00e9\ud800\u0000<script>","description":"\u2028 \xff","inputSchema":{"properties":{"\u003c":{}}}}]}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// catalogFile is what a catalog file holds, for writing a parsed server
// back.
type catalogFile struct {
	Server       string        `json:"server"`
	Package      string        `json:"package,omitempty"`
	Version      string        `json:"version,omitempty"`
	Title        string        `json:"title,omitempty"`
	Description  string        `json:"description,omitempty"`
	Instructions string        `json:"instructions,omitempty"`
	Tools        []catalogTool `json:"tools"`
}

type catalogTool struct {
	Name         string            `json:"name"`
	Title        string            `json:"title,omitempty"`
	Description  string            `json:"description,omitempty"`
	InputSchema  json.RawMessage   `json:"inputSchema"`
	OutputSchema json.RawMessage   `json:"outputSchema,omitempty"`
	Annotations  *tool.Annotations `json:"annotations,omitempty"`
}

// encodeCatalog writes a server as a catalog file, without HTML escaping
// (so schemas keep their bytes).
func encodeCatalog(t *testing.T, s *catalog.Server) []byte {
	t.Helper()
	out := catalogFile{Server: s.Name, Package: s.Package, Version: s.Version, Title: s.Title,
		Description: s.Description, Instructions: s.Instructions, Tools: []catalogTool{}}
	for _, e := range s.Tools {
		out.Tools = append(out.Tools, catalogTool{Name: e.Name, Title: e.Title, Description: e.Description,
			InputSchema: e.InputSchema, OutputSchema: e.OutputSchema, Annotations: e.Annotations})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		t.Fatalf("encoding the parsed server: %v", err)
	}
	return b.Bytes()
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// FuzzParse parses arbitrary catalog files. Parse must not panic and must
// give the same answer twice. Every problem is a *catalog.Problem naming
// the file and a tool position in range; a file it cannot use at all
// gives no server and one file-level problem, and otherwise each tool of
// the file is kept or skipped with one problem. The server it returns has a
// valid name and uniquely named tools whose input schemas are compact JSON
// objects of type object with properties; and its tools written back as a
// catalog file parse to themselves without problems (the refused ones are
// left out).
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	const file = "fuzz.json"
	errText := cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) })
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := catalog.Parse(file, data)
		s2, err2 := catalog.Parse(file, data)
		if diff := cmp.Diff(s, s2, errText); diff != "" {
			t.Fatalf("two parses differ (-first +second):\n%s", diff)
		}
		if diff := cmp.Diff(err, err2, errText); diff != "" {
			t.Fatalf("two parses report different problems:\n%s", diff)
		}

		problems := catalog.Problems(err)
		for _, p := range problems {
			var pr *catalog.Problem
			if !errors.As(p, &pr) {
				t.Fatalf("problem %q (%T) is not a *catalog.Problem", p, p)
			}
			if pr.File != file || pr.Err == nil {
				t.Fatalf("problem %+v does not name the file and what is wrong", pr)
			}
			if pr.Index < -1 {
				t.Fatalf("problem %q has position %d", p, pr.Index)
			}
		}
		if s == nil {
			var pr *catalog.Problem
			if len(problems) != 1 || !errors.As(problems[0], &pr) || pr.Index != -1 || pr.Ignored {
				t.Fatalf("no server, but the problems are %q", problems)
			}
			return
		}

		// Each tool of the file is either kept or skipped with one problem.
		var top map[string]json.RawMessage
		var tools []json.RawMessage
		if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &top); err != nil {
			t.Fatalf("a server from a file that is not JSON: %v", err)
		}
		if err := json.Unmarshal(top["tools"], &tools); err != nil {
			t.Fatalf("a server from a file without a tools array: %v", err)
		}
		skipped := 0
		for _, p := range problems {
			var pr *catalog.Problem
			if errors.As(p, &pr) && pr.Index >= len(tools) {
				t.Fatalf("problem %q names tool #%d of %d", p, pr.Index+1, len(tools))
			}
			if pr.Index >= 0 && !pr.Ignored {
				skipped++
			}
		}
		if len(s.Tools)+skipped != len(tools) {
			t.Fatalf("%d tools kept and %d skipped of %d", len(s.Tools), skipped, len(tools))
		}

		if !serverName.MatchString(s.Name) || s.File != file {
			t.Fatalf("server name %q, file %q", s.Name, s.File)
		}
		seen := map[string]bool{}
		for _, e := range s.Tools {
			if e.Name == "" || utf8.RuneCountInString(e.Name) > 128 || seen[e.Name] {
				t.Fatalf("tool name %q: empty, too long or repeated", e.Name)
			}
			seen[e.Name] = true
			checkSchema(t, e.Name, "input", e.InputSchema, true)
			if e.OutputSchema != nil {
				checkSchema(t, e.Name, "output", e.OutputSchema, false)
			}
		}

		written := encodeCatalog(t, s)
		again, err := catalog.Parse(file, written)
		if err != nil {
			t.Fatalf("the parsed server written back has problems: %v\n%s", err, written)
		}
		// Refused tools are not written back: the kept ones must read the
		// same, and none is refused.
		kept := *s
		kept.Refused = nil
		if diff := cmp.Diff(&kept, again); diff != "" {
			t.Fatalf("the parsed server written back reads differently (-first +second):\n%s\n%s", diff, written)
		}
	})
}

// checkSchema checks that a parsed schema is a compact JSON object and,
// for an input schema, that it has "type": "object" and "properties".
func checkSchema(t *testing.T, tool, which string, schema json.RawMessage, input bool) {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, schema); err != nil || !bytes.Equal(b.Bytes(), schema) {
		t.Fatalf("tool %q: %s schema %q is not compact JSON (%v)", tool, which, schema, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil || top == nil {
		t.Fatalf("tool %q: %s schema %q is not an object", tool, which, schema)
	}
	if !input {
		return
	}
	if _, ok := top["properties"]; !ok || string(top["type"]) != `"object"` {
		t.Fatalf("tool %q: input schema %s lacks \"type\": \"object\" or \"properties\"", tool, schema)
	}
}
