package emulator

import (
	"net/http"
	"slices"
	"strings"
)

// anthropicCodec speaks Anthropic's Messages API (provider-apis §1, §2):
// it validates a request the way the API does, answering with its error
// texts, and decodes it into segments in the cache's render order: the
// tools that are not deferred, the scaffolding Anthropic renders once
// tools can change, the system blocks, then every content block of every
// message, inline tool definitions expanded where they are added.
type anthropicCodec struct{}

// The anthropic-beta values the emulator knows. The deprecated ones are
// accepted and change nothing.
const (
	anthBetaInlineTools = "inline-tools-2026-09-15"
	anthBetaToolChanges = "mid-conversation-tool-changes-2026-07-01"
	anthBetaClearAt     = "mid-conversation-system-clear-at-2026-08-21"
	anthBetaEffort      = "mid-conversation-output-config-2026-07-01"
	// anthBetaPerTurn is the beta Claude Code sends for the same
	// per-message output_config.
	anthBetaPerTurn    = "per-turn-control-2026-07-01"
	anthBetaSafeguards = "dangerous-tool-use-2026-09-03"
)

var anthKnownBetas = []string{
	anthBetaInlineTools, anthBetaToolChanges, "mcp-client-2026-09-15", anthBetaClearAt, anthBetaEffort,
	"thinking-binding-controls-2026-08-01", "fine-grained-tool-streaming-2025-05-14", "interleaved-thinking-2025-05-14",
	"server-side-fallback-2026-07-01", "claude-code-20250219", "oauth-2025-04-20", "context-management-2025-06-27",
	// What current Claude Code sends (2.1.332): per-message output_config
	// (as the mid-conversation-output-config beta), the top-level
	// output_config.effort (GA: the value changes nothing), a thinking
	// token estimate in thinking_delta events (response side, not
	// modelled), thinking.display "updates", the top-level safeguards of
	// auto mode, and auto mode itself (no request field).
	anthBetaPerTurn, "effort-2025-11-24", "thinking-token-count-2026-05-13", "thinking-display-updates-2026-08-18",
	anthBetaSafeguards, "afk-mode-2026-01-31",
	// Claude Code 2.1.332 also sends fallback-credit in a long session; its
	// field, fallback_credit_token, is a top-level key without a beta.
	"fallback-credit-2026-06-01",
	// Current betas of features the emulator does not model (accepted,
	// changing nothing; their fields and tool types are checked as
	// without them), as anthropic-sdk-go v2.15.0 lists them: opencode
	// 1.18.33 sends structured-outputs by default; the second line are
	// those opencode or Claude Code send when a feature is on.
	"structured-outputs-2025-11-13", "context-1m-2025-08-07", "output-128k-2025-02-19",
	"model-context-window-exceeded-2025-08-26", "fast-mode-2026-02-01", "server-side-fallback-2026-06-01",
	"mcp-client-2025-11-20", "files-api-2025-04-14",
	"advisor-tool-2026-03-01", "task-budgets-2026-03-13", "compact-2026-01-12", "skills-2025-10-02",
	"code-execution-2025-05-22", "pdfs-2024-09-25", "computer-use-2025-11-24", "mcp-client-2025-04-04",
	// Deprecated: the features are GA; the values are no-ops.
	"prompt-caching-2024-07-31", "extended-cache-ttl-2025-04-11", "cache-diagnosis-2026-04-07", "token-counting-2024-11-01",
	"token-efficient-tools-2025-02-19", "advanced-tool-use-2025-11-20",
}

// anthTopLevelKeys are the request body's fields without a beta. Those
// the emulator does not model (container, mcp_servers,
// context_management, ...) are accepted without further checks;
// safeguards needs its beta (see anthDecoder.topLevelKeys).
var anthTopLevelKeys = []string{
	"model", "max_tokens", "messages", "system", "tools", "tool_choice", "stream", "metadata",
	"temperature", "top_p", "top_k", "stop_sequences", "thinking", "output_config", "output_format",
	"cache_control", "service_tier",
	"speed", "container", "context_management", "compaction", "diagnostics", "fallbacks",
	"fallback_credit_token", "billing_policy", "inference_geo", "mcp_servers", "thread",
}

func (anthropicCodec) decode(h http.Header, body []byte) (*Exchange, *Error) {
	return anthDecode(h, body, false)
}

// decodeCount validates a count_tokens request: the fields of a prompt,
// without those of generation (max_tokens, stream, sampling, metadata).
func (anthropicCodec) decodeCount(h http.Header, body []byte) (*Exchange, *Error) {
	return anthDecode(h, body, true)
}

func anthDecode(h http.Header, body []byte, count bool) (*Exchange, *Error) {
	if strings.TrimSpace(h.Get("anthropic-version")) == "" {
		return nil, anthInvalid("anthropic-version: header is required")
	}
	betas, apiErr := anthBetas(h)
	if apiErr != nil {
		return nil, apiErr
	}
	v, err := parseBody(body)
	if err != nil {
		return nil, anthInvalid("There was an error parsing the body of the request: %v. The body must be one JSON object.", err)
	}
	root, apiErr := anthAsObj("", v)
	if apiErr != nil {
		return nil, apiErr
	}
	d := &anthDecoder{betas: betas, count: count, known: map[string]*anthTool{},
		ex: &Exchange{API: AnthropicMessages}}
	if apiErr := d.request(root); apiErr != nil {
		return nil, apiErr
	}
	return d.ex, nil
}

// anthBetas reads the anthropic-beta headers (repeatable, each a
// comma-separated list) and rejects unknown values.
func anthBetas(h http.Header) (map[string]bool, *Error) {
	betas := map[string]bool{}
	var unknown []string
	for _, line := range h.Values("anthropic-beta") {
		for b := range strings.SplitSeq(line, ",") {
			b = strings.TrimSpace(b)
			if b == "" {
				continue
			}
			if !slices.Contains(anthKnownBetas, b) {
				if !slices.Contains(unknown, b) {
					unknown = append(unknown, b)
				}
				continue
			}
			betas[b] = true
		}
	}
	if len(unknown) > 0 {
		q := make([]string, len(unknown))
		for i, u := range unknown {
			q[i] = "`" + u + "`"
		}
		return nil, anthInvalid("Unexpected value(s) %s for the `anthropic-beta` header. Please consult our documentation at docs.claude.com or try again without the header.",
			strings.Join(q, ", "))
	}
	return betas, nil
}

// messageEffort reports whether a system message may carry output_config.
func (d *anthDecoder) messageEffort() bool {
	return d.betas[anthBetaEffort] || d.betas[anthBetaPerTurn]
}

// anthCountKeys are the fields of a count_tokens body.
var anthCountKeys = []string{
	"model", "messages", "system", "tools", "tool_choice", "thinking", "output_config", "output_format",
	"cache_control", "speed", "context_management", "compaction", "billing_policy", "mcp_servers",
}

// topLevelKeys are the body's fields with the request's betas.
func (d *anthDecoder) topLevelKeys() []string {
	if d.count {
		return anthCountKeys
	}
	if d.betas[anthBetaSafeguards] {
		return append(slices.Clip(anthTopLevelKeys), "safeguards")
	}
	return anthTopLevelKeys
}

// toolChanges reports whether tool_addition and tool_removal blocks are
// enabled.
func (d *anthDecoder) toolChanges() bool {
	return d.betas[anthBetaInlineTools] || d.betas[anthBetaToolChanges]
}

// anthScaffolding stands for the instructions Anthropic adds to the prompt
// as soon as tools can change (a deferred tool, a tool_addition or a
// tool_removal). It renders after the tools, so a request that starts
// declaring a deferred tool later loses its cached system prompt; toolshelf
// declares a deferred placeholder from the first request for that reason.
const anthScaffolding = "[Anthropic's hidden instructions for deferred tools and mid-conversation tool changes] " +
	"Some tools are not listed above: they are loaded on demand. System messages later in the conversation may " +
	"add tools, with their full definitions, or remove them; from that point on only call the tools that are " +
	"currently available, and never call a tool that was removed."
