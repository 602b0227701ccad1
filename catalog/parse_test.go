package catalog_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/tool"
)

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
		Tools: []catalog.ListedTool{
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
	if diff := cmp.Diff(want, got, rawAsString, errorsAsText); diff != "" {
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

// errorsAsText compares errors by their messages.
var errorsAsText = cmp.Transformer("errorsAsText", func(err error) string { return fmt.Sprint(err) })

// TestParseListIsParseOfTheFile: ParseList gives the server and the
// problems Parse gives for the catalog file made of the same fields and
// tools: valid tools, ignored values, skipped and refused tools, a
// duplicate name, a file-named server, and a bad server name.
func TestParseListIsParseOfTheFile(t *testing.T) {
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"a","description":"A tool.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}`),
		json.RawMessage(`{"name":"b","title":7,"inputSchema":{"properties":{}},"annotations":{"readOnlyHint":true}}`),
		json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"description":"no name"}`),
		json.RawMessage(`{"name":"c","inputSchema":{"type":"string"}}`),
		json.RawMessage(`{"name":"d","inputSchema":{"type":"object","properties":{"p":{"type":"string","pattern":"(?<x"}}}}`),
		json.RawMessage(`{"name":"e","outputSchema":[1],"annotations":"no"}`),
		json.RawMessage(`[1]`),
	}
	// As json.Marshal writes them (compact, <, > and & escaped), as a
	// tools/list answer's tools are encoded; the file holds the same.
	for i, rt := range tools {
		b, err := json.Marshal(rt)
		if err != nil {
			t.Fatal(err)
		}
		tools[i] = b
	}
	type doc struct {
		Server       string            `json:"server"`
		Description  string            `json:"description,omitempty"`
		Instructions string            `json:"instructions,omitempty"`
		Tools        []json.RawMessage `json:"tools"`
	}
	for _, c := range []struct{ file, server, desc, instr string }{
		{"notes", "notes", " Notes. ", "Use them.\n"},
		{"dir/files.json", "", "", ""},
		{"bad", "bad name", "", ""},
	} {
		data, err := json.Marshal(doc{c.server, c.desc, c.instr, tools})
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := catalog.Parse(c.file, data)
		got, gotErr := catalog.ParseList(c.file, c.server, c.desc, c.instr, tools)
		if diff := cmp.Diff(want, got, rawAsString, errorsAsText); diff != "" {
			t.Errorf("%s: ParseList's server differs from Parse's (-Parse +ParseList):\n%s", c.file, diff)
		}
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Errorf("%s: ParseList's problems\n%v\nParse's\n%v", c.file, gotErr, wantErr)
		}
		if c.server == "notes" && (got == nil || len(got.Tools) != 3 || len(got.Refused) != 1 || gotErr == nil) {
			t.Errorf("%s: the cases did not happen: %+v, %v", c.file, got, gotErr)
		}
	}
}
