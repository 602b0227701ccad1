// Package openai adapts OpenAI's two wire formats to [llm.Model]:
// [Responses] speaks the Responses API (POST /responses) and [Chat] the
// Chat Completions API (POST /chat/completions) of OpenAI and of the
// servers that copy it (Ollama, vLLM, llama.cpp, LM Studio, DeepSeek,
// Kimi).
//
// Both replay the request's transcript through [provider.Build] and only
// translate the resulting plan:
//
//   - the head's text is the first input item or message, in the developer
//     or system role ([provider.Capabilities].DeveloperRole);
//   - the top-level tools are the plan's, each declaration's JSON Schema
//     sent as the bytes the transcript holds (key order kept);
//   - a later system message becomes, in place, its anchored tool
//     additions (Responses: an additional_tools item or a completed client
//     tool_search pair; Chat: a system message carrying tools, as Kimi
//     reads it) followed by an instruction message with its text, or a
//     user message when the plan sends updates as user text;
//   - bridge calls of call_tool are unwrapped into the real tool's call
//     before they reach the caller.
//
// Requests go through the official SDK (github.com/openai/openai-go/v3),
// which handles authentication, retries and server-sent events; none of
// its types appear in this package's API. RequestBody returns the exact
// bytes Stream sends, for golden tests and debugging.
//
// Who it is for: programs that build an OpenAI model themselves; package
// adapter builds it from the root package's provider table.
package openai
