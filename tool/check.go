package tool

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolshelf/toolshelf/internal/ecma"
)

// The caps on a tool definition. A definition past one is refused: sent
// with every request that declares it, it would fill the model's context
// window ("prompt is too long") for as long as the transcript declares it.
//
// Each cap is well above what real tools need. Measured on the built-in
// catalog (catalog/builtin, 1,564 tools of 53 MCP servers, the same files
// as the shared corpus, whose one variant file adds 61 tools and no new
// maximum): the longest description is 7,011 bytes (firecrawl's
// firecrawl_monitor_create), the largest parameter schema 12,120 bytes
// of compact JSON (mongodb's export), the most properties 69
// (google-calendar's create-event), the most subschemas 89 (notion's
// API-update-page-markdown) and the deepest schema 21 levels (mongodb's
// explain). TestCapsAboveTheCorpus keeps those figures and
// the caps in step.
const (
	// MaxDescriptionBytes is the longest description accepted, in bytes
	// of UTF-8: 16 KiB, 2.3 times the longest real one and about 4,000
	// tokens.
	MaxDescriptionBytes = 16 << 10
	// MaxSchemaBytes is the largest parameter schema accepted, in bytes
	// of compact JSON: 64 KiB, 5.4 times the largest real one.
	MaxSchemaBytes = 64 << 10
	// MaxSchemaProperties is the most properties a parameter schema may
	// name, counted over every "properties" object at every level
	// (values of default, const, enum and examples are data and do not
	// count): 1,000, 14 times the most of a real tool.
	MaxSchemaProperties = 1000
	// MaxSubschemas is the most schemas a parameter schema may be made
	// of: itself, each property's, each entry of items, allOf, anyOf,
	// oneOf and prefixItems, each definition and every other keyword's
	// subschema, boolean schemas included: 2,000, 22 times the most of a
	// real tool (89). JSON Schema compilers take time that grows with the
	// square of this number (santhosh-tekuri/jsonschema takes 9 s for
	// 40,000), so without it a 64 KiB list of subschemas could stall a
	// registration for seconds.
	MaxSubschemas = 2000
	// MaxSchemaDepth is the deepest nesting of JSON objects and arrays a
	// parameter schema may have, the schema object itself being level 1:
	// 64, 3 times the deepest real one.
	MaxSchemaDepth = 64
)

// Errors wrapped by the errors of [CheckDefinition].
var (
	// ErrSchema reports a parameter schema a provider would refuse even
	// in its 2020-12 form ([RenderSchema]), or one that has no such form:
	// not valid JSON Schema, a pattern that is not an ECMA-262 regular
	// expression, a reference that does not resolve within the schema or
	// that loops, a root that is not an object schema, or what an older
	// draft writes in a way that cannot be translated.
	ErrSchema = errors.New("invalid parameter schema")
	// ErrTooLarge reports a definition past one of the caps.
	ErrTooLarge = errors.New("tool definition too large")
)

// CheckDefinition reports whether a tool declared with this description
// and parameter schema can be sent to every provider, checking it the way
// the providers do, once, before the tool is registered: a definition a
// provider refuses fails every request that declares it ("input_schema:
// JSON schema is invalid"), and a transcript keeps declaring it.
//
// The description must fit in [MaxDescriptionBytes]. The schema (nil or
// empty means an object schema without properties) must fit the caps
// [MaxSchemaBytes], [MaxSchemaDepth], [MaxSchemaProperties] and
// [MaxSubschemas], be a JSON object with "type": "object", and be read by
// the draft its "$schema" declares: what older drafts write differently
// is translated into JSON Schema 2020-12 (see [RenderSchema]), and that
// form must compile as 2020-12, as providers check it, with ECMA-262
// patterns. Every "$ref" must point into the schema itself ("#/$defs/x",
// "#/properties/a", "#anchor"): references to other documents are
// refused, as are references to nothing and references that lead back to
// themselves without descending into a property or an item ({"$ref": "#"}
// at the root, or a definition whose "$ref" or "allOf" reaches itself),
// which no value could ever be validated against. Recursion through
// properties or items, as in a tree of nodes, is accepted.
//
// The error wraps [ErrTooLarge] or [ErrSchema] and says what is wrong,
// where, and how to fix it. Results are remembered by schema, so checking
// the same definition again costs a hash.
func CheckDefinition(description string, parameters json.RawMessage) error {
	if n := len(description); n > MaxDescriptionBytes {
		return fmt.Errorf("%w: the description is %d bytes; at most %d are accepted: shorten it to what the tool does and when to use it (long usage notes belong in the server's instructions)",
			ErrTooLarge, n, MaxDescriptionBytes)
	}
	_, err := RenderSchema(parameters)
	return err
}

// RenderSchema returns a parameter schema in the form sent to providers,
// JSON Schema 2020-12: the schema itself when it needs no translation,
// else the schema with what its declared draft writes differently written
// as 2020-12 writes it, in the same order. Drafts 04 to 07's boolean
// exclusiveMinimum and exclusiveMaximum become the bound they make
// exclusive (in any draft: a boolean has no other meaning), "definitions"
// becomes "$defs" and the references into it follow, "id" becomes "$id"
// or "$anchor" (or is dropped at the root), "dependencies" becomes
// "dependentRequired" and "dependentSchemas", an array of "items" becomes
// "prefixItems" (in any draft) and 2019-09's "$recursiveRef" a "$ref"; a
// rewritten schema loses its "$schema". The keywords beside a "$ref",
// which drafts 04 to 07 ignore, are kept: providers apply them, and so
// does the [Validator]. Rendering.Repairs lists each change.
//
// The error is [CheckDefinition]'s for the schema: a schema that cannot
// be repaired, or whose translation a provider would refuse. Results are
// remembered with the check's, so Rendering.Schema is shared and must not
// be modified. Nil or empty parameters render as they are.
func RenderSchema(parameters json.RawMessage) (Rendering, error) {
	params := bytes.TrimSpace(parameters)
	if len(params) == 0 {
		return Rendering{Schema: parameters, Draft: draft2020.String()}, nil
	}
	if n := len(params); n > MaxSchemaBytes {
		return Rendering{}, fmt.Errorf("%w: the parameter schema is %d bytes; at most %d are accepted: remove what the model does not need (examples, long descriptions, rarely used parameters)",
			ErrTooLarge, n, MaxSchemaBytes)
	}
	a := analyse(params)
	if a.err != nil {
		return Rendering{}, a.err
	}
	r := a.tr.rendering
	r.Repairs = slices.Clone(r.Repairs)
	return r, nil
}

// analysis is what toolshelf knows of a schema: its translation and the
// check's verdict.
type analysis struct {
	tr translation
	// translated reports that tr holds the schema's translation (which
	// the check's error may still refuse: a cap, a pattern).
	translated bool
	err        error
}

// analyse returns the analysis of params (trimmed), remembered by their
// SHA-256.
func analyse(params []byte) *analysis {
	key := sha256.Sum256(params)
	if a, ok := schemaChecks.get(key); ok {
		return a
	}
	a := checkSchema(params)
	schemaChecks.put(key, a)
	return a
}

// schemaMemo remembers the analyses of schemas by their SHA-256. It is
// bounded: when full, it starts afresh.
type schemaMemo struct {
	mu   sync.Mutex // guards m
	m    map[[sha256.Size]byte]*analysis
	size int
}

var schemaChecks = schemaMemo{size: 1 << 14}

func (c *schemaMemo) get(key [sha256.Size]byte) (*analysis, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[key]
	return a, ok
}

func (c *schemaMemo) put(key [sha256.Size]byte, a *analysis) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.size {
		c.m = make(map[[sha256.Size]byte]*analysis)
	}
	c.m[key] = a
}

// checkSchema analyses a schema: depth first (cheap, and it bounds the
// recursion of what follows), then the translation, the decoded
// document's shape, properties and references, then the compiled
// translation.
func checkSchema(params []byte) *analysis {
	depth, ok := jsonDepth(params)
	if !ok {
		return &analysis{err: fmt.Errorf("%w: the parameter schema is not valid JSON", ErrSchema)}
	}
	if depth > MaxSchemaDepth {
		return &analysis{err: fmt.Errorf("%w: the parameter schema nests %d levels deep; at most %d are accepted: flatten nested objects into top-level parameters",
			ErrTooLarge, depth, MaxSchemaDepth)}
	}
	a := &analysis{}
	tr, terr := translate(params)
	a.tr, a.translated = tr, terr == nil
	a.err = checkDeclared(params)
	if a.err == nil {
		a.err = terr
	}
	if a.err != nil {
		return a
	}
	s, err := compile(tr.rendering.Schema, ecma.Engine, false)
	if err != nil {
		a.err = compileError(err)
		return a
	}
	a.err = refCycle(s)
	return a
}

// checkDeclared checks the declared schema's shape, properties and
// references.
func checkDeclared(params []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return fmt.Errorf("%w: the parameter schema is not valid JSON: %v", ErrSchema, err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: the parameter schema must be a JSON object, such as {\"type\":\"object\",\"properties\":{}}", ErrSchema)
	}
	if typ, ok := root["type"]; !ok || typ != "object" {
		return fmt.Errorf("%w: the parameter schema must have \"type\": \"object\" at its root (providers call a tool with an object of named arguments)", ErrSchema)
	}
	w := &schemaWalker{}
	w.schema(root, "")
	if w.err != nil {
		return w.err
	}
	if w.props > MaxSchemaProperties {
		return fmt.Errorf("%w: the parameter schema has %d properties; at most %d are accepted: split the tool, or take rarely used options as one object or string parameter",
			ErrTooLarge, w.props, MaxSchemaProperties)
	}
	if w.schemas > MaxSubschemas {
		return fmt.Errorf("%w: the parameter schema is made of %d schemas (properties, items, allOf, anyOf… entries, definitions); at most %d are accepted: merge alternatives and drop unused definitions",
			ErrTooLarge, w.schemas, MaxSubschemas)
	}
	return nil
}

// compile compiles a schema in the form [RenderSchema] gives, as JSON
// Schema 2020-12 whatever its "$schema" says (as Anthropic checks it; the
// keyword also names a document a compiler would fetch), offline: a
// reference to any other document is refused. engine compiles its
// patterns; formats asserts "format", as drafts 04 to 07 do. It is the
// one JSON Schema compiler of toolshelf: the definition check and the
// validation of arguments both use it.
func compile(schema []byte, engine func(string) (jsonschema.Regexp, error), formats bool) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	if root, ok := doc.(map[string]any); ok {
		if _, ok := root["$schema"]; ok {
			root = maps.Clone(root)
			delete(root, "$schema")
			doc = root
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	c.UseRegexpEngine(engine)
	if formats {
		c.AssertFormat()
	}
	if err := c.AddResource(ecma.SchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(ecma.SchemaURL)
}

// jsonDepth returns the deepest nesting of objects and arrays in data and
// whether the brackets balance. It does not otherwise validate the JSON.
func jsonDepth(data []byte) (int, bool) {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
			if depth < 0 {
				return deepest, false
			}
		}
	}
	return deepest, depth == 0 && !inString
}

// schemaWalker walks a decoded schema by its keywords: it counts the
// properties and refuses references to other documents.
type schemaWalker struct {
	props   int // named properties
	schemas int // schemas (objects and booleans), the root included
	refs    int // references
	err     error
}

// Keywords whose value is a schema, an array of schemas or an object of
// schemas. Other keywords hold data (default, const, enum, examples) or
// scalars and are not walked.
var (
	schemaKeywords = []string{"items", "additionalProperties", "additionalItems", "not", "if", "then", "else",
		"contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "contentSchema"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	refKeywords        = []string{"$ref", "$dynamicRef", "$recursiveRef"}
)

// schema walks the schema v found at the JSON pointer ptr.
func (w *schemaWalker) schema(v any, ptr string) {
	if w.err != nil {
		return
	}
	if _, ok := v.(bool); ok {
		w.schemas++ // a boolean schema
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return // a value the compiler will refuse
	}
	w.schemas++
	for _, k := range refKeywords {
		ref, ok := obj[k].(string)
		if ok {
			w.refs++
		}
		if ok && !strings.HasPrefix(ref, "#") {
			w.err = fmt.Errorf("%w: at %s: %s %s points to another document; tool schemas must be self-contained: copy the definition under \"$defs\" and refer to it as \"#/$defs/<name>\"",
				ErrSchema, pointerText(ptr), k, quoteClipped(ref))
			return
		}
	}
	for _, k := range sortedKeys(obj) {
		val := obj[k]
		at := ptr + "/" + escapePointer(k)
		switch {
		case slices.Contains(schemaMapKeywords, k):
			m, ok := val.(map[string]any)
			if !ok {
				continue
			}
			if k == "properties" {
				w.props += len(m)
			}
			for _, name := range sortedKeys(m) {
				w.schema(m[name], at+"/"+escapePointer(name))
			}
		case slices.Contains(schemaListKeywords, k):
			if list, ok := val.([]any); ok {
				for i, item := range list {
					w.schema(item, at+"/"+strconv.Itoa(i))
				}
				continue
			}
			if slices.Contains(schemaKeywords, k) {
				w.schema(val, at)
			}
		case slices.Contains(schemaKeywords, k):
			w.schema(val, at)
		}
		if w.err != nil {
			return
		}
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// pointerText shows a JSON pointer into the schema, "/" for the root.
func pointerText(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return clipText(ptr, maxEcho)
}

// refuseLoader refuses every document: schemas are checked offline, and a
// provider fetches nothing either.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, errors.New("tool schemas must be self-contained")
}

// printer renders the compiler's messages in English.
var printer = message.NewPrinter(language.English)

// compileError explains why a schema does not compile, without the URL it
// was compiled under.
func compileError(err error) error {
	var (
		sve    *jsonschema.SchemaValidationError
		ptr    *jsonschema.JSONPointerNotFoundError
		anchor *jsonschema.AnchorNotFoundError
		load   *jsonschema.LoadURLError
		regex  *jsonschema.InvalidRegexError
	)
	switch {
	case errors.As(err, &sve):
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			return fmt.Errorf("%w: it is not valid JSON Schema 2020-12: %s: fix the schema (patterns are ECMA-262 regular expressions)",
				ErrSchema, describeInvalid(ve))
		}
	case errors.As(err, &ptr):
		return fmt.Errorf("%w: $ref %s points to nothing in the schema: define what it names or fix the reference",
			ErrSchema, quoteClipped(localURL(ptr.URL)))
	case errors.As(err, &anchor):
		return fmt.Errorf("%w: $ref %s names an anchor the schema does not define: add the \"$anchor\" or fix the reference",
			ErrSchema, quoteClipped(localURL(anchor.Reference)))
	case errors.As(err, &load):
		return fmt.Errorf("%w: it refers to another document, %s; tool schemas must be self-contained: copy the definition under \"$defs\" and refer to it as \"#/$defs/<name>\"",
			ErrSchema, quoteClipped(load.URL))
	case errors.As(err, &regex):
		return fmt.Errorf("%w: at %s: %s is not an ECMA-262 regular expression: fix the pattern",
			ErrSchema, pointerText(strings.TrimPrefix(localURL(regex.URL), "#")), quoteClipped(regex.Regex))
	}
	return fmt.Errorf("%w: %s", ErrSchema, clipText(strings.ReplaceAll(err.Error(), ecma.SchemaURL, ""), 4*maxEcho))
}

// localURL shows a location in the schema as the fragment it is.
func localURL(u string) string {
	if rest, ok := strings.CutPrefix(u, ecma.SchemaURL); ok {
		if rest == "" {
			return "#"
		}
		return rest
	}
	return u
}

// maxProblems is how many of a schema's problems a message lists.
const maxProblems = 3

// describeInvalid lists where and why a schema fails the metaschema, one
// problem per leaf, the first few.
func describeInvalid(ve *jsonschema.ValidationError) string {
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			where := pointerText(joinPointer(e.InstanceLocation))
			lines = append(lines, fmt.Sprintf("at %s: %s", where, clipText(e.ErrorKind.LocalizedString(printer), 2*maxEcho)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(lines) > maxProblems {
		lines = append(lines[:maxProblems], fmt.Sprintf("and %d more", len(lines)-maxProblems))
	}
	return strings.Join(lines, "; ")
}

func joinPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointer(t))
	}
	return b.String()
}

// refCycle refuses a reference that leads back to the schema it starts
// from without descending into the instance: validating any value against
// it would loop forever (the compiler accepts it and every validation
// fails with "reference cycle"). Only the in-place applicators are
// followed: $ref, $dynamicRef, allOf, anyOf, oneOf, not, if, then, else
// and dependentSchemas; a property, an item or any other keyword that
// moves to a part of the value ends the path.
func refCycle(root *jsonschema.Schema) error {
	// Every schema reachable by any keyword, in a deterministic order.
	var all []*jsonschema.Schema
	seen := map[*jsonschema.Schema]bool{}
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		all = append(all, s)
		for _, c := range inPlace(s) {
			visit(c)
		}
		for _, c := range descending(s) {
			visit(c)
		}
	}
	visit(root)
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[*jsonschema.Schema]int{}
	var path []*jsonschema.Schema
	var cycle []*jsonschema.Schema
	var dfs func(s *jsonschema.Schema) bool
	dfs = func(s *jsonschema.Schema) bool {
		state[s] = onPath
		path = append(path, s)
		for _, c := range inPlace(s) {
			switch state[c] {
			case onPath:
				i := slices.Index(path, c)
				cycle = append(slices.Clone(path[i:]), c)
				return true
			case unvisited:
				if dfs(c) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		state[s] = done
		return false
	}
	for _, s := range all {
		if state[s] == unvisited && dfs(s) {
			locs := make([]string, len(cycle))
			for i, c := range cycle {
				locs[i] = clipText(localURL(c.Location), maxEcho)
			}
			if len(locs) > 2*maxProblems {
				locs = append(locs[:maxProblems], "…", locs[len(locs)-1])
			}
			return fmt.Errorf("%w: its references loop without descending into a property or an item (%s), so no value can be validated against it: make the reference point at a definition that does not lead back to itself",
				ErrSchema, strings.Join(locs, " → "))
		}
	}
	return nil
}

// inPlace returns the subschemas s applies to the value s itself applies
// to, in a fixed order.
func inPlace(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(cs ...*jsonschema.Schema) {
		for _, c := range cs {
			if c != nil {
				out = append(out, c)
			}
		}
	}
	add(s.Ref, s.RecursiveRef)
	if s.DynamicRef != nil {
		add(s.DynamicRef.Ref)
	}
	add(s.AllOf...)
	add(s.AnyOf...)
	add(s.OneOf...)
	add(s.Not, s.If, s.Then, s.Else)
	for _, k := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
		add(s.DependentSchemas[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		if c, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			add(c)
		}
	}
	return out
}

// descending returns the subschemas s applies to parts of the value, in a
// fixed order.
func descending(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(cs ...*jsonschema.Schema) {
		for _, c := range cs {
			if c != nil {
				out = append(out, c)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		add(s.Properties[k])
	}
	pats := slices.SortedFunc(maps.Keys(s.PatternProperties), func(a, b jsonschema.Regexp) int {
		return strings.Compare(a.String(), b.String())
	})
	for _, p := range pats {
		add(s.PatternProperties[p])
	}
	for _, v := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch v := v.(type) {
		case *jsonschema.Schema:
			add(v)
		case []*jsonschema.Schema:
			add(v...)
		}
	}
	add(s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	add(s.PrefixItems...)
	return out
}

// maxEcho bounds how much of a schema's own text a message repeats.
const maxEcho = 100

// quoteClipped quotes s, cut to maxEcho bytes.
func quoteClipped(s string) string { return strconv.Quote(clipText(s, maxEcho)) }

// clipText returns s cut to at most n bytes at a rune boundary, with "…"
// marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
