// Package gemini adapts the Gemini API (generateContent and
// streamGenerateContent) to [llm.Model].
//
// [Model] replays the request's transcript through [provider.Build] and
// only translates the resulting plan:
//
//   - the head's text is the systemInstruction;
//   - the top-level tools are one tool of functionDeclarations, each
//     declaration's JSON Schema sent as parametersJsonSchema;
//   - the API has no system role after the head: the capability table
//     gives Gemini models the none class (every update collapses into the
//     head, as the reference renders Google models), and in the bridge
//     class updates travel as user text, so the head never changes;
//   - assistant messages are model contents of text and functionCall
//     parts, tool results user contents of functionResponse parts (one
//     content for the results of one answer), thought signatures replayed
//     to the model that wrote them;
//   - bridge calls of call_tool are unwrapped into the real tool's call
//     before they reach the caller.
//
// Usage reports the implicit cache's cachedContentTokenCount as cache
// reads; the Gemini API reports no cache writes.
//
// The adapter speaks the REST API itself, on net/http and encoding/json
// (Google's SDK brought over a hundred packages): the API key as the
// x-goog-api-key header, the body from structs whose field order fixes
// its bytes, retries of transport failures and of HTTP 408, 429 and 5xx
// when Config.MaxRetries asks for them, and the server-sent events read
// with a bound on each. RequestBody returns the bytes Stream sends, for
// golden tests and debugging.
//
// Who it is for: programs that build a Gemini model themselves; package
// adapter builds it from the root package's provider table.
package gemini
