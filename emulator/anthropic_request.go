package emulator

import (
	"slices"
)

// anthDecoder validates one Messages request and builds its Exchange.
type anthDecoder struct {
	betas map[string]bool
	ex    *Exchange
	// count is set for a count_tokens request, which has no max_tokens.
	count bool
	// maxTokens is the request's, for the rules that depend on it.
	maxTokens int64

	// known maps a name to the tool it resolves to at the current
	// position: every top-level tool, deferred or not, then inline
	// definitions as they appear.
	known map[string]*anthTool
	// avail are the tools callable at the current position, in order.
	avail []*anthTool
	// deferred is set when a top-level tool is deferred; changes when a
	// tool_addition or tool_removal appears. Either adds the scaffolding.
	deferred, changes bool

	// The prompt in render order: tools, system, messages.
	toolSegs, systemSegs, msgSegs []Segment
	// bps are the breakpoints in render order, for the count and TTL
	// order rules.
	bps []anthBreakpoint
	// run and runKind group consecutive tool_use or tool_result segments.
	run     int
	runKind string

	msgs []*anthMsg
}

type anthBreakpoint struct {
	path string
	ttl  TTL
}

// request checks the top-level fields in order and assembles the
// exchange.
func (d *anthDecoder) request(o anthObj) *Error {
	if e := o.extra(d.topLevelKeys()...); e != nil {
		return e
	}
	model, _, e := o.str("model", true)
	if e != nil {
		return e
	}
	d.ex.Model = model
	if d.count {
		// count_tokens: the prompt's fields only.
		msgs, _, e := o.list("messages", true)
		if e != nil {
			return e
		}
		if len(msgs) == 0 {
			return anthInvalid("messages: List should have at least 1 item after validation, not 0")
		}
		return d.prompt(o, msgs)
	}
	maxTokens, _, e := o.integer("max_tokens", true)
	if e != nil {
		return e
	}
	msgs, _, e := o.list("messages", true)
	if e != nil {
		return e
	}
	stream, e := o.boolean("stream")
	if e != nil {
		return e
	}
	d.maxTokens = maxTokens
	d.ex.Stream, d.ex.MaxTokens = stream, int(maxTokens)
	switch {
	case maxTokens < 0:
		return anthInvalid("max_tokens: Input should be greater than or equal to 0")
	case maxTokens == 0 && stream:
		return anthInvalid("max_tokens: Input should be greater than or equal to 1 when stream is true (max_tokens 0 pre-warms the cache and is accepted only without streaming)")
	}
	if len(msgs) == 0 {
		return anthInvalid("messages: List should have at least 1 item after validation, not 0")
	}
	if e := d.sampling(o); e != nil {
		return e
	}
	return d.prompt(o, msgs)
}

// prewarm reports a Messages request with max_tokens 0, which only
// writes the cache (count_tokens has no max_tokens and is none).
func (d *anthDecoder) prewarm() bool { return !d.count && d.maxTokens == 0 }

// prompt checks the fields that make the prompt, in order, and assembles
// the exchange.
func (d *anthDecoder) prompt(o anthObj, msgs []any) *Error {
	thinking, e := d.thinking(o)
	if e != nil {
		return e
	}
	if e := d.outputConfig(o); e != nil {
		return e
	}
	if e := anthSafeguards(o); e != nil {
		return e
	}
	if o.has("cache_control") {
		ttl, e := anthCacheControl(o)
		if e != nil {
			return e
		}
		d.ex.AutoBreakpoint = ttl
	}
	if e := d.tools(o); e != nil {
		return e
	}
	if e := d.system(o); e != nil {
		return e
	}
	if e := d.messages(msgs); e != nil {
		return e
	}
	if e := d.toolChoice(o, thinking); e != nil {
		return e
	}
	if e := d.breakpoints(); e != nil {
		return e
	}
	d.assemble()
	return nil
}

// sampling checks the optional scalar fields.
func (d *anthDecoder) sampling(o anthObj) *Error {
	if e := o.number("temperature", 0, 1); e != nil {
		return e
	}
	if e := o.number("top_p", 0, 1); e != nil {
		return e
	}
	k, ok, e := o.integer("top_k", false)
	if e != nil {
		return e
	}
	if ok && k < 0 {
		return anthInvalid("top_k: Input should be greater than or equal to 0")
	}
	seqs, _, e := o.list("stop_sequences", false)
	if e != nil {
		return e
	}
	for i, s := range seqs {
		if _, ok := s.(string); !ok {
			return anthInvalid("%s: Input should be a valid string", anthJoin("stop_sequences", i))
		}
	}
	meta, ok, e := o.obj("metadata", false)
	if e != nil {
		return e
	}
	if ok {
		if e := meta.extra("user_id"); e != nil {
			return e
		}
		if _, _, e := meta.str("user_id", false); e != nil {
			return e
		}
	}
	if _, e := o.oneOf("service_tier", false, "auto", "standard_only"); e != nil {
		return e
	}
	return nil
}

// thinking checks the thinking configuration and returns its type.
func (d *anthDecoder) thinking(o anthObj) (string, *Error) {
	t, ok, e := o.obj("thinking", false)
	if e != nil || !ok {
		return "", e
	}
	typ, e := anthTag(t, "type", []string{"adaptive", "enabled", "disabled"})
	if e != nil {
		return "", e
	}
	t.path = anthJoin(t.path, typ)
	switch typ {
	case "disabled":
		return typ, t.extra("type")
	case "adaptive":
		if e := t.extra("type", "display", "block_binding"); e != nil {
			return "", e
		}
	case "enabled":
		if e := t.extra("type", "budget_tokens", "display", "block_binding"); e != nil {
			return "", e
		}
		budget, _, e := t.integer("budget_tokens", true)
		if e != nil {
			return "", e
		}
		if budget < 1024 {
			return "", anthInvalid("%s: Input should be greater than or equal to 1024", t.at("budget_tokens"))
		}
		if d.prewarm() {
			return "", anthInvalid("max_tokens: max_tokens 0 (cache pre-warming) cannot be combined with extended thinking")
		}
		if !d.count && budget >= d.maxTokens {
			return "", anthInvalid("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size")
		}
	}
	if _, e := t.oneOf("display", false, "summarized", "omitted", "updates"); e != nil {
		return "", e
	}
	return typ, nil
}

// anthEfforts are output_config.effort's values.
var anthEfforts = []string{"low", "medium", "high", "xhigh", "max"}

// outputConfig checks output_config.
func (d *anthDecoder) outputConfig(o anthObj) *Error {
	oc, ok, e := o.obj("output_config", false)
	if e != nil || !ok {
		return e
	}
	if e := oc.extra("effort", "format", "task_budget"); e != nil {
		return e
	}
	if _, e := oc.oneOf("effort", false, anthEfforts...); e != nil {
		return e
	}
	if oc.has("format") && d.prewarm() {
		return anthInvalid("max_tokens: max_tokens 0 (cache pre-warming) cannot be combined with structured outputs (output_config.format)")
	}
	return nil
}

// anthSafeguards checks the safeguards Claude Code sends in auto mode
// (behind dangerous-tool-use-2026-09-03): a list of {"type":
// "dangerous_tool_use", "classifier_context": {...}}. The classifier's
// context is not modelled: any object is accepted.
func anthSafeguards(o anthObj) *Error {
	list, _, e := o.list("safeguards", false)
	if e != nil {
		return e
	}
	for i, raw := range list {
		s, e := anthAsObj(anthJoin("safeguards", i), raw)
		if e != nil {
			return e
		}
		typ, e := anthTag(s, "type", []string{"dangerous_tool_use"})
		if e != nil {
			return e
		}
		s.path = anthJoin(s.path, typ)
		if e := s.extra("type", "classifier_context"); e != nil {
			return e
		}
		if _, _, e := s.obj("classifier_context", false); e != nil {
			return e
		}
	}
	return nil
}

// toolChoice checks tool_choice against the tools the request defines.
func (d *anthDecoder) toolChoice(o anthObj, thinking string) *Error {
	tc, ok, e := o.obj("tool_choice", false)
	if e != nil || !ok {
		return e
	}
	typ, e := anthTag(tc, "type", []string{"auto", "any", "tool", "none"})
	if e != nil {
		return e
	}
	path := tc.path
	tc.path = anthJoin(path, typ)
	switch typ {
	case "none":
		e = tc.extra("type")
	case "auto", "any":
		e = tc.extra("type", "disable_parallel_tool_use")
	case "tool":
		if e = tc.extra("type", "name", "disable_parallel_tool_use"); e != nil {
			return e
		}
		name, _, err := tc.str("name", true)
		if err != nil {
			return err
		}
		if d.known[name] == nil {
			return anthInvalid("%s: Tool '%s' not found in the request's tools", tc.at("name"), name)
		}
	}
	if e != nil {
		return e
	}
	if _, e := tc.boolean("disable_parallel_tool_use"); e != nil {
		return e
	}
	forced := typ == "any" || typ == "tool"
	if forced && thinking == "enabled" {
		return anthInvalid("Thinking may not be enabled when tool_choice forces tool use.")
	}
	if forced && d.prewarm() {
		return anthInvalid("max_tokens: max_tokens 0 (cache pre-warming) cannot be combined with a tool_choice that forces tool use")
	}
	return nil
}

// system decodes the top-level system prompt: a string or text blocks.
func (d *anthDecoder) system(o anthObj) *Error {
	v, ok := o.m["system"]
	if !ok || v == nil {
		return nil
	}
	if s, isStr := v.(string); isStr {
		if s != "" {
			d.systemSegs = append(d.systemSegs, anthTextSegment("system", map[string]any{"type": "text", "text": s}, s, ""))
		}
		return nil
	}
	blocks, isList := v.([]any)
	if !isList {
		return anthInvalid("system: Input should be a valid string or a valid list of text blocks")
	}
	for i, raw := range blocks {
		b, e := anthAsObj(anthJoin("system", i), raw)
		if e != nil {
			return e
		}
		if _, e := anthTag(b, "type", []string{"text"}); e != nil {
			return e
		}
		text, ttl, e := d.textBlock(b)
		if e != nil {
			return e
		}
		d.systemSegs = append(d.systemSegs, anthTextSegment("system", b.m, text, ttl))
	}
	return nil
}

// textBlock checks a text block (keys, non-empty text, cache_control) and
// records its breakpoint.
func (d *anthDecoder) textBlock(b anthObj) (string, TTL, *Error) {
	if e := b.extra("type", "text", "citations", "cache_control"); e != nil {
		return "", "", e
	}
	text, _, e := b.str("text", true)
	if e != nil {
		return "", "", e
	}
	if _, _, e := b.list("citations", false); e != nil {
		return "", "", e
	}
	if text == "" && b.has("cache_control") {
		return "", "", anthInvalid("%s: cache_control cannot be set for empty text blocks", b.at("cache_control"))
	}
	switch {
	case text == "":
		return "", "", anthInvalid("%s: text content blocks must be non-empty", b.at("text"))
	case anthBlank(text):
		return "", "", anthInvalid("%s: text content blocks must contain non-whitespace text", b.at("text"))
	}
	ttl, e := d.breakpoint(b)
	return text, ttl, e
}

func anthBlank(s string) bool {
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r', '\v', '\f':
		default:
			return false
		}
	}
	return true
}

// anthCacheControl reads an object's cache_control: {"type":"ephemeral",
// "ttl"?: "5m"|"1h"}. It returns "" when there is none.
func anthCacheControl(o anthObj) (TTL, *Error) {
	cc, ok, e := o.obj("cache_control", false)
	if e != nil || !ok {
		return "", e
	}
	if e := cc.extra("type", "ttl"); e != nil {
		return "", e
	}
	if _, e := cc.oneOf("type", true, "ephemeral"); e != nil {
		return "", e
	}
	ttl, e := cc.oneOf("ttl", false, "5m", "1h")
	if e != nil {
		return "", e
	}
	if ttl == "" {
		ttl = "5m"
	}
	return TTL(ttl), nil
}

// breakpoint reads an object's cache_control and records it in render
// order.
func (d *anthDecoder) breakpoint(o anthObj) (TTL, *Error) {
	ttl, e := anthCacheControl(o)
	if e != nil || ttl == "" {
		return "", e
	}
	d.bps = append(d.bps, anthBreakpoint{path: o.at("cache_control"), ttl: ttl})
	return ttl, nil
}

// breakpoints enforces the limits on cache_control: four in all (the
// automatic one included), 1h before 5m, and an automatic TTL that agrees
// with an explicit marker on the last block.
func (d *anthDecoder) breakpoints() *Error {
	all := slices.Clone(d.bps)
	if d.ex.AutoBreakpoint != "" {
		all = append(all, anthBreakpoint{path: "cache_control", ttl: d.ex.AutoBreakpoint})
	}
	if len(all) > 4 {
		return anthInvalid("A maximum of 4 blocks with cache_control may be provided. Found %d.", len(all))
	}
	short := ""
	for _, bp := range all {
		switch {
		case bp.ttl == "5m" && short == "":
			short = bp.path
		case bp.ttl == "1h" && short != "":
			return anthInvalid("%s: a cache_control with ttl '1h' cannot come after one with ttl '5m' (%s). Breakpoints with longer TTLs must appear before those with shorter TTLs.",
				bp.path, short)
		}
	}
	if d.ex.AutoBreakpoint != "" && len(d.msgSegs) > 0 {
		last := d.msgSegs[len(d.msgSegs)-1]
		if last.Breakpoint != "" && last.Breakpoint != d.ex.AutoBreakpoint {
			return anthInvalid("cache_control: the automatic cache_control ttl '%s' conflicts with the ttl '%s' of the cache_control on the last block",
				d.ex.AutoBreakpoint, last.Breakpoint)
		}
	}
	return nil
}

// assemble puts the segments in render order and fills in the tools.
func (d *anthDecoder) assemble() {
	segs := slices.Clone(d.toolSegs)
	if d.deferred || d.changes {
		segs = append(segs, Segment{Bytes: []byte(anthScaffolding), Text: anthScaffolding})
	}
	segs = append(segs, d.systemSegs...)
	d.ex.Segments = append(segs, d.msgSegs...)
	for _, t := range d.avail {
		d.ex.Tools = append(d.ex.Tools, t.toolDef())
	}
}

// anthTextSegment is a text block's segment: the text is counted, the
// block (with its role, since the same text renders differently in
// another turn) identifies it.
func anthTextSegment(role string, block map[string]any, text string, ttl TTL) Segment {
	b := append([]byte(role+":"), canonical(block)...)
	return Segment{Bytes: b, Text: text, Breakpoint: ttl}
}
