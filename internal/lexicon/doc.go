// Package lexicon keeps what a user's sessions learned from their
// searches: when a tool_search query loads nothing the model then calls,
// and a later search of the same prompt loads a tool that is called, the
// first query becomes an alias of that tool; a query whose loaded tools
// are called becomes an alias of each. A later search for it ranks those
// tools first and loads them alone (toolsearch.Searcher.SetAliases),
// below only the tools the query names exactly.
//
// The aliases are one private file per user ([DefaultPath]): bounded in
// entries ([MaxEntries]) and in a query's length ([MaxQueryBytes]),
// decayed when unused ([HalfLife]), written atomically with mode 0600 in
// a folder of the user's alone, and never shared. `toolshelf lexicon`
// lists and edits them.
package lexicon
