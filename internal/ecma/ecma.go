package ecma

import (
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// matchTimeout bounds one match, so a pathological pattern from an
// untrusted schema cannot stall validation.
const matchTimeout = 100 * time.Millisecond

// Engine compiles a pattern as an ECMAScript regular expression, for
// jsonschema.Compiler.UseRegexpEngine.
func Engine(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = matchTimeout
	return regex{re}, nil
}

type regex struct{ re *regexp2.Regexp }

// MatchString reports a match; a match that times out counts as none.
func (r regex) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok
}

// String returns the pattern.
func (r regex) String() string { return r.re.String() }

// SchemaURL is the location schemas are compiled under: not a file, so
// no path of the machine appears in a message.
const SchemaURL = "urn:toolshelf:schema"
