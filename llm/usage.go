package llm

// StopReason says why a model stopped.
type StopReason string

// The stop reasons.
const (
	// StopEnd: the model finished its answer.
	StopEnd StopReason = "stop"
	// StopLength: the output token limit cut the answer short; tool calls
	// in it may have truncated arguments.
	StopLength StopReason = "length"
	// StopToolUse: the model wants tool results.
	StopToolUse StopReason = "toolUse"
	// StopError: the request or the stream failed.
	StopError StopReason = "error"
	// StopAborted: the caller cancelled the request.
	StopAborted StopReason = "aborted"
)

// Usage counts the tokens of one request.
type Usage struct {
	// Input counts the input tokens the prompt cache neither served nor
	// took: the uncached part alone. TotalInput counts them all.
	Input int `json:"input"`
	// Output counts generated tokens, reasoning included.
	Output int `json:"output"`
	// CacheRead counts input tokens served from the prompt cache.
	CacheRead int `json:"cacheRead"`
	// CacheWrite counts input tokens written to the prompt cache.
	CacheWrite int `json:"cacheWrite"`
}

// TotalInput returns every input token: uncached, read and written.
func (u Usage) TotalInput() int { return u.Input + u.CacheRead + u.CacheWrite }

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.Input += v.Input
	u.Output += v.Output
	u.CacheRead += v.CacheRead
	u.CacheWrite += v.CacheWrite
}
