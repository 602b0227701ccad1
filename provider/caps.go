package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tool"
)

// API names a provider wire format.
type API string

// The wire formats toolshelf speaks.
const (
	// AnthropicMessages is Anthropic's Messages API.
	AnthropicMessages API = "anthropic-messages"
	// OpenAIResponses is OpenAI's Responses API.
	OpenAIResponses API = "openai-responses"
	// OpenAIChat is the Chat Completions API of OpenAI and of the servers
	// that copy it (Ollama, vLLM, llama.cpp, LM Studio, DeepSeek, ...).
	OpenAIChat API = "openai-chat"
	// Gemini is Google's Gemini API (generateContent and
	// streamGenerateContent).
	Gemini API = "gemini"
)

// APIs lists the wire formats in a fixed order.
var APIs = []API{AnthropicMessages, OpenAIResponses, OpenAIChat, Gemini}

// Anchor is how an additions-class model receives tools added
// mid-conversation.
type Anchor string

// The ways to anchor an addition in place.
const (
	// AnchorAdditionalTools sends an additional_tools item (OpenAI
	// Responses).
	AnchorAdditionalTools Anchor = "additional_tools"
	// AnchorToolSearch sends a completed client tool_search_call and
	// tool_search_output pair (OpenAI Responses models with tool search).
	AnchorToolSearch Anchor = "tool_search"
	// AnchorSystemTools sends a system message carrying a tools field
	// (Kimi on Chat Completions).
	AnchorSystemTools Anchor = "system_tools"
)

// Capabilities describe what a model behind an API can express. The zero
// value is the most conservative: class none, nothing mid-conversation.
type Capabilities struct {
	// Tools is the tool support class the adapter renders.
	Tools llm.ToolSupport `json:"tools"`
	// MidConversationText reports that system text is accepted after the
	// first message. Without it every class but bridge collapses into the
	// head (none), and bridge sends its updates as user text.
	MidConversationText bool `json:"midConversationText"`
	// Anchor is how the additions class places added tools.
	Anchor Anchor `json:"anchor,omitempty"`
	// CacheControlOnTools reports that a cache breakpoint may sit on the
	// tool list (Anthropic).
	CacheControlOnTools bool `json:"cacheControlOnTools,omitempty"`
	// LongCacheRetention reports that the one-hour cache lifetime is
	// available (Anthropic).
	LongCacheRetention bool `json:"longCacheRetention,omitempty"`
	// DeveloperRole reports that instructions go in developer rather than
	// system messages (OpenAI).
	DeveloperRole bool `json:"developerRole,omitempty"`
	// CacheBreakpoints reports explicit prompt_cache_breakpoint marks
	// (OpenAI Responses, gpt-5.6 and later).
	CacheBreakpoints bool `json:"cacheBreakpoints,omitempty"`
}

// classes lists the tool support classes each API can render.
var classes = map[API][]llm.ToolSupport{
	AnthropicMessages: {llm.ToolsChanges, llm.ToolsText, llm.ToolsNone, llm.ToolsBridge},
	OpenAIResponses:   {llm.ToolsAdditions, llm.ToolsText, llm.ToolsNone, llm.ToolsBridge},
	OpenAIChat:        {llm.ToolsAdditions, llm.ToolsText, llm.ToolsNone, llm.ToolsBridge},
	// The Gemini API has no system role after systemInstruction: updates
	// collapse into it (none), or travel as user text (bridge).
	Gemini: {llm.ToolsNone, llm.ToolsBridge},
}

// anchors lists the anchors each API can send.
var anchors = map[API][]Anchor{
	OpenAIResponses: {AnchorAdditionalTools, AnchorToolSearch},
	OpenAIChat:      {AnchorSystemTools},
}

// Check reports capabilities an API cannot render: an unknown API, a class
// it lacks, or an additions class without an anchor it can send.
func (c Capabilities) Check(api API) error {
	supported, ok := classes[api]
	if !ok {
		return fmt.Errorf("unknown API %q: use one of %s", api, joinQuoted(APIs))
	}
	if !slices.Contains(supported, c.Tools) {
		return fmt.Errorf("tool class %q is not available on %s: use one of %s", c.Tools, api, joinQuoted(supported))
	}
	if c.Tools == llm.ToolsAdditions && !slices.Contains(anchors[api], c.Anchor) {
		return fmt.Errorf("the additions class on %s needs an anchor: set anchor to one of %s", api, joinQuoted(anchors[api]))
	}
	return nil
}

func joinQuoted[T ~string](xs []T) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// Rule sets capabilities for the models of an API whose id matches a
// pattern. Unset fields leave what earlier rules said.
type Rule struct {
	// API restricts the rule to one wire format; empty matches every API.
	API API `json:"api,omitempty"`
	// Model is a pattern over model ids in which * matches any run of
	// characters; empty matches every model. Matching ignores case.
	Model string `json:"model,omitempty"`

	Tools               llm.ToolSupport `json:"tools,omitempty"`
	MidConversationText *bool           `json:"midConversationText,omitempty"`
	Anchor              Anchor          `json:"anchor,omitempty"`
	CacheControlOnTools *bool           `json:"cacheControlOnTools,omitempty"`
	LongCacheRetention  *bool           `json:"longCacheRetention,omitempty"`
	DeveloperRole       *bool           `json:"developerRole,omitempty"`
	CacheBreakpoints    *bool           `json:"cacheBreakpoints,omitempty"`
	// Note says where the rule comes from; it changes nothing.
	Note string `json:"note,omitempty"`
}

// matches reports whether the rule applies to the model of the API.
func (r *Rule) matches(api API, model string) bool {
	return (r.API == "" || r.API == api) && (r.Model == "" || Match(r.Model, model))
}

// apply sets the fields the rule sets.
func (r *Rule) apply(c *Capabilities) {
	if r.Tools != "" {
		c.Tools = r.Tools
	}
	if r.Anchor != "" {
		c.Anchor = r.Anchor
	}
	set := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	set(&c.MidConversationText, r.MidConversationText)
	set(&c.CacheControlOnTools, r.CacheControlOnTools)
	set(&c.LongCacheRetention, r.LongCacheRetention)
	set(&c.DeveloperRole, r.DeveloperRole)
	set(&c.CacheBreakpoints, r.CacheBreakpoints)
}

// Match reports whether a model id matches a pattern in which * matches
// any run of characters (slashes included) and everything else matches
// itself, ignoring case.
func Match(pattern, model string) bool {
	return tool.MatchPattern(strings.ToLower(pattern), strings.ToLower(model))
}

// Table is an ordered list of rules: every rule that matches applies, in
// order, so later rules refine earlier ones.
type Table []Rule

// Lookup returns the capabilities of a model behind an API.
func (t Table) Lookup(api API, model string) Capabilities {
	c := Capabilities{Tools: llm.ToolsNone}
	for i := range t {
		if t[i].matches(api, model) {
			t[i].apply(&c)
		}
	}
	return c
}

// With returns the table followed by more rules, which override it.
func (t Table) With(rules ...Rule) Table {
	return append(slices.Clip(t), rules...)
}

// ParseRules reads a JSON array of rules, as a configuration file holds
// them, and checks each: unknown fields, an unknown API, class or anchor
// are errors that name the rule.
func ParseRules(b []byte) ([]Rule, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rules []Rule
	if err := dec.Decode(&rules); err != nil {
		return nil, fmt.Errorf("capability rules: %w (expected a JSON array of {\"api\", \"model\", \"tools\", ...})", err)
	}
	for i, r := range rules {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("capability rule %d (model %q): %w", i+1, r.Model, err)
		}
	}
	return rules, nil
}

func (r *Rule) check() error {
	if r.API != "" && !slices.Contains(APIs, r.API) {
		return fmt.Errorf("unknown api %q: use one of %s", r.API, joinQuoted(APIs))
	}
	all := []llm.ToolSupport{llm.ToolsChanges, llm.ToolsAdditions, llm.ToolsText, llm.ToolsNone, llm.ToolsBridge}
	if r.Tools != "" && !slices.Contains(all, r.Tools) {
		return fmt.Errorf("unknown tools class %q: use one of %s", r.Tools, joinQuoted(all))
	}
	allAnchors := []Anchor{AnchorAdditionalTools, AnchorToolSearch, AnchorSystemTools}
	if r.Anchor != "" && !slices.Contains(allAnchors, r.Anchor) {
		return fmt.Errorf("unknown anchor %q: use one of %s", r.Anchor, joinQuoted(allAnchors))
	}
	return nil
}

// DefaultTable returns the built-in capability rules. They follow the
// providers' documentation and the reference implementation's model
// catalogue; a model not listed gets the conservative class of its API.
func DefaultTable() Table {
	yes, no := new(bool), new(bool)
	*yes = true
	// Anthropic: mid-conversation system messages and tool changes are
	// documented for Opus 4.8, Opus 5/5.5, Fable 5/5.1, Mythos 5/5.1;
	// the reference catalogue also enables Sonnet 5.5 and Haiku 5.5.
	// Sonnet 5 answers 400 to a system role.
	anthropicChanges := []string{
		"claude-opus-4-8*", "claude-opus-5*", "claude-fable-5*", "claude-mythos-5*",
		"claude-sonnet-5-5*", "claude-haiku-5-5*",
	}
	t := Table{
		{API: AnthropicMessages, Tools: llm.ToolsNone, MidConversationText: no, CacheControlOnTools: yes, LongCacheRetention: yes,
			Note: "every Claude model: cache breakpoints on tools, one-hour retention"},
	}
	for _, m := range anthropicChanges {
		t = append(t, Rule{API: AnthropicMessages, Model: m, Tools: llm.ToolsChanges, MidConversationText: yes,
			Note: "mid-conversation system messages with tool_addition/tool_removal"})
	}
	t = append(t,
		Rule{API: OpenAIResponses, Tools: llm.ToolsNone, DeveloperRole: yes,
			Note: "OpenAI models take instructions as developer messages"},
		Rule{API: OpenAIResponses, Model: "gpt-4*", DeveloperRole: no,
			Note: "pre-reasoning models take system messages"},
	)
	// OpenAI: mid-conversation instructions come with tool search, from
	// gpt-5.4 on; tool_search_output is the documented way to add tools.
	for _, m := range []string{"gpt-5.4*", "gpt-5.5*", "gpt-5.6*", "gpt-5.7*", "gpt-5.8*", "gpt-5.9*", "gpt-6*"} {
		t = append(t, Rule{API: OpenAIResponses, Model: m, Tools: llm.ToolsAdditions, MidConversationText: yes,
			Anchor: AnchorToolSearch, Note: "tool search models: additions as client tool_search pairs"})
	}
	for _, m := range []string{"gpt-5.6*", "gpt-5.7*", "gpt-5.8*", "gpt-5.9*", "gpt-6*"} {
		t = append(t, Rule{API: OpenAIResponses, Model: m, CacheBreakpoints: yes,
			Note: "explicit prompt_cache_breakpoint marks"})
	}
	t = append(t,
		Rule{API: OpenAIChat, Tools: llm.ToolsNone, Note: "OpenAI-compatible servers: one system message at the start"},
		Rule{API: OpenAIChat, Model: "kimi-*", Tools: llm.ToolsAdditions, MidConversationText: yes, Anchor: AnchorSystemTools,
			Note: "Kimi: tool-bearing system messages mid-conversation"},
		Rule{API: Gemini, Tools: llm.ToolsNone, MidConversationText: no,
			Note: "Google models: collapsed into systemInstruction, as the reference renders them; bridge keeps the cache"},
	)
	return t
}
