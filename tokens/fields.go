package tokens

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
)

// Field is a part of a tool declaration that tokens are attributed to.
type Field int

// The fields of a declaration, in the order reports list them.
const (
	// FieldName is the tool's name.
	FieldName Field = iota
	// FieldDescription is the tool's own description.
	FieldDescription
	// FieldParamDescriptions are the values of every description keyword
	// inside the parameter schema, nested schemas included.
	FieldParamDescriptions
	// FieldEnums are the values of enum and const keywords.
	FieldEnums
	// FieldDefaults are the values of default keywords.
	FieldDefaults
	// FieldExamples are the values of examples and example keywords.
	FieldExamples
	// FieldSchema is everything else: JSON syntax, the keys, property
	// names, types, required lists, formats, patterns, titles, nesting.
	FieldSchema

	numFields
)

// Fields returns every field, in report order.
func Fields() []Field {
	fs := make([]Field, numFields)
	for i := range fs {
		fs[i] = Field(i)
	}
	return fs
}

var fieldNames = [numFields]string{"name", "description", "paramDescriptions", "enums", "defaults", "examples", "schema"}

// String returns the field's name as JSON reports spell it
// ("paramDescriptions").
func (f Field) String() string {
	if f < 0 || f >= numFields {
		return fmt.Sprintf("Field(%d)", int(f))
	}
	return fieldNames[f]
}

// Breakdown is the tokens of a tool declaration per [Field]. Its fields sum
// to the declaration's tokens ([Counter.Tool]): see [Counter.Breakdown].
type Breakdown struct {
	Name              int `json:"name"`
	Description       int `json:"description"`
	ParamDescriptions int `json:"paramDescriptions"`
	Enums             int `json:"enums"`
	Defaults          int `json:"defaults"`
	Examples          int `json:"examples"`
	Schema            int `json:"schema"`
}

// ptr returns the counter of field f, or nil for an unknown field.
func (b *Breakdown) ptr(f Field) *int {
	switch f {
	case FieldName:
		return &b.Name
	case FieldDescription:
		return &b.Description
	case FieldParamDescriptions:
		return &b.ParamDescriptions
	case FieldEnums:
		return &b.Enums
	case FieldDefaults:
		return &b.Defaults
	case FieldExamples:
		return &b.Examples
	case FieldSchema:
		return &b.Schema
	}
	return nil
}

// Get returns the tokens of field f (0 for an unknown field).
func (b Breakdown) Get(f Field) int {
	if p := b.ptr(f); p != nil {
		return *p
	}
	return 0
}

// Total returns the sum of the fields.
func (b Breakdown) Total() int {
	return b.Name + b.Description + b.ParamDescriptions + b.Enums + b.Defaults + b.Examples + b.Schema
}

// Share returns field f's part of the total, between 0 and 1 (0 when the
// total is 0).
func (b Breakdown) Share(f Field) float64 {
	total := b.Total()
	if total == 0 {
		return 0
	}
	return float64(b.Get(f)) / float64(total)
}

// Add adds o to b, field by field.
func (b *Breakdown) Add(o Breakdown) {
	for _, f := range Fields() {
		*b.ptr(f) += o.Get(f)
	}
}

// Breakdown attributes the tokens of a declaration, as [Counter.Tool]
// counts them, to its fields; the fields sum exactly to Counter.Tool(t).
//
// The method: the canonical rendering ([llm.Tool.Canonical], what Tool
// counts) is tokenized once and every byte of it is labelled with the
// field that owns it. The value of the top-level name and description
// belong to [FieldName] and [FieldDescription], quotes included. Inside
// the parameters the schema is walked as JSON Schema (properties,
// patternProperties, $defs, definitions, dependentSchemas, items,
// prefixItems, additionalProperties, allOf, anyOf, oneOf, not, if, then,
// else, contains, propertyNames and the unevaluated keywords hold
// subschemas), and the whole value of a description (when it is a string),
// enum or const, default, examples or example keyword is labelled with its
// field, quotes, brackets and commas inside it included; the keyword itself
// and its colon stay [FieldSchema], as does every byte nothing claims. Each
// token then goes to the field that owns most of its bytes (a tie goes to
// the field listed first, so a token such as `"read` counts for the name,
// and `":"` for the schema).
//
// Counting each text separately and giving the schema the remainder would
// count more for the texts than they cost in place (BPE merges across
// their quotes), and could leave the schema negative; attributing the
// tokens of one tokenization cannot. A schema that is not an object, not
// valid JSON or nested too deep is labelled as far as it can be read: the
// rest is schema. Should the tokenizer fail or disagree with Tool's count
// (text it refuses), the count is shared out in proportion to the bytes.
func (c *Counter) Breakdown(t llm.Tool) Breakdown {
	canon := t.Canonical()
	total := c.CountBytes(canon)
	labels := labelDeclaration(canon)
	var per [numFields]int
	_, toks, err := c.enc.Encode(string(canon))
	if err == nil && len(toks) == total && attribute(labels, toks, &per) {
		return fromArray(per)
	}
	return fromArray(proportional(labels, total))
}

// attribute gives each token to the field owning most of its bytes. It
// reports false when the tokens do not spell the labelled bytes.
func attribute(labels []Field, toks []string, per *[numFields]int) bool {
	off := 0
	for _, tok := range toks {
		end := off + len(tok)
		if end > len(labels) || len(tok) == 0 {
			return false
		}
		var n [numFields]int
		for _, l := range labels[off:end] {
			n[l]++
		}
		best := Field(0)
		for f := Field(1); f < numFields; f++ {
			if n[f] > n[best] {
				best = f
			}
		}
		per[best]++
		off = end
	}
	return off == len(labels)
}

// proportional shares total out by the labels' byte counts, by largest
// remainder, so that the parts sum to total.
func proportional(labels []Field, total int) [numFields]int {
	var per, bytes [numFields]int
	if len(labels) == 0 {
		per[FieldSchema] = total
		return per
	}
	for _, l := range labels {
		bytes[l]++
	}
	rest := total
	var rem [numFields]int
	for f := range numFields {
		per[f] = total * bytes[f] / len(labels)
		rem[f] = total * bytes[f] % len(labels)
		rest -= per[f]
	}
	for ; rest > 0; rest-- {
		best := Field(0)
		for f := Field(1); f < numFields; f++ {
			if rem[f] > rem[best] {
				best = f
			}
		}
		per[best]++
		rem[best] = -1
	}
	return per
}

func fromArray(per [numFields]int) Breakdown {
	var b Breakdown
	for f := range numFields {
		*b.ptr(f) = per[f]
	}
	return b
}

// maxSchemaDepth bounds how deep the labeller follows subschemas; deeper
// ones count as schema.
const maxSchemaDepth = 512

// labelDeclaration labels every byte of a canonical declaration.
func labelDeclaration(b []byte) []Field {
	l := &labeller{b: b, labels: make([]Field, len(b))}
	for i := range l.labels {
		l.labels[i] = FieldSchema
	}
	l.object(l.ws(0), func(key string, i int) int {
		switch {
		case strings.EqualFold(key, "name") && l.at(i) == '"':
			return l.mark(i, FieldName)
		case strings.EqualFold(key, "description") && l.at(i) == '"':
			return l.mark(i, FieldDescription)
		case key == "parameters":
			return l.schema(i, 0)
		}
		return l.skip(i)
	})
	return l.labels
}

// labeller walks JSON bytes and labels value ranges. Its methods take the
// index of a value and return the index just past it, or -1 when the
// bytes are not valid JSON there (the walk then stops; the labels so far
// stay).
type labeller struct {
	b      []byte
	labels []Field
}

// at returns the byte at i, or 0 past the end.
func (l *labeller) at(i int) byte {
	if i < 0 || i >= len(l.b) {
		return 0
	}
	return l.b[i]
}

// ws skips white space.
func (l *labeller) ws(i int) int {
	for i >= 0 && i < len(l.b) {
		switch l.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// mark labels the value at i with f.
func (l *labeller) mark(i int, f Field) int {
	end := l.skip(i)
	if end < 0 {
		return -1
	}
	for j := i; j < end; j++ {
		l.labels[j] = f
	}
	return end
}

// skip returns the end of the value at i, without recursion.
func (l *labeller) skip(i int) int {
	if i < 0 || i >= len(l.b) {
		return -1
	}
	switch c := l.b[i]; {
	case c == '"':
		return l.str(i)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(l.b); j++ {
			switch l.b[j] {
			case '"':
				end := l.str(j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // number, true, false, null
		j := i
		for j < len(l.b) && !strings.ContainsRune(",:]} \t\n\r{[\"", rune(l.b[j])) {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// str returns the end of the string starting at i.
func (l *labeller) str(i int) int {
	for j := i + 1; j < len(l.b); j++ {
		switch l.b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// object walks the members of the object at i, calling member with each
// key and the index of its value; member returns the end of the value.
func (l *labeller) object(i int, member func(key string, value int) int) int {
	if l.at(i) != '{' {
		return l.skip(i)
	}
	i = l.ws(i + 1)
	if l.at(i) == '}' {
		return i + 1
	}
	for {
		if l.at(i) != '"' {
			return -1
		}
		end := l.str(i)
		if end < 0 {
			return -1
		}
		key := string(l.b[i+1 : end-1])
		if strings.ContainsRune(key, '\\') {
			if err := json.Unmarshal(l.b[i:end], &key); err != nil {
				return -1
			}
		}
		i = l.ws(end)
		if l.at(i) != ':' {
			return -1
		}
		if i = member(key, l.ws(i+1)); i < 0 {
			return -1
		}
		switch i = l.ws(i); l.at(i) {
		case ',':
			i = l.ws(i + 1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// array walks the elements of the array at i.
func (l *labeller) array(i int, elem func(value int) int) int {
	if l.at(i) != '[' {
		return l.skip(i)
	}
	i = l.ws(i + 1)
	if l.at(i) == ']' {
		return i + 1
	}
	for {
		if i = elem(i); i < 0 {
			return -1
		}
		switch i = l.ws(i); l.at(i) {
		case ',':
			i = l.ws(i + 1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// schema labels the JSON Schema at i.
func (l *labeller) schema(i, depth int) int {
	if depth >= maxSchemaDepth || l.at(i) != '{' {
		return l.skip(i)
	}
	sub := func(j int) int { return l.schema(j, depth+1) }
	return l.object(i, func(key string, v int) int {
		switch key {
		case "description":
			if l.at(v) == '"' {
				return l.mark(v, FieldParamDescriptions)
			}
		case "enum", "const":
			return l.mark(v, FieldEnums)
		case "default":
			return l.mark(v, FieldDefaults)
		case "examples", "example":
			return l.mark(v, FieldExamples)
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
			if l.at(v) == '{' {
				return l.object(v, func(_ string, w int) int { return sub(w) })
			}
		case "items", "additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties",
			"not", "if", "then", "else", "contains", "propertyNames":
			if l.at(v) == '[' { // items as a list of schemas (draft 4 to 2019-09)
				return l.array(v, sub)
			}
			return sub(v)
		case "allOf", "anyOf", "oneOf", "prefixItems":
			return l.array(v, sub)
		}
		return l.skip(v)
	})
}
