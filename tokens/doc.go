// Package tokens counts tokens with a real BPE tokenizer: OpenAI's o200k
// encoding, vocabulary embedded (github.com/tiktoken-go/tokenizer), so
// counts are offline and deterministic. Claude's tokenizer is not public;
// its counts for the same text differ (typically somewhat higher), so
// figures for Anthropic requests are o200k estimates, comparable between
// strategies but not equal to what Anthropic bills.
//
// A Counter memoizes counts by content, because the same tool definitions
// and conversation prefixes are counted on every request.
package tokens
