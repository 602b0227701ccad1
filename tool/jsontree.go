package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// node is a JSON value whose objects keep their members in order, so that
// a schema toolshelf rewrites keeps the layout its author chose, and whose
// scalars keep the bytes they were written with.
type node struct {
	kind byte     // '{' for an object, '[' for an array, 0 for a scalar
	raw  []byte   // a scalar's compact text
	keys []string // an object's member names, in order
	vals []*node  // an object's member values, or an array's elements
}

// errNotJSON is returned by parseNode for what is not one JSON value.
var errNotJSON = errors.New("not valid JSON")

// parseNode reads one JSON value (white space around it allowed). A name
// written twice in one object keeps its first place and its last value,
// as decoders read it.
func parseNode(data []byte) (*node, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return nil, errNotJSON
	}
	p := parser{data: b.Bytes()}
	n, err := p.value()
	if err != nil || p.i != len(p.data) {
		return nil, errNotJSON
	}
	return n, nil
}

// parser reads compact, valid JSON.
type parser struct {
	data []byte
	i    int
}

func (p *parser) value() (*node, error) {
	if p.i >= len(p.data) {
		return nil, errNotJSON
	}
	switch p.data[p.i] {
	case '{':
		p.i++
		n := &node{kind: '{'}
		if p.peek('}') {
			return n, nil
		}
		for {
			start := p.i
			if err := p.skipString(); err != nil {
				return nil, err
			}
			var key string
			if err := json.Unmarshal(p.data[start:p.i], &key); err != nil {
				return nil, errNotJSON
			}
			if !p.peek(':') {
				return nil, errNotJSON
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			if i := n.index(key); i >= 0 {
				n.vals[i] = v
			} else {
				n.keys, n.vals = append(n.keys, key), append(n.vals, v)
			}
			if p.peek('}') {
				return n, nil
			}
			if !p.peek(',') {
				return nil, errNotJSON
			}
		}
	case '[':
		p.i++
		n := &node{kind: '['}
		if p.peek(']') {
			return n, nil
		}
		for {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
			if p.peek(']') {
				return n, nil
			}
			if !p.peek(',') {
				return nil, errNotJSON
			}
		}
	case '"':
		start := p.i
		if err := p.skipString(); err != nil {
			return nil, err
		}
		return &node{raw: p.data[start:p.i]}, nil
	}
	start := p.i
	for p.i < len(p.data) && !strings.ContainsRune(",:]}", rune(p.data[p.i])) {
		p.i++
	}
	return &node{raw: p.data[start:p.i]}, nil
}

// peek consumes c when it comes next.
func (p *parser) peek(c byte) bool {
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// skipString moves past the string that starts at p.i.
func (p *parser) skipString() error {
	if p.i >= len(p.data) || p.data[p.i] != '"' {
		return errNotJSON
	}
	for p.i++; p.i < len(p.data); p.i++ {
		switch p.data[p.i] {
		case '\\':
			p.i++
		case '"':
			p.i++
			return nil
		}
	}
	return errNotJSON
}

// index returns the position of the member named key, or -1.
func (n *node) index(key string) int {
	if n.kind != '{' {
		return -1
	}
	for i, k := range n.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// get returns the value of the member named key, or nil.
func (n *node) get(key string) *node {
	if i := n.index(key); i >= 0 {
		return n.vals[i]
	}
	return nil
}

// remove deletes the member at position i.
func (n *node) remove(i int) {
	n.keys = append(n.keys[:i], n.keys[i+1:]...)
	n.vals = append(n.vals[:i], n.vals[i+1:]...)
}

// insert puts a member at position i.
func (n *node) insert(i int, key string, v *node) {
	n.keys = append(n.keys[:i], append([]string{key}, n.keys[i:]...)...)
	n.vals = append(n.vals[:i], append([]*node{v}, n.vals[i:]...)...)
}

// text returns the string a string scalar holds.
func (n *node) text() (string, bool) {
	if n == nil || n.kind != 0 || len(n.raw) == 0 || n.raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(n.raw, &s) != nil {
		return "", false
	}
	return s, true
}

// boolean returns the value of a true or false scalar.
func (n *node) boolean() (value, ok bool) {
	if n == nil || n.kind != 0 {
		return false, false
	}
	switch string(n.raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// isNumber reports whether n is a number.
func (n *node) isNumber() bool {
	return n != nil && n.kind == 0 && len(n.raw) > 0 && (n.raw[0] == '-' || n.raw[0] >= '0' && n.raw[0] <= '9')
}

// stringNode returns a string scalar.
func stringNode(s string) *node {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return &node{raw: bytes.TrimSuffix(b.Bytes(), []byte("\n"))}
}

// write appends n's compact JSON to b.
func (n *node) write(b *bytes.Buffer) {
	switch n.kind {
	case '{':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(stringNode(k).raw)
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	default:
		b.Write(n.raw)
	}
}

// bytes returns n's compact JSON.
func (n *node) bytes() []byte {
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes()
}
