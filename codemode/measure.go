package codemode

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/dop251/goja"
)

// Bounds on the values the runner itself turns into JSON: the script's
// return value, console arguments and tool arguments. goja's
// JSON.stringify runs natively, where neither the time limit's interrupt
// nor the memory guard reaches, and its cost grows with the square of the
// nesting (a check for cycles per level, and, for the indented return
// value, the indentation of every line): a value nested 200,000 deep
// ended the process before these bounds.
const (
	// maxValueDepth is the deepest nesting written.
	maxValueDepth = 100
	// maxArgumentBytes bounds the JSON of one tool call's arguments.
	maxArgumentBytes = 16 << 20
)

// overBound says which bound a value passed.
type overBound int

const (
	withinBounds overBound = iota
	overDepth              // nested deeper than maxValueDepth
	overBytes              // its JSON would pass the bytes allowed
)

// errOverBound is what the replacer throws to stop JSON.stringify.
var errOverBound = errors.New("codemode: value over a bound")

// writeJSON writes v as JSON.stringify does, indented by indent spaces a
// level, within maxValueDepth and maxBytes. A replacer that returns every
// value as it is sees what stringify writes (after toJSON, through
// proxies, one read of each getter) and stops it, by throwing, at the
// first value past a bound or when the script is stopped; the replacer
// counts the bytes from below (strings without their escapes), so it
// stops nothing that fits. It returns the text (undefined when stringify
// writes nothing), or the bound passed, or the error stringify raised.
func (s *script) writeJSON(v goja.Value, maxBytes, indent int) (goja.Value, overBound, error) {
	w := &jsonWriter{s: s, maxBytes: maxBytes, indent: indent}
	// A toJSON or getter may log, which writes JSON inside this write.
	outer := s.json
	s.json = w
	defer func() { s.json = outer }()
	if s.replacer == nil {
		s.replacer = s.vm.ToValue(func(call goja.FunctionCall) goja.Value { return s.json.replace(call) })
	}
	var space goja.Value = goja.Undefined()
	if indent > 0 {
		space = s.vm.ToValue(indent)
	}
	j, err := s.stringify(goja.Undefined(), v, s.replacer, space)
	if w.over != withinBounds {
		return nil, w.over, nil
	}
	if err != nil {
		if stop := s.stopReason(); stop != nil {
			return nil, withinBounds, stop
		}
		return nil, withinBounds, err
	}
	return j, withinBounds, nil
}

var proxyType = reflect.TypeOf(goja.Proxy{})

// isArray reports whether stringify writes x as an array: an Array, or a
// proxy whose target is one.
func (s *script) isArray(x *goja.Object) bool {
	switch {
	case x.ClassName() == "Array":
		return true
	case x.ExportType() != proxyType:
		return false
	}
	r, err := s.arrayIsArray(goja.Undefined(), x)
	return err == nil && r.ToBoolean()
}

// jsonWriter is the state of one writeJSON: its bounds, the objects open
// around the value being written, outermost first, and the bytes counted.
type jsonWriter struct {
	s        *script
	maxBytes int
	indent   int
	holders  []openValue
	bytes    int
	calls    int
	over     overBound
}

// openValue is an object stringify is writing the members of.
type openValue struct {
	obj   *goja.Object
	array bool // its members are written without keys
}

// replace is the replacer's body: it returns every value as it is.
func (w *jsonWriter) replace(call goja.FunctionCall) goja.Value {
	val := call.Argument(1)
	if w.calls++; w.calls%1024 == 0 {
		select {
		case <-w.s.stopped:
			panic(w.s.vm.NewGoError(w.s.stopReason()))
		default:
		}
	}
	// stringify goes depth first: the holder is the innermost open
	// object once those written since are closed.
	holder, _ := call.This.(*goja.Object)
	for n := len(w.holders); n > 0 && !w.holders[n-1].obj.SameAs(holder); n = len(w.holders) {
		w.holders = w.holders[:n-1]
	}
	depth := len(w.holders)
	inArray := depth > 0 && w.holders[depth-1].array
	// What JSON leaves out: undefined, functions and symbols are
	// null in an array and no member at all in an object.
	_, isFn := goja.AssertFunction(val)
	_, isSym := val.(*goja.Symbol)
	switch {
	case goja.IsUndefined(val) || isFn || isSym:
		if inArray {
			w.bytes += 1 + w.indent*depth + 4
		}
	default:
		switch {
		case depth == 0: // the value itself
		case inArray:
			w.bytes += 1 + w.indent*depth // a comma, or the line's indentation
		default:
			w.bytes += len(call.Argument(0).String()) + 3 + w.indent*depth // "key":
		}
		x, isObj := val.(*goja.Object)
		str, isStr := val.(goja.String)
		switch {
		case isStr:
			w.bytes += str.Length()
		case !isObj || x.ClassName() == "String" || x.ClassName() == "Number" || x.ClassName() == "Boolean":
			w.bytes += len(val.String()) // a primitive, or a wrapper written as one
		case depth >= maxValueDepth:
			w.over = overDepth
			panic(w.s.vm.NewGoError(errOverBound))
		default:
			w.holders = append(w.holders, openValue{obj: x, array: w.s.isArray(x)})
		}
	}
	if w.bytes > w.maxBytes {
		w.over = overBytes
		panic(w.s.vm.NewGoError(errOverBound))
	}
	return val
}

// tooDeep says what is wrong with a value nested past maxValueDepth.
func tooDeep(what string) string {
	return fmt.Sprintf("%s is nested deeper than %d levels, more than the runner writes as JSON; flatten it (or keep only the parts needed)", what, maxValueDepth)
}
