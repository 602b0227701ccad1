// Package reftext holds text rules of the reference implementation that
// toolshelf reproduces exactly, for the packages that need them: the
// reference's light plural stemmer (the pi ranker in package search, and
// the linter's term comparison) and JavaScript's trim (what the reference
// counts as an empty query). It is internal: reference parity is no part
// of toolshelf's public API.
package reftext
