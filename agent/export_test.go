package agent

import "github.com/toolshelf/toolshelf/llm"

// DeclareForTest exposes the per-request declaration step to tests and
// benchmarks.
func DeclareForTest(a *Agent, pending []llm.Message) []llm.Message { return a.declare(pending) }
