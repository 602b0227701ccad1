// Package safetext makes text from outside — MCP servers, models, catalog
// and session files — safe to print on a terminal: every character that
// could act on the terminal or hide how the text reads becomes a visible
// escape, and everything else is left as it is.
//
// Escaped are the C0 controls but tab and newline (a carriage return only
// when it does not end a CRLF line ending), DEL, the C1 controls, the
// bidirectional embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069), the invisible direction marks (U+200E, U+200F, U+061C),
// the line and paragraph separators (U+2028, U+2029), and every byte that
// is not part of valid UTF-8. Bytes become \xHH (\a, \b, \v, \f and \r for
// those controls), other runes \uHHHH. Letters of every script, emoji
// (with their joiners), tabs and newlines are untouched.
package safetext
