package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"

	"github.com/toolshelf/toolshelf/internal/jsonscan"
	"github.com/toolshelf/toolshelf/tool"
)

// Server is one catalog file: a server and the tools it lists.
type Server struct {
	// Name is the server's short name, such as github.
	Name string
	// File is where the server was read from, for messages.
	File string
	// Package and Version say which release the tools were listed from.
	Package, Version string
	// Title, Description and Instructions describe the server.
	Title, Description, Instructions string
	// Tools are the server's valid tools, in file order.
	Tools []ListedTool
	// Refused are the tools that parsed but that [tool.CheckDefinition]
	// refuses (a schema a provider would reject, a definition past a size
	// cap), in file order; they are not registered. Parse also reports
	// each as a [*Problem].
	Refused []Refused
}

// Refused is a tool that [tool.CheckDefinition] refuses.
type Refused struct {
	// ListedTool is the tool as the file lists it.
	ListedTool
	// Index is the tool's position in the file's tools array.
	Index int
	// Err says why the tool is refused; it wraps [tool.ErrSchema] or
	// [tool.ErrTooLarge].
	Err error
}

// ListedTool is one tool as its server lists it: one of the tools of its
// tools/list answer, or of a catalog file's tools array.
type ListedTool struct {
	// Name is the tool's name on its server.
	Name string
	// Title is the tool's optional display name.
	Title string
	// Description is what the server says the tool does.
	Description string
	// InputSchema is the tool's argument schema, compacted with its key
	// order kept; an object schema without properties when the server
	// sent none.
	InputSchema json.RawMessage
	// OutputSchema is the schema of structured results, if any.
	OutputSchema json.RawMessage
	// Annotations are the tool's MCP behaviour hints, if any.
	Annotations *tool.Annotations
}

// Problem reports what is wrong with a catalog file or one of its tools.
type Problem struct {
	// File is the catalog file.
	File string
	// Index is the position of the tool in the file's tools array, or -1
	// for a problem with the whole file.
	Index int
	// Tool is the tool's name, when it has one.
	Tool string
	// Err says what is wrong.
	Err error
	// Ignored reports that only the faulty value was left out: the file
	// or tool still loaded.
	Ignored bool
}

// Error names the file, the tool (by position and name), the problem and
// what was left out.
func (p *Problem) Error() string {
	var where string
	switch {
	case p.Index < 0:
	case p.Tool == "":
		where = fmt.Sprintf(" tool #%d:", p.Index+1)
	default:
		where = fmt.Sprintf(" tool #%d %q:", p.Index+1, p.Tool)
	}
	var consequence string
	switch {
	case p.Ignored:
		consequence = "; the value was ignored"
	case p.Index >= 0:
		consequence = "; the tool was skipped"
	}
	return fmt.Sprintf("catalog %s:%s %v%s", p.File, where, p.Err, consequence)
}

// Unwrap returns the underlying problem.
func (p *Problem) Unwrap() error { return p.Err }

var serverNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// maxToolNameLength is the MCP limit on tool names.
const maxToolNameLength = 128

// Parse decodes one catalog file. file names it in messages and, for a plain
// {"tools": [...]} file, gives the server its name (the base name without
// extension).
//
// A file that cannot be used at all yields a nil server and a [*Problem].
// Otherwise Parse returns the server with every valid tool, and the problems
// with the other tools joined into the error: one bad tool does not drop the
// rest. A tool is valid when it has a name and an object input schema and
// passes [tool.CheckDefinition], the providers' check; a tool that fails
// only that check is also listed in Server.Refused.
func Parse(file string, data []byte) (*Server, error) {
	fileErr := func(format string, args ...any) (*Server, error) {
		return nil, &Problem{File: file, Index: -1, Err: fmt.Errorf(format, args...)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fileErr(`not a catalog: expected a JSON object {"server": ..., "tools": [...]}`)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fileErr("invalid JSON: %s", DescribeJSONError(data, err))
	}
	str := func(key string) (string, error) { return stringField(top, key) }
	s := &Server{File: file}
	var problems []error
	name, err := str("server")
	if err != nil {
		return fileErr("%v", err)
	}
	s.Name = name
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"package", &s.Package}, {"version", &s.Version}, {"title", &s.Title},
		{"description", &s.Description}, {"instructions", &s.Instructions},
	} {
		v, err := str(f.key)
		if err != nil {
			problems = append(problems, &Problem{File: file, Index: -1, Err: err, Ignored: true})
		}
		*f.dst = v
	}
	s.Description = strings.TrimSpace(s.Description)
	var tools []json.RawMessage
	if v, ok := top["tools"]; !ok || string(v) == "null" {
		return fileErr(`no "tools" array: a catalog is {"server": "name", "tools": [...]} as returned by tools/list`)
	} else if err := json.Unmarshal(v, &tools); err != nil {
		return fileErr(`"tools" must be an array of tool objects`)
	}
	return parseTools(s, len(tools), func(i int) (ListedTool, []error, error) { return parseListedTool(tools[i]) }, problems)
}

// ParseList is [Parse] of the catalog file {"server": server,
// "description": description, "instructions": instructions, "tools":
// tools} made of a tools/list answer, without encoding the file and
// decoding it again: each of tools is one tool object as json.Marshal
// writes it (compact, with <, > and & escaped, as the file would hold
// it). file names the catalog in messages, and the server when server is
// empty.
func ParseList(file, server, description, instructions string, tools []json.RawMessage) (*Server, error) {
	s := &Server{File: file, Name: server, Description: strings.TrimSpace(description), Instructions: instructions}
	return parseTools(s, len(tools), func(i int) (ListedTool, []error, error) { return parseListedTool(tools[i]) }, nil)
}

// ParseListed is [ParseList] of tools decoded already, as an MCP client
// library hands them over: it checks and completes them as ParseList does
// the tool objects they encode to. An empty name reads as an empty
// "name" (the encoding always has one). Invalid UTF-8 in the strings
// becomes U+FFFD, one per byte, as encoding them and decoding the
// encoding would make it. The schemas must be JSON, as a tools/list
// answer's are; a malformed one is a problem, as in ParseList. The tools
// are not changed; their annotations are copied.
func ParseListed(file, server, description, instructions string, tools []ListedTool) (*Server, error) {
	s := &Server{File: file, Name: server, Description: strings.TrimSpace(description), Instructions: instructions}
	return parseTools(s, len(tools), func(i int) (ListedTool, []error, error) { return checkListedTool(tools[i]) }, nil)
}

// checkListedTool is parseListedTool for a decoded tool.
func checkListedTool(t ListedTool) (e ListedTool, ignored []error, err error) {
	e.Name = validUTF8(t.Name)
	if err := checkName(e.Name); err != nil {
		return e, nil, err
	}
	if e.InputSchema, err = inputSchema(t.InputSchema); err != nil {
		return e, nil, err
	}
	e.Title, e.Description = validUTF8(t.Title), validUTF8(t.Description)
	if e.OutputSchema, err = schema(t.OutputSchema, "outputSchema"); err != nil {
		ignored = append(ignored, err)
	}
	if a := t.Annotations; a != nil {
		c := tool.Annotations{Title: validUTF8(a.Title)}
		for _, f := range []struct{ dst, src **bool }{
			{&c.ReadOnly, &a.ReadOnly}, {&c.Destructive, &a.Destructive},
			{&c.Idempotent, &a.Idempotent}, {&c.OpenWorld, &a.OpenWorld},
		} {
			if *f.src != nil {
				v := **f.src
				*f.dst = &v
			}
		}
		e.Annotations = &c
	}
	return e, ignored, nil
}

// validUTF8 returns s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json writes and reads strings.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r) // range yields utf8.RuneError for each invalid byte
	}
	return b.String()
}

// checkName checks a tool's name.
func checkName(name string) error {
	switch n := utf8.RuneCountInString(name); {
	case strings.TrimSpace(name) == "":
		return errors.New(`empty "name"`)
	case n > maxToolNameLength:
		return fmt.Errorf("name is %d characters long; MCP allows %d", n, maxToolNameLength)
	}
	return nil
}

// inputSchema checks and completes an input schema: compacted, an object
// schema (withObjectDefaults), the empty one when v is absent or null.
func inputSchema(v json.RawMessage) (json.RawMessage, error) {
	s, scanned, err := compactSchema(v, "inputSchema")
	if err != nil {
		return nil, err
	}
	if s == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	return objectDefaults(s, scanned)
}

// parseTools names s when it has no name, checks the name, and adds its n
// tools to s: Parse's work once the file's fields are read. at returns
// tool i as parseListedTool does. problems holds those of the fields.
func parseTools(s *Server, n int, at func(i int) (ListedTool, []error, error), problems []error) (*Server, error) {
	file := s.File
	fileErr := func(format string, args ...any) (*Server, error) {
		return nil, &Problem{File: file, Index: -1, Err: fmt.Errorf(format, args...)}
	}
	if s.Name == "" {
		base := path.Base(filepath.ToSlash(file))
		s.Name = strings.TrimSuffix(base, path.Ext(base))
	}
	if !serverNamePattern.MatchString(s.Name) {
		return fileErr("server name %q: use letters, digits, _ and - only (set \"server\" in the file)", s.Name)
	}
	seen := make(map[string]bool, n)
	for i := range n {
		e, ignored, err := at(i)
		if err == nil && seen[e.Name] {
			err = errors.New("duplicate tool name: a server lists each name once")
		}
		for _, w := range ignored {
			problems = append(problems, &Problem{File: file, Index: i, Tool: e.Name, Err: w, Ignored: true})
		}
		if err != nil {
			problems = append(problems, &Problem{File: file, Index: i, Tool: e.Name, Err: err})
			continue
		}
		seen[e.Name] = true
		if err := tool.CheckDefinition(e.Description, e.InputSchema); err != nil {
			problems = append(problems, &Problem{File: file, Index: i, Tool: e.Name, Err: err})
			s.Refused = append(s.Refused, Refused{ListedTool: e, Index: i, Err: err})
			continue
		}
		s.Tools = append(s.Tools, e)
	}
	return s, errors.Join(problems...)
}

// parseListedTool decodes one tool object. It returns an error when the
// tool cannot be used (no name, an unusable input schema) and, in ignored,
// the optional values it left out because they were malformed. On error
// the tool still carries the name, when there is one, for the message.
func parseListedTool(data json.RawMessage) (e ListedTool, ignored []error, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return e, nil, errors.New("not a JSON object")
	}
	str := func(key string) (string, error) { return stringField(fields, key) }
	if v, ok := fields["name"]; !ok || string(v) == "null" {
		return e, nil, errors.New(`missing "name"`)
	}
	if e.Name, err = str("name"); err != nil {
		return e, nil, err
	}
	if err := checkName(e.Name); err != nil {
		return e, nil, err
	}
	if e.InputSchema, err = inputSchema(fields["inputSchema"]); err != nil {
		return e, nil, err
	}
	// The rest is optional: a malformed value is left out, not the tool.
	if e.Title, err = str("title"); err != nil {
		ignored = append(ignored, err)
	}
	if e.Description, err = str("description"); err != nil {
		ignored = append(ignored, err)
	}
	if e.OutputSchema, err = schema(fields["outputSchema"], "outputSchema"); err != nil {
		ignored = append(ignored, err)
	}
	if a, ok := fields["annotations"]; ok && string(a) != "null" {
		var ann tool.Annotations
		if err := json.Unmarshal(a, &ann); err != nil {
			ignored = append(ignored, errors.New(`"annotations" must be an object with boolean readOnlyHint, `+
				`destructiveHint, idempotentHint, openWorldHint and a string title`))
		} else {
			e.Annotations = &ann
		}
	}
	return e, ignored, nil
}

// stringField returns the string value of an object's key: "" when the
// key is absent or null, an error naming the key when it is not a string.
func stringField(obj map[string]json.RawMessage, key string) (string, error) {
	v, ok := obj[key]
	if !ok || string(v) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("%q must be a string", key)
	}
	return s, nil
}

// schema checks that v, when present, is a JSON object and compacts it.
func schema(v json.RawMessage, key string) (json.RawMessage, error) {
	s, _, err := compactSchema(v, key)
	return s, err
}

// compactSchema is schema, and reports whether jsonscan read the schema
// (valid, compact already, as a listing's schemas are), which it then
// copies instead of compacting: the copy holds on to none of what v is
// part of.
func compactSchema(v json.RawMessage, key string) (_ json.RawMessage, scanned bool, _ error) {
	if v == nil || string(v) == "null" {
		return nil, false, nil
	}
	if jsonscan.IsCompact(v, maxScanDepth) {
		if v[0] != '{' {
			return nil, false, fmt.Errorf("%q must be a JSON Schema object", key)
		}
		return bytes.Clone(v), true, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, false, fmt.Errorf("%q: %v", key, err)
	}
	if buf.Bytes()[0] != '{' {
		return nil, false, fmt.Errorf("%q must be a JSON Schema object", key)
	}
	return json.RawMessage(buf.Bytes()), false, nil
}

// maxScanDepth bounds the nesting the fast paths of schema and
// withObjectDefaults read; a deeper schema takes the decoder's path.
const maxScanDepth = 1000

// withObjectDefaults adds "type": "object" and "properties": {} to an input
// schema that lacks them, as MCP clients do, keeping every other key where
// it is.
//
// It reads s's top level with jsonscan (topLevel), without decoding it;
// what that does not read it decodes with segmentio/encoding, which reads
// a listing's schemas in about a third of encoding/json's time, and
// reports a malformed s in encoding/json's words.
func withObjectDefaults(s json.RawMessage) (json.RawMessage, error) { return objectDefaults(s, false) }

// objectDefaults is withObjectDefaults of s; scanned says that jsonscan
// found s valid already (compactSchema), so it is not read twice.
func objectDefaults(s json.RawMessage, scanned bool) (json.RawMessage, error) {
	typ, hasType, hasProperties, empty, ok := topLevel(s, scanned)
	if !ok {
		var top map[string]json.RawMessage
		if segjson.Unmarshal(s, &top) != nil {
			top = nil
			if err := json.Unmarshal(s, &top); err != nil {
				return nil, fmt.Errorf(`"inputSchema": %v`, err)
			}
		}
		typ, hasType = top["type"]
		_, hasProperties = top["properties"]
		empty = len(top) == 0
	}
	if hasType && string(typ) != `"object"` {
		return nil, fmt.Errorf(`"inputSchema" must have "type": "object", not %s`, typ)
	}
	var prefix string
	if !hasType {
		prefix += `"type":"object",`
	}
	if !hasProperties {
		prefix += `"properties":{},`
	}
	if prefix == "" {
		return s, nil
	}
	if empty {
		prefix = strings.TrimSuffix(prefix, ",")
	}
	out := make([]byte, 0, len(s)+len(prefix))
	out = append(out, '{')
	out = append(out, prefix...)
	out = append(out, s[1:]...)
	return out, nil
}

// topLevel reads the members of the object s as a decoding into a map
// would (of equal keys, the last one's value): its "type" value, whether it
// has "type" and "properties", and whether it has no member. It is ok false
// when jsonscan does not read s (invalid, deeper than maxScanDepth, not an
// object, a key it cannot decode). Scanned says jsonscan found s valid.
func topLevel(s []byte, scanned bool) (typ []byte, hasType, hasProperties, empty, ok bool) {
	if !scanned {
		end, valid := jsonscan.ScanValue(s, 0, maxScanDepth)
		if !valid || end != len(s) {
			return nil, false, false, false, false
		}
	}
	if s[0] != '{' {
		return nil, false, false, false, false
	}
	ms, ok := jsonscan.Members(s, 0, make([]jsonscan.Member, 0, 8))
	if !ok {
		return nil, false, false, false, false
	}
	for _, m := range ms {
		switch m.Key {
		case "type":
			typ, hasType = s[m.Start:m.End], true
		case "properties":
			hasProperties = true
		}
	}
	return typ, hasType, hasProperties, len(ms) == 0, true
}

// DescribeJSONError returns err's message, with the line and column of a
// syntax error in data put in front of it.
func DescribeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		return err.Error()
	}
	// Offset counts the bytes read, the offending one included.
	off := min(max(syn.Offset-1, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d column %d: %v", line, col, err)
}

// ReadFS reads a catalog file, or every *.json file directly inside a
// folder (in name order; subfolders are not read), from fsys. It returns
// every server it could read and the problems, joined.
func ReadFS(fsys fs.FS, name string) ([]*Server, error) {
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, &Problem{File: name, Index: -1, Err: fmt.Errorf("cannot read: %w", unwrapPath(err))}
	}
	if !info.IsDir() {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, &Problem{File: name, Index: -1, Err: fmt.Errorf("cannot read: %w", unwrapPath(err))}
		}
		s, err := Parse(name, data)
		if s == nil {
			return nil, err
		}
		return []*Server{s}, err
	}
	entries, err := fs.ReadDir(fsys, name)
	if err != nil {
		return nil, &Problem{File: name, Index: -1, Err: fmt.Errorf("cannot read folder: %w", unwrapPath(err))}
	}
	// The files are read in order, then parsed in parallel: checking the
	// tools' schemas (tool.CheckDefinition) is most of the work.
	type file struct {
		name   string
		data   []byte
		server *Server
		err    error
	}
	var files []*file
	for _, de := range entries {
		if de.IsDir() || !strings.EqualFold(path.Ext(de.Name()), ".json") {
			continue
		}
		f := &file{name: path.Join(name, de.Name())}
		if f.data, err = fs.ReadFile(fsys, f.name); err != nil {
			f.err = &Problem{File: f.name, Index: -1, Err: fmt.Errorf("cannot read: %w", unwrapPath(err))}
		}
		files = append(files, f)
	}
	work := make(chan *file)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for f := range work {
				f.server, f.err = Parse(f.name, f.data)
				f.data = nil
			}
		})
	}
	for _, f := range files {
		if f.err == nil {
			work <- f
		}
	}
	close(work)
	wg.Wait()
	var servers []*Server
	var errs []error
	for _, f := range files {
		if f.server != nil {
			servers = append(servers, f.server)
		}
		if f.err != nil {
			errs = append(errs, f.err)
		}
	}
	if len(files) == 0 {
		errs = append(errs, &Problem{File: name, Index: -1, Err: errors.New("folder has no *.json catalog files")})
	}
	return servers, errors.Join(errs...)
}

// ReadPath is [ReadFS] over the operating system's files: p is a catalog
// file or a folder of them. Messages name files as p does.
func ReadPath(p string) ([]*Server, error) {
	clean := filepath.Clean(p)
	dir, base := filepath.Dir(clean), filepath.Base(clean)
	if info, err := os.Stat(clean); err == nil && info.IsDir() {
		dir, base = clean, "."
	}
	servers, err := ReadFS(os.DirFS(dir), base)
	rename := func(f string) string { return filepath.Join(dir, filepath.FromSlash(f)) }
	if dir == "." {
		rename = func(f string) string { return filepath.FromSlash(f) }
	}
	for _, s := range servers {
		s.File = rename(s.File)
	}
	return servers, renameProblems(err, rename)
}

// renameProblems rewrites the file names of the problems in err.
func renameProblems(err error, rename func(string) string) error {
	if err == nil {
		return nil
	}
	var out []error
	for _, e := range leaves(err) {
		if p, ok := e.(*Problem); ok {
			c := *p
			c.File = rename(p.File)
			e = &c
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// AsTools converts the server's tools into registry tools with the given
// exposure, named by namer and grouped under the server's namespace. The
// tools have no handler: a catalog describes tools, it does not run them.
func (s *Server) AsTools(namer *tool.Namer, exposure tool.Exposure) []tool.Tool {
	names := make([]string, len(s.Tools))
	for i, e := range s.Tools {
		names[i] = e.Name
	}
	modelNames := namer.Names(s.Name, names)
	ns := &tool.Namespace{
		Name:         tool.NamespaceName(s.Name),
		Description:  s.Description,
		Instructions: s.Instructions,
	}
	out := make([]tool.Tool, len(s.Tools))
	for i, e := range s.Tools {
		desc := strings.TrimSpace(e.Description)
		if desc == "" {
			desc = e.Title
		}
		if desc == "" {
			desc = fmt.Sprintf("MCP tool %s from server %s", e.Name, s.Name)
		}
		out[i] = tool.Tool{
			Name:        modelNames[i],
			Title:       e.Title,
			Description: desc,
			Parameters:  e.InputSchema,
			Exposure:    exposure,
			Namespace:   ns,
			Annotations: e.Annotations,
			Origin:      tool.Origin{Server: s.Name, Tool: e.Name},
		}
	}
	return out
}

// Register adds the servers' tools to reg with the given exposure
// ([tool.Deferred] when empty). A server whose name was already used by an
// earlier server in the list is skipped with a problem, since its tools would
// replace the first one's.
func Register(reg *tool.Registry, namer *tool.Namer, exposure tool.Exposure, servers ...*Server) error {
	if exposure == "" {
		exposure = tool.Deferred
	}
	var errs []error
	seen := make(map[string]string, len(servers))
	for _, s := range servers {
		if first, dup := seen[s.Name]; dup {
			errs = append(errs, &Problem{File: s.File, Index: -1,
				Err: fmt.Errorf("server %q is already loaded from %s; the second copy was skipped", s.Name, first)})
			continue
		}
		seen[s.Name] = s.File
		if err := reg.Register(s.AsTools(namer, exposure)...); err != nil {
			for _, leaf := range leaves(err) {
				errs = append(errs, fmt.Errorf("catalog %s: %w", s.File, leaf))
			}
		}
	}
	return errors.Join(errs...)
}

// Problems lists the individual problems in an error returned by this
// package (which joins them), for reporting one per line.
func Problems(err error) []error {
	if err == nil {
		return nil
	}
	return leaves(err)
}

// leaves lists the errors joined in err, however deeply.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}
