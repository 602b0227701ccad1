// Package emulator is a local provider emulator: an HTTP server that
// speaks Anthropic Messages (and its count_tokens), OpenAI Responses and
// Chat Completions, validates requests the way the real APIs do
// (answering with their error shapes and status codes), simulates their
// prompt caches and reports cache reads and writes in the usage fields
// where each API puts them.
// Replies come from a Responder: an echo, a script, a function, or a
// stand-in model (toolshelf's offline model, the benchmark's oracle).
// Serve it over HTTP, or reach it in process through [Server.Client]:
// nothing listens then.
//
// The emulator is independent of the code it checks: it depends on
// toolshelf's llm and tokens packages and internal helpers only (the
// internal/layers test enforces it), and knows nothing of toolshelf's own
// conventions but that a line of prompt text holding a JSON tool
// definition counts as one (TextToolDefinition).
//
// The cache simulation follows the providers' documentation. A request is
// decoded into segments in render order (Anthropic: tools, system,
// messages; OpenAI: tools, then instructions and input items), each
// counted with the o200k tokenizer. Anthropic: each explicit breakpoint
// writes the prefix ending at it (if at least the model's minimum, 512 to
// 4,096 tokens); a read is the longest live entry found walking back at
// most 20 positions from a breakpoint (a run of tool_use or tool_result
// blocks is one position); lifetimes are 5 minutes or 1 hour on the
// configured clock. OpenAI before gpt-5.6: automatic, every prefix of at
// least 1,024 tokens is stored, reads round down to 128-token steps, no
// writes reported. gpt-5.6 and later: an implicit breakpoint at the last
// user or tool message plus explicit ones, writes reported. Caches are
// scoped by API key, model and (OpenAI) prompt_cache_key.
//
// Each request's Record also carries the tokens an ideal cache could have
// served (the longest prefix, at the same granularity, that any earlier
// request sent), so a client can compute how much of its prefix it
// preserved.
//
// Who it is for: tests and benchmarks of programs that talk to these APIs,
// offline. Package adapter's emulator provider runs it in process;
// toolshelf emulate serves it.
package emulator
