// Package tokens counts tokens with a real BPE tokenizer: OpenAI's o200k
// encoding, vocabulary embedded (github.com/tiktoken-go/tokenizer), so
// counts are offline and deterministic. Claude's tokenizer is not public;
// its counts for the same text differ (typically somewhat higher), so
// figures for Anthropic requests are o200k estimates, comparable between
// strategies but not equal to what Anthropic bills.
//
// A Counter memoizes counts by content, because the same tool definitions
// and conversation prefixes are counted on every request.
//
// [Counter.Breakdown] attributes a declaration's tokens to its fields
// (name, description, parameter descriptions, enums, defaults, examples,
// the rest of the schema), summing exactly to [Counter.Tool]. A [Log]
// appends one [Record] per model request (usage, declared and called
// tools) to a JSON Lines file that [ReadLog] reads back, skipping and
// reporting lines that are not records.
//
// Who it is for: programs that count what tool definitions and requests
// cost, and readers of the metrics log.
package tokens
