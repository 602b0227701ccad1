// Package bench measures toolshelf end to end: task suites run through the
// real agent loop and provider adapters against an in-process emulator,
// whose oracle plays the model from what each request actually declares.
//
// For each strategy (full: every tool of the profile declared up front;
// search: tools deferred and loaded with tool_search; reference: the
// reference system's tool_search, its BM25 and its load-everything policy,
// as the baseline for search; select and select+lock: two-phase selection;
// codemode: tools of codemode exposure, reached by one script per task;
// with Config.Learn, search twice, the second pass with what the first
// learned: search+learned)
// and tool class
// (changes on Anthropic, additions on OpenAI Responses, none and bridge on
// Chat Completions) it reports requests, input and tool-definition tokens,
// cache reads, writes and uncached tokens as the emulator's cache
// simulation computed them, the prefix-preservation ratio (cache reads ÷
// what an ideal cache could have served), cache misses and tool removals,
// failed steps, and tools loaded against tools needed with the overhead
// factor (definition tokens loaded ÷ definition tokens needed).
//
// The oracle: for each step it calls the step's tool when the request
// declares it; otherwise it calls tool_search with the step's queries in
// order; when none loads the tool the step fails and it goes on. For
// codemode it writes one script per task that does the same with
// searchTools inside the script and calls each step's tool, passing the
// previous result along, so that only the script's output reaches the
// model. Tool results are synthetic text of realistic size, from the
// tools' handlers whether the model or a script calls them; a final text
// answer ends the task.
//
// The package is internal: its user is the command line's toolshelf bench
// (package internal/cli), and scripts/bench-report through it. Programs
// measure with the command, not with this API.
package bench
