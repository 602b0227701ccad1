// Package toolsearch provides tool_search, the model-facing tool that finds
// tools on the shelf and loads them.
//
// tool_search behaves like the reference implementation's: a static
// description that never lists tools or servers (so it never changes the
// cached prompt), a query and an optional limit (default 8), candidates that
// are the registry's deferred and codemode tools not yet active, and
// additive activation of every match, which the agent loop declares to the
// model before its next request. The ranking comes from whichever
// [search.Ranker] the [Searcher] is given; the index follows the registry
// incrementally. What the model sends and gets back is bounded
// ([MaxQueryBytes], [MaxSelect], [MaxLimit], [MaxResultBytes]), since a
// result stays in the transcript and is re-sent with every request.
// [Searcher.SetAliases] lets a user's learned aliases rank a tool first,
// never above one the query names exactly.
//
// Who it is for: programs with their own loop that want tool_search over a
// registry; the root package declares it for you.
package toolsearch
