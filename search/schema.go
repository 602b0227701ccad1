package search

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// node is a decoded JSON value that keeps object key order, which the
// reference's schema text depends on.
type node struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'x' anything else
	str   string
	keys  []string
	vals  []*node // object values, by key position
	elems []*node // array elements
}

// get returns the value of an object's key, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	if i := slices.Index(n.keys, key); i >= 0 {
		return n.vals[i]
	}
	return nil
}

// maxSchemaDepth bounds the nesting the schema reader keeps: deeper values
// are read but skipped, so hostile schemas cannot exhaust the stack, and the
// rest of the schema stays searchable.
const maxSchemaDepth = 64

// parseSchema decodes JSON keeping key order. Objects list their keys the
// way JavaScript does: canonical array-index keys ("0", "7") first in
// numeric order, then the others in insertion order; a repeated key keeps
// its first position and takes the last value.
func parseSchema(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeNode(dec, 0)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func decodeNode(dec *json.Decoder, depth int) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxSchemaDepth {
			return &node{kind: 'x'}, skipValue(dec)
		}
		if t == '{' {
			n := &node{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				v, err := decodeNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if i := slices.Index(n.keys, key); i >= 0 {
					n.vals[i] = v
				} else {
					n.keys = append(n.keys, key)
					n.vals = append(n.vals, v)
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			orderIndexKeysFirst(n)
			return n, nil
		}
		n := &node{kind: 'a'}
		for dec.More() {
			v, err := decodeNode(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: 's', str: t}, nil
	}
	return &node{kind: 'x'}, nil
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
}

// arrayIndex reports whether k is a canonical array index: a decimal
// integer below 2^32-1 without leading zeros.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	v, err := strconv.ParseUint(k, 10, 64)
	if err != nil || v >= 1<<32-1 {
		return 0, false
	}
	return v, true
}
