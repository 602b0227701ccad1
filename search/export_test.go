package search

// The reference's tokenizer and document text, for the parity test that
// recomputes the reference's ranking from scratch (parity_test.go, in
// package search_test).
var (
	PITokenize     = piTokenize
	PIDocumentText = piDocumentText
)
