package codemode

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// Bounds on the values the runner itself turns into JSON: the script's
// return value, console arguments and tool arguments. goja's
// JSON.stringify runs natively, where neither the time limit's interrupt
// nor the memory guard reaches, and its cost grows with the square of the
// nesting (a check for cycles per level, and, for the indented return
// value, the indentation of every line): a value nested 200,000 deep
// ended the process before these bounds. The runner measures a value
// first, stopping when the script is stopped, and writes it only when it
// is within them.
const (
	// maxValueDepth is the deepest nesting written.
	maxValueDepth = 100
	// maxArgumentBytes bounds the JSON of one tool call's arguments.
	maxArgumentBytes = 16 << 20
)

// Outcomes of measure besides "" (within the bounds).
const (
	overDepth = "depth"
	overBytes = "bytes"
)

// measurer walks one value the way JSON.stringify does: toJSON first,
// arrays (and typed arrays) by index, other objects by their own
// enumerable keys, leaving functions, symbols and undefined out of
// objects. It counts the bytes the JSON would take, indented by step
// spaces a level, from below: strings without their escapes, numbers as
// one byte. A value met again on its own path is a cycle, which it leaves
// to JSON.stringify to report.
type measurer struct {
	s        *script
	maxBytes int
	step     int
	bytes    int
	nodes    int
	onPath   map[*goja.Object]bool
}

// measure reports whether the runner may write v as JSON indented by step
// spaces a level within maxBytes: "" when it may, overDepth or overBytes
// when it is over a bound. It returns an error when the script was
// stopped meanwhile or a getter or toJSON threw.
func (s *script) measure(v goja.Value, maxBytes, step int) (over string, err error) {
	if _, ok := v.(*goja.Object); !ok {
		return "", nil
	}
	defer func() {
		// Reading a property runs getters, toJSON and proxy traps, which
		// may throw or be interrupted: goja panics with those.
		switch r := recover().(type) {
		case nil:
		case *goja.Exception:
			err = r
		case *goja.InterruptedError:
			err = r
		default:
			panic(r)
		}
	}()
	m := measurer{s: s, maxBytes: maxBytes, step: step, onPath: make(map[*goja.Object]bool)}
	return m.walk(v, "", 0)
}

func (m *measurer) walk(v goja.Value, key string, depth int) (string, error) {
	if m.nodes++; m.nodes%1024 == 0 {
		select {
		case <-m.s.stopped:
			return "", m.s.stopReason()
		default:
		}
	}
	obj, ok := v.(*goja.Object)
	if ok {
		if fn, isFn := goja.AssertFunction(obj.Get("toJSON")); isFn {
			r, err := fn(obj, m.s.vm.ToValue(key))
			if err != nil {
				return "", err
			}
			v = r
			obj, ok = v.(*goja.Object)
		}
	}
	if !ok {
		if str, isStr := v.(goja.String); isStr {
			m.bytes += str.Length() + 2
		} else {
			m.bytes += 4 // null, true, a number, or null for what JSON leaves out
		}
		return "", nil
	}
	if _, isFn := goja.AssertFunction(obj); isFn {
		m.bytes += 4
		return "", nil
	}
	if m.onPath[obj] {
		return "", nil
	}
	if depth >= maxValueDepth {
		return overDepth, nil
	}
	m.onPath[obj] = true
	m.bytes += 2
	indent := 0
	if m.step > 0 {
		indent = m.step*(depth+1) + 1
	}
	if class := obj.ClassName(); strings.HasSuffix(class, "Array") && class != "ArrayBuffer" {
		n := obj.Get("length").ToInteger()
		for i := int64(0); i < n; i++ {
			m.bytes += indent + 1
			k := strconv.FormatInt(i, 10)
			if over, err := m.walk(obj.Get(k), k, depth+1); over != "" || err != nil {
				return over, err
			}
			if m.bytes > m.maxBytes {
				return overBytes, nil
			}
		}
	} else {
		for _, k := range obj.Keys() {
			x := obj.Get(k)
			if x == nil || goja.IsUndefined(x) {
				continue
			}
			if _, isFn := goja.AssertFunction(x); isFn {
				continue
			}
			if _, isSym := x.(*goja.Symbol); isSym {
				continue
			}
			m.bytes += indent + len(k) + 4
			if over, err := m.walk(x, k, depth+1); over != "" || err != nil {
				return over, err
			}
			if m.bytes > m.maxBytes {
				return overBytes, nil
			}
		}
	}
	delete(m.onPath, obj)
	if m.bytes > m.maxBytes {
		return overBytes, nil
	}
	return "", nil
}

// tooDeep says what is wrong with a value nested past maxValueDepth.
func tooDeep(what string) string {
	return fmt.Sprintf("%s is nested deeper than %d levels, more than the runner writes as JSON; flatten it (or keep only the parts needed)", what, maxValueDepth)
}
