package tool

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A parameter schema is read by the JSON Schema draft its "$schema"
// declares: draft-04, draft-06, draft-07, 2019-09 or 2020-12, and 2020-12
// when it declares none (or one that is none of these). Providers read
// every schema as 2020-12, so what older drafts write differently is
// translated into its 2020-12 form: the form sent to providers
// ([RenderSchema]), checked by [CheckDefinition] and enforced on a call's
// arguments ([Validator]), which asserts "format" as drafts 04 to 07 do.
// The translation keeps the schema's meaning under its declared draft,
// with one exception: the keywords beside a "$ref", which drafts 04 to 07
// ignore, apply, as they do for the providers and the model that reads
// the schema.

// draft is a JSON Schema draft, by its year or number.
type draft int

// The drafts a schema may declare.
const (
	draft4    draft = 4
	draft6    draft = 6
	draft7    draft = 7
	draft2019 draft = 2019
	draft2020 draft = 2020
)

// String names the draft as its specification does.
func (d draft) String() string {
	switch d {
	case draft4, draft6, draft7:
		return fmt.Sprintf("draft-%02d", int(d))
	case draft2019:
		return "2019-09"
	}
	return "2020-12"
}

// draftURLs are the drafts' metaschema addresses, without scheme and
// fragment.
var draftURLs = map[string]draft{
	"json-schema.org/draft-04/schema":      draft4,
	"json-schema.org/draft-06/schema":      draft6,
	"json-schema.org/draft-07/schema":      draft7,
	"json-schema.org/draft/2019-09/schema": draft2019,
	"json-schema.org/draft/2020-12/schema": draft2020,
	"json-schema.org/schema":               draft2020, // the latest
}

// declaredDraft returns the draft "$schema" names and whether it names
// one toolshelf knows.
func declaredDraft(s string) (draft, bool) {
	u := strings.TrimSuffix(s, "#")
	u, ok := strings.CutPrefix(u, "http://")
	if !ok {
		u, _ = strings.CutPrefix(u, "https://")
	}
	d, ok := draftURLs[u]
	if !ok {
		return draft2020, false
	}
	return d, true
}

// Repair is one change the translation into JSON Schema 2020-12 made to a
// schema, or one reading of it that a provider would not guess.
type Repair struct {
	// Path locates the schema the repair is in, as a JSON pointer into
	// the declared schema ("" for the root).
	Path string `json:"path"`
	// Keyword is the keyword repaired.
	Keyword string `json:"keyword"`
	// Note says what was done, in a sentence.
	Note string `json:"note"`
}

// String returns "at <path>: <keyword>: <note>".
func (r Repair) String() string {
	return fmt.Sprintf("at %s: %s: %s", pointerText(r.Path), r.Keyword, r.Note)
}

// Rendering is a parameter schema in the form sent to providers.
type Rendering struct {
	// Schema is the schema as JSON Schema 2020-12, compact: the declared
	// schema itself when nothing needed translating.
	Schema json.RawMessage
	// Draft is the draft the declared schema was read by: "draft-04",
	// "draft-06", "draft-07", "2019-09" or "2020-12".
	Draft string
	// Repairs are what the translation changed, in schema order.
	Repairs []Repair
}

// translation is the outcome of translating a schema.
type translation struct {
	rendering Rendering
	// formats reports that the declared draft asserts "format".
	formats bool
}

// annotations are the keywords beside a "$ref" that do not change what
// it validates: metadata, and the places definitions and identifiers
// live.
var annotations = []string{"$ref", "$schema", "$id", "id", "$anchor", "$comment", "title", "description",
	"default", "examples", "readOnly", "writeOnly", "deprecated", "definitions", "$defs"}

// anchorPattern is what a 2020-12 "$anchor" may be.
var anchorPattern = regexp.MustCompile(`^[A-Za-z_][-A-Za-z0-9._]*$`)

// translator rewrites a decoded schema into JSON Schema 2020-12.
type translator struct {
	d       draft
	repairs []Repair
	changed bool // the tree differs from the declared schema
	err     error
	// renames maps a schema object to its members renamed, by their
	// declared names, for the references that point through them.
	renames map[*node]map[string]string
	refs    []refSite
	// recursive are the schema objects with a "$recursiveRef" or a
	// "$recursiveAnchor" (2019-09), with where they are.
	recursive []located
	// embedded reports a subschema that opens a resource of its own (an
	// identifier that is not an anchor).
	embedded bool
}

// located is a schema object and the JSON pointer to it.
type located struct {
	n   *node
	ptr string
}

// refSite is a schema object with a "$ref" that is a JSON pointer, and
// the resource the pointer starts from.
type refSite struct{ obj, res *node }

// translate reads params (valid JSON) by their declared draft and returns
// their 2020-12 form. The error, which wraps [ErrSchema], says what could
// not be repaired.
func translate(params []byte) (translation, error) {
	root, err := parseNode(params)
	if err != nil {
		return translation{}, fmt.Errorf("%w: the parameter schema is not valid JSON", ErrSchema)
	}
	t := &translator{d: draft2020, renames: map[*node]map[string]string{}}
	if s := root.get("$schema"); s != nil {
		name, isString := s.text()
		var known bool
		t.d, known = declaredDraft(name)
		switch {
		case !isString:
			t.note("", "$schema", "it is not a string: the schema is read as 2020-12, as providers read it")
		case !known:
			t.note("", "$schema", fmt.Sprintf("%s names no draft toolshelf knows: the schema is read as 2020-12, as providers read it", quoteClipped(name)))
		}
	}
	t.walk(root, "", root)
	t.recursiveRefs()
	t.rewriteRefs()
	if t.err != nil {
		return translation{}, t.err
	}
	slices.SortStableFunc(t.repairs, func(a, b Repair) int { return strings.Compare(a.Path, b.Path) })
	out := translation{formats: t.d <= draft7, rendering: Rendering{Schema: slices.Clone(params), Draft: t.d.String(), Repairs: t.repairs}}
	if t.changed {
		if i := root.index("$schema"); i >= 0 {
			root.remove(i)
		}
		out.rendering.Schema = root.bytes()
	}
	return out, nil
}

// repair records a change at the schema at ptr.
func (t *translator) repair(ptr, keyword, note string) {
	t.changed = true
	t.note(ptr, keyword, note)
}

// note records a reading that changes nothing in the schema's text.
func (t *translator) note(ptr, keyword, note string) {
	t.repairs = append(t.repairs, Repair{Path: ptr, Keyword: keyword, Note: note})
}

// fail records what cannot be repaired; the first failure wins.
func (t *translator) fail(ptr, format string, args ...any) {
	if t.err == nil {
		t.err = fmt.Errorf("%w: at %s: %s", ErrSchema, pointerText(ptr), fmt.Sprintf(format, args...))
	}
}

// rename renames the member at position i of the schema object n.
func (t *translator) rename(n *node, i int, to string) {
	m := t.renames[n]
	if m == nil {
		m = map[string]string{}
		t.renames[n] = m
	}
	m[n.keys[i]] = to
	n.keys[i] = to
}

// walk translates the schema n found at ptr, whose references start from
// the resource res, subschemas first.
func (t *translator) walk(n *node, ptr string, res *node) {
	if n.kind != '{' {
		return
	}
	idKey := "$id"
	if t.d == draft4 {
		idKey = "id"
	}
	if id, ok := n.get(idKey).text(); ok && ptr != "" && !strings.HasPrefix(id, "#") {
		res, t.embedded = n, true
	}
	for i, k := range n.keys {
		v, at := n.vals[i], ptr+"/"+escapePointer(k)
		switch {
		case slices.Contains(schemaMapKeywords, k):
			if v.kind == '{' {
				for j, name := range v.keys {
					t.walk(v.vals[j], at+"/"+escapePointer(name), res)
				}
			}
		case slices.Contains(schemaListKeywords, k) && v.kind == '[':
			for j, item := range v.vals {
				t.walk(item, fmt.Sprintf("%s/%d", at, j), res)
			}
		case slices.Contains(schemaKeywords, k):
			t.walk(v, at, res)
		}
	}
	if ref, ok := n.get("$ref").text(); ok && strings.HasPrefix(ref, "#/") {
		t.refs = append(t.refs, refSite{obj: n, res: res})
	}
	t.ids(n, ptr)
	t.refSiblings(n, ptr)
	t.exclusiveBounds(n, ptr)
	t.definitions(n, ptr)
	t.dependencies(n, ptr)
	t.items(n, ptr)
	if t.d == draft2019 && (n.index("$recursiveRef") >= 0 || n.index("$recursiveAnchor") >= 0) {
		t.recursive = append(t.recursive, located{n, ptr})
	}
}

// ids writes draft-04's "id" as "$id" (dropped at the root, where it only
// names the document) and an identifier that is a fragment as "$anchor".
func (t *translator) ids(n *node, ptr string) {
	key := "$id"
	if t.d == draft4 {
		key = "id"
	} else if t.d > draft7 {
		return
	}
	i := n.index(key)
	if i < 0 {
		return
	}
	id, ok := n.vals[i].text()
	if !ok {
		return
	}
	name, isFragment := strings.CutPrefix(id, "#")
	switch {
	case isFragment && anchorPattern.MatchString(name):
		t.rename(n, i, "$anchor")
		n.vals[i] = stringNode(name)
		t.repair(ptr, key, fmt.Sprintf("%s %s names a place in the schema: written as \"$anchor\": %s", key, quoteClipped(id), quoteClipped(name)))
	case key == "$id":
	case ptr == "" || id == "" || id == "#":
		n.remove(i)
		t.repair(ptr, key, "draft-04's id names the document, which a tool schema does not need: dropped")
	default:
		t.rename(n, i, "$id")
		t.repair(ptr, key, "draft-04's id is written as $id")
	}
}

// refSiblings notes the keywords beside a "$ref" that drafts 04 to 07
// ignore and providers apply.
func (t *translator) refSiblings(n *node, ptr string) {
	if t.d > draft7 || n.index("$ref") < 0 {
		return
	}
	var applied []string
	for _, k := range n.keys {
		if !slices.Contains(annotations, k) {
			applied = append(applied, k)
		}
	}
	if len(applied) == 0 {
		return
	}
	t.repair(ptr, "$ref", fmt.Sprintf("%s ignores the keywords beside $ref (%s); providers apply them, and so does toolshelf",
		t.d, clipText(strings.Join(applied, ", "), maxEcho)))
}

// exclusiveBounds writes draft-04's boolean exclusiveMinimum and
// exclusiveMaximum as the bound they make exclusive, whatever the draft
// declared: a boolean has no other meaning.
func (t *translator) exclusiveBounds(n *node, ptr string) {
	for _, b := range [...][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		excl, bound := b[0], b[1]
		i := n.index(excl)
		if i < 0 {
			continue
		}
		on, ok := n.vals[i].boolean()
		if !ok {
			continue
		}
		j := n.index(bound)
		switch {
		case on && j >= 0 && n.vals[j].isNumber():
			value := n.vals[j]
			n.vals[i] = value
			n.remove(j)
			t.repair(ptr, excl, fmt.Sprintf("true beside %s %s is draft-04's form: written as \"%s\": %s", bound, value.raw, excl, value.raw))
		case on && j >= 0:
			// A bound that is not a number: the check says so.
		case on:
			n.remove(i)
			t.repair(ptr, excl, fmt.Sprintf("true without %s bounds nothing: dropped", bound))
		default:
			n.remove(i)
			t.repair(ptr, excl, fmt.Sprintf("false, draft-04's default, changes nothing: dropped (%s stays inclusive)", bound))
		}
	}
}

// definitions renames drafts 04 to 07's "definitions" to "$defs".
func (t *translator) definitions(n *node, ptr string) {
	if t.d > draft7 {
		return
	}
	i := n.index("definitions")
	if i < 0 || n.vals[i].kind != '{' || n.index("$defs") >= 0 {
		return
	}
	t.rename(n, i, "$defs")
	t.repair(ptr, "definitions", "written as $defs, its 2020-12 name; references into it follow")
}

// dependencies splits drafts 04 to 07's "dependencies" into
// "dependentRequired" (the lists of names) and "dependentSchemas".
func (t *translator) dependencies(n *node, ptr string) {
	if t.d > draft7 {
		return
	}
	i := n.index("dependencies")
	if i < 0 || n.vals[i].kind != '{' {
		return
	}
	if n.index("dependentRequired") >= 0 || n.index("dependentSchemas") >= 0 {
		t.fail(ptr, "dependencies cannot be written as dependentRequired and dependentSchemas, which the schema also has: merge them")
		return
	}
	deps := n.vals[i]
	required, schemas := &node{kind: '{'}, &node{kind: '{'}
	for j, name := range deps.keys {
		target := schemas
		if deps.vals[j].kind == '[' {
			target = required
		}
		target.keys, target.vals = append(target.keys, name), append(target.vals, deps.vals[j])
	}
	n.remove(i)
	if len(schemas.keys) > 0 || len(required.keys) == 0 {
		n.insert(i, "dependentSchemas", schemas)
	}
	if len(required.keys) > 0 {
		n.insert(i, "dependentRequired", required)
	}
	m := t.renames[n]
	if m == nil {
		m = map[string]string{}
		t.renames[n] = m
	}
	m["dependencies"] = "dependentSchemas"
	t.repair(ptr, "dependencies", "written as dependentRequired (lists of names) and dependentSchemas (schemas), its 2019-09 split")
}

// items writes an array of item schemas as "prefixItems" and the
// "additionalItems" beside it as "items", whatever the draft declared:
// 2020-12 has no array form.
func (t *translator) items(n *node, ptr string) {
	i := n.index("items")
	if i < 0 || n.vals[i].kind != '[' {
		return
	}
	if n.index("prefixItems") >= 0 {
		t.fail(ptr, "items is an array of schemas and prefixItems is set too: keep one of them")
		return
	}
	t.rename(n, i, "prefixItems")
	note := "an array of schemas is written as prefixItems"
	if j := n.index("additionalItems"); j >= 0 {
		t.rename(n, j, "items")
		note += ", and additionalItems as items"
	}
	t.repair(ptr, "items", note)
}

// recursiveRefs writes 2019-09's "$recursiveRef" as the "$ref" it is in a
// schema of one resource, and drops "$recursiveAnchor".
func (t *translator) recursiveRefs() {
	if len(t.recursive) == 0 {
		return
	}
	if t.embedded {
		t.fail("", "$recursiveRef in a schema that embeds other resources has no 2020-12 equivalent toolshelf can write: use $ref")
		return
	}
	for _, r := range t.recursive {
		n := r.n
		if i := n.index("$recursiveAnchor"); i >= 0 {
			n.remove(i)
			t.repair(r.ptr, "$recursiveAnchor", "in a schema of one resource it changes nothing: dropped")
		}
		i := n.index("$recursiveRef")
		if i < 0 {
			continue
		}
		if n.index("$ref") >= 0 {
			t.fail(r.ptr, "the schema has both $ref and $recursiveRef: use $ref alone")
			return
		}
		n.keys[i] = "$ref"
		t.repair(r.ptr, "$recursiveRef", "in a schema of one resource it is a $ref: written as one")
	}
}

// rewriteRefs rewrites the JSON pointers of references through members
// renamed.
func (t *translator) rewriteRefs() {
	if len(t.renames) == 0 {
		return
	}
	for _, site := range t.refs {
		i := site.obj.index("$ref")
		ref, _ := site.obj.vals[i].text()
		tokens := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
		cur, changed := site.res, false
		for j, raw := range tokens {
			if cur == nil {
				break
			}
			tok, err := url.PathUnescape(raw)
			if err != nil {
				break
			}
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			if to, ok := t.renames[cur][tok]; ok {
				tokens[j], tok, changed = to, to, true
			}
			switch cur.kind {
			case '{':
				cur = cur.get(tok)
			case '[':
				k, err := strconv.Atoi(tok)
				if err != nil || k < 0 || k >= len(cur.vals) {
					cur = nil
					continue
				}
				cur = cur.vals[k]
			default:
				cur = nil
			}
		}
		if changed {
			site.obj.vals[i] = stringNode("#/" + strings.Join(tokens, "/"))
		}
	}
}
