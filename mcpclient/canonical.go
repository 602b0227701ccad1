package mcpclient

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/toolshelf/toolshelf/internal/jsonscan"
)

// This file reads JSON bytes strictly (RFC 8259, valid UTF-8) and writes a
// value as the SDK's decoding into maps and marshal's encoding would leave
// it (canonical): objects with their keys sorted and each key once (the
// last one read wins), strings and numbers in encoding/json's form. The
// reader refuses anything it is unsure of; its callers then leave the bytes
// to the SDK, which reads them as it always did.

// maxCanonicalDepth bounds the nesting canonical writes; a deeper schema is
// left to the SDK. Each object is written once more where its keys go in
// order, so the work on a value is its size times its nesting at most:
// real schemas nest a few levels, a hostile one no more than this.
const maxCanonicalDepth = 64

// appendMarshal appends marshal's encoding of v, a string or a number
// whose bytes canonical cannot copy: it is always the SDK's library that
// writes what is not copied.
func appendMarshal(out []byte, v any) ([]byte, bool) {
	b, err := marshal(v)
	if err != nil {
		return out, false
	}
	return append(out, b...), true
}

// span is one member of an object appendCanonical writes: its key
// (decoded; of b when plain) and its value's canonical bytes in out.
type span struct {
	key        []byte
	plain      bool
	start, end int
}

// canonicalWriter holds what appendCanonical reuses: a stack of the
// members of the objects it is in, and a buffer to put an object's members
// in order.
type canonicalWriter struct {
	spans   []span
	scratch []byte
}

// appendCanonical appends the canonical form of the valid value at b[i]
// and returns the index after it; ok is false when the value nests deeper
// than depth, holds a number outside float64's range or a lone surrogate
// escape. An object's member values are written in the order read, then
// put in key order with their keys.
func (w *canonicalWriter) appendCanonical(out, b []byte, i, depth int) (_ []byte, end int, ok bool) {
	switch c := b[i]; {
	case c == '{':
		if depth <= 0 {
			return out, 0, false
		}
		start, base := len(out), len(w.spans)
		j := jsonscan.SkipSpace(b, i+1)
		if b[j] != '}' {
			for {
				kend, plain, _ := jsonscan.ScanString(b, j)
				key := b[j+1 : kend-1]
				if !plain {
					k, ok := jsonscan.DecodeString(b[j:kend], false)
					if !ok {
						return out, 0, false
					}
					key = []byte(k)
				}
				j = jsonscan.SkipSpace(b, jsonscan.SkipSpace(b, kend)+1)
				vstart := len(out)
				if out, j, ok = w.appendCanonical(out, b, j, depth-1); !ok {
					return out, 0, false
				}
				w.spans = append(w.spans, span{key: key, plain: plain, start: vstart, end: len(out)})
				if j = jsonscan.SkipSpace(b, j); b[j] == '}' {
					break
				}
				j = jsonscan.SkipSpace(b, j+1)
			}
		}
		ms := w.spans[base:]
		// Of equal keys the last read wins: a stable sort keeps them in
		// the order read.
		slices.SortStableFunc(ms, func(x, y span) int { return bytes.Compare(x.key, y.key) })
		w.scratch = append(w.scratch[:0], out[start:]...)
		out = append(out[:start], '{')
		first := true
		for k, m := range ms {
			if k+1 < len(ms) && bytes.Equal(ms[k+1].key, m.key) {
				continue
			}
			if !first {
				out = append(out, ',')
			}
			first = false
			if m.plain {
				out = append(out, '"')
				out = append(out, m.key...)
				out = append(out, '"')
			} else if out, ok = appendMarshal(out, string(m.key)); !ok {
				return out, 0, false
			}
			out = append(out, ':')
			out = append(out, w.scratch[m.start-start:m.end-start]...)
		}
		w.spans = w.spans[:base]
		return append(out, '}'), j + 1, true
	case c == '[':
		if depth <= 0 {
			return out, 0, false
		}
		out = append(out, '[')
		j := jsonscan.SkipSpace(b, i+1)
		for n := 0; b[j] != ']'; n++ {
			if n > 0 {
				out = append(out, ',')
			}
			if out, j, ok = w.appendCanonical(out, b, j, depth-1); !ok {
				return out, 0, false
			}
			if j = jsonscan.SkipSpace(b, j); b[j] == ',' {
				j = jsonscan.SkipSpace(b, j+1)
			}
		}
		return append(out, ']'), j + 1, true
	case c == '"':
		end, plain, _ := jsonscan.ScanString(b, i)
		if plain {
			return append(out, b[i:end]...), end, true
		}
		s, ok := jsonscan.DecodeString(b[i:end], false)
		if !ok {
			return out, 0, false
		}
		out, ok = appendMarshal(out, s)
		return out, end, ok
	case c == '-' || (c >= '0' && c <= '9'):
		end, plain, _ := jsonscan.ScanNumber(b, i)
		if plain {
			return append(out, b[i:end]...), end, true
		}
		f, err := strconv.ParseFloat(string(b[i:end]), 64)
		if err != nil {
			return out, 0, false
		}
		out, ok = appendMarshal(out, f)
		return out, end, ok
	case c == 'f':
		return append(out, "false"...), i + 5, true
	}
	return append(out, b[i:i+4]...), i + 4, true // true, null
}

// canonical returns the canonical form of one JSON value, or ok false when
// it is not valid or appendCanonical refuses it.
func canonical(b []byte) ([]byte, bool) {
	i := jsonscan.SkipSpace(b, 0)
	end, ok := jsonscan.ScanValue(b, i, maxCanonicalDepth)
	if !ok || jsonscan.SkipSpace(b, end) != len(b) {
		return nil, false
	}
	var w canonicalWriter
	return w.canonical(b[i:end])
}

// canonical is canonical for a value ScanValue found valid, with no white
// space around it. The writer's buffers serve the next value too.
func (w *canonicalWriter) canonical(b []byte) ([]byte, bool) {
	out, _, ok := w.appendCanonical(make([]byte, 0, len(b)), b, 0, maxCanonicalDepth)
	return out, ok
}
