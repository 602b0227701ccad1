// Package ecma gives JSON Schema validation the regular expressions JSON
// Schema specifies: ECMA-262, which tool schemas use (lookahead,
// backreferences) and Go's regexp package does not accept.
package ecma
