// Package eval measures tool retrieval: it runs labeled queries against a
// ranker over a shelf of tools and reports recall@k, MRR@10 and nDCG@10,
// overall, per language, per query kind and per length. A labeled tool the
// shelf lacks makes its query a miss and is named in the report.
//
// Labeled queries are JSON Lines:
//
//	{"id": "q17", "query": "open a new ticket for the login bug", "lang": "en",
//	 "kind": "synonym", "relevant": [{"server": "github", "tool": "create_issue"}]}
//
// recall@k here is the share of queries with at least one relevant tool among
// the first k hits, the measure of whether a search that loads k tools gives
// the model a tool that does the job.
//
// A [Suite] runs several (catalog, queries) sets in one process, each with
// every [Ranking] given — the default ranker and the reference, and for an
// ablation the default ranker with each factor switched off ([Ablations],
// [AblationTable]) — so that a ranking change is judged on all of them:
// tools and queries written by others as well as our own. Task files (the
// benchmark's format) are read as the labeled queries of their steps
// ([ReadTaskQueries]).
//
// Every set splits into a fit half and a test half ([InFitHalf]).
// [FitSuite] fits the default ranker's parameters on the fit halves, one
// fold per left-out set, and judges every factor on the left-out sets
// ([FactorVerdict]); `toolshelf eval --fit` writes the result as the
// search package's embedded weights file.
//
// It is internal: `toolshelf eval` is its one user. A program that wants
// these figures for its own catalog runs that command.
package eval
