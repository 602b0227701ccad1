// Package search ranks tools for a short query: an in-memory index that
// analyses each tool once, when it is added, and answers a query from the
// postings of its terms, so search cost does not grow with the catalog's
// total text.
//
// Two rankers implement [Ranker]:
//
//   - [BM25F], the default ("toolshelf"): field-weighted BM25 over a tool's
//     name, description, parameters and server, with identifier splitting,
//     stemming, synonyms, CJK bigrams with a bilingual term table, a boost
//     for tools whose name the query explains, exact-name and select:
//     queries, required +terms, and hints when nothing matches. Its
//     parameters ([Params]) are fitted on labeled queries ([Fit]) and
//     embedded (weights.json); each score factor and analysis step can be
//     switched off ([Options.Disable]), so that an evaluation measures what
//     it earns, and with all of them off it is the reference's BM25;
//   - [PI] ("pi"): the reference implementation's plain BM25, reproduced
//     exactly (document text, tokenizer, stop words, stemmer and constants)
//     as the parity baseline.
//
// Both are safe for concurrent use and support incremental Add and Remove.
// The package knows nothing of registries: callers turn tools into
// [Document] values (package toolsearch does this for the shelf).
//
// Who it is for: programs that rank tools, or any named documents, without
// a registry; package toolsearch puts it over a shelf.
package search
