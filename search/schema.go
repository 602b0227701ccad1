package search

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Caps on what the rankers analyse of one document. A document past a cap
// is indexed from its front: the text and schema values before the cap are
// searchable, the rest is not. The caps are far above real tools (the
// largest of the built-in catalog's 1,564 tools has a 7 KB description and
// a 12 KB schema of 321 values) and bound the time and memory that one
// generated or hostile definition costs the index, whatever its size.
const (
	// maxFieldText is the bytes of text analysed per field: the tool's
	// name (with its operations), the description (first sentence and
	// rest together), the parameter text (every property name, title,
	// description and enum value of the schema together), the server's
	// name and the server's description. The reference ranker applies it
	// to each part of its one text: the description, the schema text,
	// the namespace's description and its instructions.
	maxFieldText = 64 << 10
	// maxSchemaBytes is the bytes of a parameter schema read.
	maxSchemaBytes = 1 << 20
	// maxSchemaValues is the values (objects, arrays, strings and the
	// rest) of a parameter schema kept.
	maxSchemaValues = 50_000
	// maxSchemaDepth bounds the nesting the schema reader keeps: deeper
	// values are read but skipped, so hostile schemas cannot exhaust the
	// stack, and the rest of the schema stays searchable.
	maxSchemaDepth = 64
)

// node is a decoded JSON value that keeps object key order, which the
// reference's schema text depends on.
type node struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'x' anything else
	str   string
	keys  []string
	vals  []*node // object values, by key position
	elems []*node // array elements
	// index maps keys to positions in objects of more than indexFrom
	// keys, so that reading and looking up a key cost the same whatever
	// the object's size.
	index map[string]int
}

// indexFrom is the number of keys past which an object keeps an index.
const indexFrom = 8

// find returns the position of an object's key, or -1.
func (n *node) find(key string) int {
	if n.index != nil {
		if i, ok := n.index[key]; ok {
			return i
		}
		return -1
	}
	return slices.Index(n.keys, key)
}

// set gives an object's key a value; a repeated key keeps its first
// position.
func (n *node) set(key string, v *node) {
	if i := n.find(key); i >= 0 {
		n.vals[i] = v
		return
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
	switch {
	case n.index != nil:
		n.index[key] = len(n.keys) - 1
	case len(n.keys) > indexFrom:
		n.reindex()
	}
}

// reindex rebuilds the key index of a large object.
func (n *node) reindex() {
	if len(n.keys) <= indexFrom {
		n.index = nil
		return
	}
	n.index = make(map[string]int, len(n.keys))
	for i, k := range n.keys {
		n.index[k] = i
	}
}

// get returns the value of an object's key, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	if i := n.find(key); i >= 0 {
		return n.vals[i]
	}
	return nil
}

// errSchemaFull stops the schema reader at maxSchemaValues.
var errSchemaFull = errors.New("schema value cap reached")

// errSchemaEnd is the end of a schema's bytes inside a value.
var errSchemaEnd = errors.New("unexpected end of JSON input")

// schemaCaps bounds one schema read: the bytes read, the values kept and
// the nesting kept.
type schemaCaps struct {
	bytes, values, depth int
}

// defaultSchemaCaps are the caps the rankers read schemas with.
var defaultSchemaCaps = schemaCaps{bytes: maxSchemaBytes, values: maxSchemaValues, depth: maxSchemaDepth}

// readState is where the schema reader's tokenizer is in the value
// structure, the states encoding/json's Decoder.Token goes through.
type readState uint8

const (
	readTop         readState = iota // before the top-level value
	readArrayStart                   // after [
	readArrayValue                   // after a comma in an array
	readArrayComma                   // after an array element
	readObjectStart                  // after {
	readObjectKey                    // after a comma in an object
	readObjectColon                  // after an object key
	readObjectValue                  // after a colon
	readObjectComma                  // after an object member's value
)

// schemaToken is one token of a schema: a delimiter ({ } [ ]), a string
// ('s', with its decoded text) or another scalar ('x').
type schemaToken struct {
	kind byte
	str  string
}

// schemaReader decodes a schema within the caps. Its tokenizer reads the
// schema in memory and takes the tokens encoding/json's Decoder.Token
// takes, refusing what it refuses at the same token and decoding strings
// the same way (invalid UTF-8 and unpaired surrogates become U+FFFD), so
// that the tree, and the front kept past a cap, are the same
// (FuzzSchemaReaderOracle compares the two). It allocates little per
// value: one copy of the schema, from which strings without escapes are
// cut, and nodes from slabs.
type schemaReader struct {
	src   string
	pos   int
	state readState
	stack []readState // the states to return to after each open value
	left  int         // values that may still be kept
	depth int         // the nesting kept
	cut   bool        // the data was cut at the byte cap
	slab  []node
	arena *nodeArena // when not nil, where the nodes come from
}

// nodeArena lends schema readers their nodes, in chunks of arenaChunk,
// and takes them all back at once (reset), so that a worker that reads
// one schema after another allocates nodes only for the largest. A node
// lent again keeps the capacity of its key, value and element slices.
type nodeArena struct {
	chunks [][]node
	next   int // the chunk being filled
}

// arenaChunk is how many nodes a nodeArena allocates at a time.
const arenaChunk = 512

// get returns a node of the given kind.
func (a *nodeArena) get(kind byte) *node {
	for ; ; a.next++ {
		if a.next == len(a.chunks) {
			a.chunks = append(a.chunks, make([]node, 0, arenaChunk))
		}
		if c := &a.chunks[a.next]; len(*c) < cap(*c) {
			*c = (*c)[:len(*c)+1]
			n := &(*c)[len(*c)-1]
			*n = node{kind: kind, keys: n.keys[:0], vals: n.vals[:0], elems: n.elems[:0]}
			return n
		}
	}
}

// reset takes back every node the arena has lent; none may be used after.
func (a *nodeArena) reset() {
	for i := range a.chunks[:min(a.next+1, len(a.chunks))] {
		a.chunks[i] = a.chunks[i][:0]
	}
	a.next = 0
}

// parseSchema decodes JSON keeping key order. Objects list their keys the
// way JavaScript does: canonical array-index keys ("0", "7") first in
// numeric order, then the others in insertion order; a repeated key keeps
// its first position and takes the last value. It reads at most
// maxSchemaBytes and keeps at most maxSchemaValues values: past a cap it
// returns what it read until then, every value complete. Time and memory
// grow linearly with what it reads. What follows the top-level value is
// not read.
func parseSchema(data []byte) (*node, error) {
	return parseSchemaCaps(data, defaultSchemaCaps, nil)
}

// parseSchemaCaps is parseSchema within the given caps, with nodes from
// arena when it is not nil.
func parseSchemaCaps(data []byte, caps schemaCaps, arena *nodeArena) (*node, error) {
	r := schemaReader{left: caps.values, depth: caps.depth, arena: arena}
	if len(data) > caps.bytes {
		data, r.cut = data[:caps.bytes], true
	}
	r.src = string(data)
	n, err := r.value(0)
	if err != nil && n != nil && (errors.Is(err, errSchemaFull) || r.cut) {
		return n, nil // a cap stopped the reader: keep the front
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// newNode returns a node of the given kind from the reader's slab.
func (r *schemaReader) newNode(kind byte) *node {
	if r.arena != nil {
		return r.arena.get(kind)
	}
	if len(r.slab) == cap(r.slab) {
		r.slab = make([]node, 0, min(max(2*cap(r.slab), 8), 512))
	}
	r.slab = append(r.slab, node{kind: kind})
	return &r.slab[len(r.slab)-1]
}

// value reads one value. On an error it returns the part of an object or
// array read before it (complete members only) with the error.
func (r *schemaReader) value(depth int) (*node, error) {
	if r.left <= 0 {
		return nil, errSchemaFull
	}
	tok, err := r.token()
	if err != nil {
		return nil, err
	}
	r.left--
	switch tok.kind {
	case '{', '[':
		if depth >= r.depth {
			return r.newNode('x'), r.skipValue()
		}
		if tok.kind == '{' {
			n := r.newNode('o')
			err := r.members(n, depth)
			orderIndexKeysFirst(n)
			return n, err
		}
		n := r.newNode('a')
		for r.more() {
			v, err := r.value(depth + 1)
			if v != nil {
				n.elems = append(n.elems, v)
			}
			if err != nil {
				return n, err
			}
		}
		_, err := r.token()
		return n, err
	case 's':
		n := r.newNode('s')
		n.str = tok.str
		return n, nil
	}
	return r.newNode('x'), nil
}

// members reads an object's members after its opening brace.
func (r *schemaReader) members(n *node, depth int) error {
	for r.more() {
		kt, err := r.token()
		if err != nil {
			return err
		}
		v, err := r.value(depth + 1)
		if v != nil {
			n.set(kt.str, v)
		}
		if err != nil {
			return err
		}
	}
	_, err := r.token()
	return err
}

// skipValue reads the rest of an object or array whose opening delimiter
// was just read, without recursion.
func (r *schemaReader) skipValue() error {
	for open := 1; open > 0; {
		tok, err := r.token()
		if err != nil {
			return err
		}
		switch tok.kind {
		case '{', '[':
			open++
		case '}', ']':
			open--
		}
	}
	return nil
}

// peek returns the next byte that is not white space, without reading it.
func (r *schemaReader) peek() (byte, error) {
	for ; r.pos < len(r.src); r.pos++ {
		switch c := r.src[r.pos]; c {
		case ' ', '\t', '\r', '\n':
		default:
			return c, nil
		}
	}
	return 0, errSchemaEnd
}

// more reports whether the current array or object has another element.
func (r *schemaReader) more() bool {
	c, err := r.peek()
	return err == nil && c != ']' && c != '}'
}

// valueAllowed reports whether a value may start here.
func (r *schemaReader) valueAllowed() bool {
	switch r.state {
	case readTop, readArrayStart, readArrayValue, readObjectValue:
		return true
	}
	return false
}

// valueEnd moves past a value just read.
func (r *schemaReader) valueEnd() {
	switch r.state {
	case readArrayStart, readArrayValue:
		r.state = readArrayComma
	case readObjectValue:
		r.state = readObjectComma
	}
}

// syntaxError reports byte c where it may not be.
func (r *schemaReader) syntaxError(c byte) error {
	return fmt.Errorf("invalid character %q at offset %d of the schema", c, r.pos)
}

// token reads the next token, checking that it may come where it does.
func (r *schemaReader) token() (schemaToken, error) {
	for {
		c, err := r.peek()
		if err != nil {
			return schemaToken{}, err
		}
		switch c {
		case '[', '{':
			if !r.valueAllowed() {
				return schemaToken{}, r.syntaxError(c)
			}
			r.pos++
			r.stack = append(r.stack, r.state)
			r.state = readArrayStart
			if c == '{' {
				r.state = readObjectStart
			}
			return schemaToken{kind: c}, nil
		case ']', '}':
			open, comma := readArrayStart, readArrayComma
			if c == '}' {
				open, comma = readObjectStart, readObjectComma
			}
			if r.state != open && r.state != comma {
				return schemaToken{}, r.syntaxError(c)
			}
			r.pos++
			r.state = r.stack[len(r.stack)-1]
			r.stack = r.stack[:len(r.stack)-1]
			r.valueEnd()
			return schemaToken{kind: c}, nil
		case ':':
			if r.state != readObjectColon {
				return schemaToken{}, r.syntaxError(c)
			}
			r.pos++
			r.state = readObjectValue
			continue
		case ',':
			switch r.state {
			case readArrayComma:
				r.state = readArrayValue
			case readObjectComma:
				r.state = readObjectKey
			default:
				return schemaToken{}, r.syntaxError(c)
			}
			r.pos++
			continue
		case '"':
			if r.state == readObjectStart || r.state == readObjectKey {
				s, err := r.str()
				if err != nil {
					return schemaToken{}, err
				}
				r.state = readObjectColon
				return schemaToken{kind: 's', str: s}, nil
			}
		}
		if !r.valueAllowed() {
			return schemaToken{}, r.syntaxError(c)
		}
		tok, err := r.scalar(c)
		if err != nil {
			return schemaToken{}, err
		}
		r.valueEnd()
		return tok, nil
	}
}

// scalar reads a string, number or literal starting with c.
func (r *schemaReader) scalar(c byte) (schemaToken, error) {
	switch {
	case c == '"':
		s, err := r.str()
		return schemaToken{kind: 's', str: s}, err
	case c == '-' || isDigitASCII(c):
		return schemaToken{kind: 'x'}, r.number()
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if lit[0] != c {
			continue
		}
		rest := r.src[r.pos:]
		if strings.HasPrefix(rest, lit) {
			r.pos += len(lit)
			return schemaToken{kind: 'x'}, nil
		}
		if strings.HasPrefix(lit, rest) {
			return schemaToken{}, errSchemaEnd
		}
		break
	}
	return schemaToken{}, r.syntaxError(c)
}

// number reads a JSON number: what follows it ends it, whatever it is.
func (r *schemaReader) number() error {
	s, i := r.src, r.pos
	digits := func() error {
		if i >= len(s) {
			return errSchemaEnd
		}
		if !isDigitASCII(s[i]) {
			return fmt.Errorf("invalid character %q in a number at offset %d of the schema", s[i], i)
		}
		for i < len(s) && isDigitASCII(s[i]) {
			i++
		}
		return nil
	}
	if s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if err := digits(); err != nil {
		return err
	}
	if i < len(s) && s[i] == '.' {
		i++
		if err := digits(); err != nil {
			return err
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if err := digits(); err != nil {
			return err
		}
	}
	r.pos = i
	return nil
}

// str reads a string whose opening quote is at r.pos and returns its
// text: cut from the schema when it has no escapes and is valid UTF-8,
// decoded otherwise.
func (r *schemaReader) str() (string, error) {
	s := r.src
	start := r.pos + 1
	plain := true
	for i := start; ; {
		if i >= len(s) {
			return "", errSchemaEnd
		}
		switch c := s[i]; {
		case c == '"':
			r.pos = i + 1
			if plain {
				return s[start:i], nil
			}
			return unquote(s[start:i]), nil
		case c == '\\':
			plain = false
			i++
			if i >= len(s) {
				return "", errSchemaEnd
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				for range 4 {
					i++
					if i >= len(s) {
						return "", errSchemaEnd
					}
					if hexValue(s[i]) < 0 {
						return "", fmt.Errorf("invalid character %q in a \\u escape at offset %d of the schema", s[i], i)
					}
				}
				i++
			default:
				return "", fmt.Errorf("invalid escape \\%c at offset %d of the schema", s[i], i)
			}
		case c < ' ':
			return "", fmt.Errorf("control character %#x in a string at offset %d of the schema", c, i)
		case c < utf8.RuneSelf:
			i++
		default:
			rr, size := utf8.DecodeRuneInString(s[i:])
			if rr == utf8.RuneError && size == 1 {
				plain = false
			}
			i += size
		}
	}
}

// hexValue returns the value of a hexadecimal digit, or -1.
func hexValue(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hex4 returns the value of the \uXXXX escape at the front of s, or -1.
func hex4(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var v rune
	for i := 2; i < 6; i++ {
		d := hexValue(s[i])
		if d < 0 {
			return -1
		}
		v = v*16 + d
	}
	return v
}

// unquote decodes the text of a valid JSON string (between its quotes)
// the way encoding/json does: escapes decoded, a surrogate pair combined,
// an unpaired surrogate and each byte of invalid UTF-8 replaced by U+FFFD.
func unquote(s string) string {
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch e := s[i+1]; e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[i:])
				i += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, hex4(s[i:])); dec != unicode.ReplacementChar {
						i += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // " \ /
				b = append(b, e)
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			rr, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, rr)
			i += size
		}
	}
	return string(b)
}

// orderIndexKeysFirst moves canonical array-index keys to the front in
// numeric order, as JavaScript objects enumerate them.
func orderIndexKeysFirst(n *node) {
	if !slices.ContainsFunc(n.keys, func(k string) bool { _, ok := arrayIndex(k); return ok }) {
		return
	}
	type kv struct {
		idx uint64
		key string
		val *node
	}
	var idx, rest []kv
	for i, k := range n.keys {
		if v, ok := arrayIndex(k); ok {
			idx = append(idx, kv{v, k, n.vals[i]})
		} else {
			rest = append(rest, kv{0, k, n.vals[i]})
		}
	}
	if len(idx) == 0 {
		return
	}
	slices.SortStableFunc(idx, func(a, b kv) int {
		switch {
		case a.idx < b.idx:
			return -1
		case a.idx > b.idx:
			return 1
		}
		return 0
	})
	n.keys, n.vals = n.keys[:0], n.vals[:0]
	for _, e := range append(idx, rest...) {
		n.keys = append(n.keys, e.key)
		n.vals = append(n.vals, e.val)
	}
	n.reindex()
}

// arrayIndex reports whether k is a canonical array index: a decimal
// integer below 2^32-1 without leading zeros.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || k[0] < '0' || k[0] > '9' || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	v, err := strconv.ParseUint(k, 10, 64)
	if err != nil || v >= 1<<32-1 {
		return 0, false
	}
	return v, true
}

// textBudget is what is left of a field's maxFieldText.
type textBudget int

// newTextBudget returns a full budget.
func newTextBudget() *textBudget {
	b := textBudget(maxFieldText)
	return &b
}

// take returns the front of s that the budget still allows, and spends it.
func (b *textBudget) take(s string) string {
	s = clipText(s, int(*b))
	*b -= textBudget(len(s))
	return s
}

// clipText returns the longest front of s of at most n bytes that ends on
// a rune boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
