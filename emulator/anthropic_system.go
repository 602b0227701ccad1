package emulator

import (
	"fmt"
	"net/http"
	"strings"
)

// anthSystemRoleModels are the model families that take mid-conversation
// system messages (provider-apis §1.4). Other Claude models answer 400;
// models that are not Claude's (test names) are let through.
var anthSystemRoleModels = []string{"claude-opus-4-8", "claude-opus-5", "claude-fable-5", "claude-mythos-5",
	"claude-sonnet-5-5", "claude-haiku-5-5"}

func anthSystemRoleSupported(model string) bool {
	if !strings.HasPrefix(model, "claude-") {
		return true
	}
	for _, p := range anthSystemRoleModels {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// systemMessage decodes a role "system" message: text, tool_addition and
// tool_removal blocks (the latter two behind their betas), clear_at and
// output_config behind theirs. future says a user message follows, which
// hides a clear_at "next_user_message" message.
func (d *anthDecoder) systemMessage(o anthObj, m *anthMsg, future bool) *Error {
	if !anthSystemRoleSupported(d.ex.Model) {
		return anthInvalid("%s: role 'system' is not supported on this model", o.at("role"))
	}
	allowed := []string{"role", "content"}
	if d.betas[anthBetaClearAt] {
		allowed = append(allowed, "clear_at")
	}
	if d.messageEffort() {
		allowed = append(allowed, "output_config")
	}
	if e := o.extra(allowed...); e != nil {
		return e
	}
	clearAt, e := o.oneOf("clear_at", false, "next_user_message", "never")
	if e != nil {
		return e
	}
	oc, hasOC, e := o.obj("output_config", false)
	if e != nil {
		return e
	}
	if hasOC {
		if e := oc.extra("effort"); e != nil {
			return e
		}
		if _, e := oc.oneOf("effort", false, anthEfforts...); e != nil {
			return e
		}
	}
	var blocks []any
	empty := true
	if o.has("content") {
		if blocks, empty, e = anthContent(o); e != nil {
			return e
		}
	}
	if empty {
		if hasOC {
			m.effortOnly = true
			return nil
		}
		return anthInvalid("%s: all messages must have non-empty content except for the optional final assistant message", o.path)
	}
	turnScoped := clearAt == "next_user_message"
	if turnScoped && hasOC {
		return anthInvalid("%s: output_config cannot be set on a system message with clear_at 'next_user_message'", o.at("output_config"))
	}
	m.hidden = turnScoped && future
	tags := []string{"text"}
	if d.toolChanges() {
		tags = append(tags, "tool_addition", "tool_removal")
	}
	for k, raw := range blocks {
		b, e := anthAsObj(anthJoin(o.at("content"), k), raw)
		if e != nil {
			return e
		}
		typ, e := anthTag(b, "type", tags)
		if e != nil {
			return e
		}
		if turnScoped && typ != "text" {
			return anthInvalid("%s: a system message with clear_at 'next_user_message' may only hold text blocks", b.path)
		}
		if turnScoped && b.has("cache_control") {
			return anthInvalid("%s: cache_control cannot be set on a system message with clear_at 'next_user_message'", b.at("cache_control"))
		}
		blk := anthBlock{k: k, typ: typ}
		b.path = anthJoin(b.path, typ)
		switch typ {
		case "text":
			text, ttl, e := d.textBlock(b)
			if e != nil {
				return e
			}
			blk.text = text
			if !m.hidden {
				d.addSeg(anthTextSegment("system", b.m, text, ttl), "")
			}
		case "tool_addition":
			d.changes = true
			if e := d.toolAddition(b); e != nil {
				return e
			}
		case "tool_removal":
			d.changes = true
			if e := d.toolRemoval(b); e != nil {
				return e
			}
		}
		m.blocks = append(m.blocks, blk)
	}
	return nil
}

// anthRefTags are the tool reference kinds of a tool change.
var anthRefTags = []string{"tool_reference", "mcp_tool_reference", "mcp_toolset_reference"}

// toolAddition decodes a tool_addition: a reference to a top-level tool
// or an earlier definition, or (inline-tools beta) a definition. A
// definition, or a reference to a deferred tool, renders the tool's
// definition in place; the tool is callable from here on.
func (d *anthDecoder) toolAddition(b anthObj) *Error {
	if e := b.extra("type", "tool", "cache_control"); e != nil {
		return e
	}
	tool, _, e := b.obj("tool", true)
	if e != nil {
		return e
	}
	tags := anthRefTags
	if d.betas[anthBetaInlineTools] {
		tags = append(tags[:len(tags):len(tags)], "tool_definition")
	}
	typ, e := anthTag(tool, "type", tags)
	if e != nil {
		return e
	}
	tool.path = anthJoin(tool.path, typ)
	switch typ {
	case "tool_reference":
		if e := tool.extra("type", "name"); e != nil {
			return e
		}
		name, _, e := tool.str("name", true)
		if e != nil {
			return e
		}
		t, e := d.resolve(tool.at("name"), name)
		if e != nil {
			return e
		}
		ttl, e := d.breakpoint(b)
		if e != nil {
			return e
		}
		if t.deferred {
			d.addSeg(Segment{Bytes: t.rendered(), ToolDef: true, Breakpoint: ttl}, "")
		} else {
			d.addSeg(Segment{Bytes: canonical(b.m), Breakpoint: ttl}, "")
		}
		d.offer(t)
		return nil
	case "tool_definition":
		return d.toolDefinition(b, tool)
	}
	// MCP references: the emulator does not model MCP servers.
	ttl, e := d.breakpoint(b)
	if e != nil {
		return e
	}
	d.addSeg(Segment{Bytes: canonical(b.m), Breakpoint: ttl}, "")
	return nil
}

// toolDefinition decodes an inline definition. A same-name custom tool is
// replaced from here on; a name of another tool type conflicts. A
// deferred definition only defines the tool, for a later reference.
func (d *anthDecoder) toolDefinition(b, tool anthObj) *Error {
	if e := tool.extra("type", "definition"); e != nil {
		return e
	}
	raw, e := tool.required("definition")
	if e != nil {
		return e
	}
	if b.has("cache_control") {
		if def, ok := raw.(map[string]any); ok && def["cache_control"] != nil {
			return anthInvalid("%s: cache_control may be set on the tool_addition block or inside its definition, not both", b.at("cache_control"))
		}
	}
	t, defTTL, e := d.tool(tool.at("definition"), raw)
	if e != nil {
		return e
	}
	if old := d.known[t.name]; old != nil && old.kind != t.kind {
		return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: anthNameConflict,
			Message: fmt.Sprintf("%s: the inline definition of '%s' (%s) reuses the name of a tool of another type (%s)",
				tool.at("definition"), t.name, t.kind, old.kind)}
	}
	if t.deferred && b.has("cache_control") {
		return anthInvalid("Tool '%s' cannot have both defer_loading=true and cache_control set. Tools with defer_loading cannot use prompt caching.", t.name)
	}
	ttl, e := d.breakpoint(b)
	if e != nil {
		return e
	}
	if defTTL != "" {
		ttl = defTTL
	}
	d.known[t.name] = t
	if t.deferred {
		return nil
	}
	d.addSeg(Segment{Bytes: t.rendered(), ToolDef: true, Breakpoint: ttl}, "")
	d.offer(t)
	return nil
}

// toolRemoval decodes a tool_removal: references only.
func (d *anthDecoder) toolRemoval(b anthObj) *Error {
	if e := b.extra("type", "tool", "cache_control"); e != nil {
		return e
	}
	tool, _, e := b.obj("tool", true)
	if e != nil {
		return e
	}
	typ, e := anthTag(tool, "type", anthRefTags)
	if e != nil {
		return e
	}
	tool.path = anthJoin(tool.path, typ)
	if typ == "tool_reference" {
		if e := tool.extra("type", "name"); e != nil {
			return e
		}
		name, _, e := tool.str("name", true)
		if e != nil {
			return e
		}
		if _, e := d.resolve(tool.at("name"), name); e != nil {
			return e
		}
		d.withdraw(name)
	}
	ttl, e := d.breakpoint(b)
	if e != nil {
		return e
	}
	d.addSeg(Segment{Bytes: canonical(b.m), Breakpoint: ttl}, "")
	return nil
}
