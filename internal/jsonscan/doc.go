// Package jsonscan reads JSON bytes strictly (RFC 8259, valid UTF-8)
// without decoding them: it finds where a value ends, the members of an
// object and whether a string or number is already in the form
// encoding/json's Marshal writes. Callers use it on hot paths (an MCP
// server's tool listings, catalog schemas) and leave whatever it refuses
// to a full decoder.
package jsonscan
