package search

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
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

// schemaReader decodes a schema within the caps.
type schemaReader struct {
	dec  *json.Decoder
	left int  // values that may still be kept
	cut  bool // the data was cut at maxSchemaBytes
}

// parseSchema decodes JSON keeping key order. Objects list their keys the
// way JavaScript does: canonical array-index keys ("0", "7") first in
// numeric order, then the others in insertion order; a repeated key keeps
// its first position and takes the last value. It reads at most
// maxSchemaBytes and keeps at most maxSchemaValues values: past a cap it
// returns what it read until then, every value complete. Time and memory
// grow linearly with what it reads.
func parseSchema(data []byte) (*node, error) {
	r := schemaReader{left: maxSchemaValues}
	if len(data) > maxSchemaBytes {
		data, r.cut = data[:maxSchemaBytes], true
	}
	r.dec = json.NewDecoder(bytes.NewReader(data))
	r.dec.UseNumber()
	n, err := r.value(0)
	if err != nil && n != nil && (errors.Is(err, errSchemaFull) || r.cut) {
		return n, nil // a cap stopped the reader: keep the front
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// value reads one value. On an error it returns the part of an object or
// array read before it (complete members only) with the error.
func (r *schemaReader) value(depth int) (*node, error) {
	if r.left <= 0 {
		return nil, errSchemaFull
	}
	tok, err := r.dec.Token()
	if err != nil {
		return nil, err
	}
	r.left--
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxSchemaDepth {
			return &node{kind: 'x'}, skipValue(r.dec)
		}
		if t == '{' {
			n := &node{kind: 'o'}
			err := r.members(n, depth)
			orderIndexKeysFirst(n)
			return n, err
		}
		n := &node{kind: 'a'}
		for r.dec.More() {
			v, err := r.value(depth + 1)
			if v != nil {
				n.elems = append(n.elems, v)
			}
			if err != nil {
				return n, err
			}
		}
		_, err := r.dec.Token()
		return n, err
	case string:
		return &node{kind: 's', str: t}, nil
	}
	return &node{kind: 'x'}, nil
}

// members reads an object's members after its opening brace.
func (r *schemaReader) members(n *node, depth int) error {
	for r.dec.More() {
		kt, err := r.dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		v, err := r.value(depth + 1)
		if v != nil {
			n.set(key, v)
		}
		if err != nil {
			return err
		}
	}
	_, err := r.dec.Token()
	return err
}

// skipValue reads the rest of an object or array whose opening delimiter
// was just read, without recursion.
func skipValue(dec *json.Decoder) error {
	for open := 1; open > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				open++
			} else {
				open--
			}
		}
	}
	return nil
}

// orderIndexKeysFirst moves canonical array-index keys to the front in
// numeric order, as JavaScript objects enumerate them.
func orderIndexKeysFirst(n *node) {
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
