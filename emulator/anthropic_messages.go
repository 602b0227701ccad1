package emulator

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/internal/adapt"
)

// anthMsg is a decoded message: what the conversation rules and the turns
// need.
type anthMsg struct {
	idx    int
	role   string
	blocks []anthBlock
	// hidden marks a clear_at "next_user_message" system message once a
	// later user message exists: it renders nothing.
	hidden bool
	// effortOnly marks a system message with output_config and no
	// content, which may sit anywhere.
	effortOnly bool
}

// anthBlock is a decoded content block.
type anthBlock struct {
	k    int
	typ  string
	text string
	// A tool_use's id, name and input; a tool_result's tool_use_id and
	// is_error.
	id, name string
	input    json.RawMessage
	isError  bool
}

// The content block types of user and assistant messages. Blocks the
// emulator does not model (documents, server tool results, ...) are
// accepted with their type's required shape unchecked, and render as
// their canonical JSON.
var (
	anthUserBlocks      = []string{"text", "image", "document", "search_result", "tool_result", "container_upload"}
	anthAssistantBlocks = []string{"text", "thinking", "redacted_thinking", "tool_use", "server_tool_use",
		"web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
		"bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result",
		"mcp_tool_use", "mcp_tool_result", "container_upload"}
	anthBlockTags = []string{"text", "image", "document", "search_result", "thinking", "redacted_thinking", "tool_use",
		"tool_result", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
		"bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result",
		"mcp_tool_use", "mcp_tool_result", "container_upload"}
	anthResultContentTags = []string{"text", "image", "document", "search_result", "tool_reference", "browser_state"}
)

// messages decodes the conversation. Consecutive user (or assistant)
// messages are merged into one turn, as the current API does (the old
// "roles must alternate" error is gone); consecutive system messages form
// one section for the placement rules.
func (d *anthDecoder) messages(list []any) *Error {
	lastUser := -1
	for i, raw := range list {
		if m, ok := raw.(map[string]any); ok && m["role"] == "user" {
			lastUser = i
		}
	}
	for i, raw := range list {
		o, e := anthAsObj(anthJoin("messages", i), raw)
		if e != nil {
			return e
		}
		role, e := anthTag(o, "role", []string{"user", "assistant", "system"})
		if e != nil {
			return e
		}
		m := &anthMsg{idx: i, role: role}
		if role == "system" {
			e = d.systemMessage(o, m, i < lastUser)
		} else {
			e = d.turn(o, m, i == len(list)-1)
		}
		if e != nil {
			return e
		}
		d.msgs = append(d.msgs, m)
	}
	entries := anthEntries(d.msgs)
	if e := anthPlacement(entries); e != nil {
		return e
	}
	if e := anthPairing(entries); e != nil {
		return e
	}
	d.ex.Turns = anthTurns(entries)
	return nil
}

// anthContent returns a message's content as blocks: a string is one text
// block. empty is set for an empty string or list.
func anthContent(o anthObj) (blocks []any, empty bool, e *Error) {
	v, e := o.required("content")
	if e != nil {
		return nil, false, e
	}
	switch c := v.(type) {
	case string:
		if c == "" {
			return nil, true, nil
		}
		return []any{map[string]any{"type": "text", "text": c}}, false, nil
	case []any:
		return c, len(c) == 0, nil
	}
	return nil, false, anthInvalid("%s: Input should be a valid string or a valid list of content blocks", o.at("content"))
}

// turn decodes a user or assistant message.
func (d *anthDecoder) turn(o anthObj, m *anthMsg, last bool) *Error {
	if e := o.extra("role", "content"); e != nil {
		return e
	}
	blocks, empty, e := anthContent(o)
	if e != nil {
		return e
	}
	if empty {
		if last && m.role == "assistant" {
			return nil
		}
		return anthInvalid("%s: all messages must have non-empty content except for the optional final assistant message", o.path)
	}
	allowed := anthUserBlocks
	if m.role == "assistant" {
		allowed = anthAssistantBlocks
	}
	for k, raw := range blocks {
		b, e := anthAsObj(anthJoin(o.at("content"), k), raw)
		if e != nil {
			return e
		}
		typ, e := anthTag(b, "type", anthBlockTags)
		if e != nil {
			return e
		}
		if !slices.Contains(allowed, typ) {
			return anthInvalid("%s: `%s` blocks are not allowed in %s messages", b.path, typ, m.role)
		}
		blk, e := d.block(b, m.role, typ)
		if e != nil {
			return e
		}
		blk.k, blk.typ = k, typ
		m.blocks = append(m.blocks, blk)
	}
	return nil
}

// addSeg appends a message segment; consecutive segments of the same run
// kind (tool_use, tool_result) share a Run id.
func (d *anthDecoder) addSeg(s Segment, kind string) {
	switch {
	case kind == "":
		d.runKind = ""
	case kind != d.runKind:
		d.run++
		d.runKind = kind
		s.Run = d.run
	default:
		s.Run = d.run
	}
	d.msgSegs = append(d.msgSegs, s)
}

// block decodes one user or assistant content block and renders it.
func (d *anthDecoder) block(b anthObj, role, typ string) (anthBlock, *Error) {
	var blk anthBlock
	bpath := b.path
	b.path = anthJoin(bpath, typ)
	switch typ {
	case "text":
		text, ttl, e := d.textBlock(b)
		if e != nil {
			return blk, e
		}
		blk.text = text
		d.addSeg(anthTextSegment(role, b.m, text, ttl), "")
	case "thinking":
		if e := b.extra("type", "thinking", "signature"); e != nil {
			return blk, e
		}
		text, _, e := b.str("thinking", true)
		if e != nil {
			return blk, e
		}
		if _, _, e := b.str("signature", true); e != nil {
			return blk, e
		}
		d.addSeg(Segment{Bytes: canonical(b.m), Text: text}, "")
	case "redacted_thinking":
		if e := b.extra("type", "data"); e != nil {
			return blk, e
		}
		if _, _, e := b.str("data", true); e != nil {
			return blk, e
		}
		d.addSeg(Segment{Bytes: canonical(b.m)}, "")
	case "image":
		if e := b.extra("type", "source", "cache_control", "transformations"); e != nil {
			return blk, e
		}
		if _, _, e := b.obj("source", true); e != nil {
			return blk, e
		}
		ttl, e := d.breakpoint(b)
		if e != nil {
			return blk, e
		}
		// Images are counted as a short placeholder: the emulator does
		// not know their size.
		d.addSeg(Segment{Bytes: canonical(b.m), Text: "[image]", Breakpoint: ttl}, "")
	case "tool_use":
		return d.toolUse(b)
	case "tool_result":
		return d.toolResult(b)
	case "tool_search_tool_result":
		return blk, d.toolSearchResult(b)
	default:
		ttl, e := d.breakpoint(b)
		if e != nil {
			return blk, e
		}
		d.addSeg(Segment{Bytes: canonical(b.m), Breakpoint: ttl}, "")
	}
	return blk, nil
}

// toolUse decodes a tool_use block.
func (d *anthDecoder) toolUse(b anthObj) (anthBlock, *Error) {
	blk := anthBlock{}
	if e := b.extra("type", "id", "name", "input", "cache_control", "caller", "toolset_name"); e != nil {
		return blk, e
	}
	id, _, e := b.str("id", true)
	if e != nil {
		return blk, e
	}
	if !anthToolID.MatchString(id) {
		return blk, anthInvalid("%s: String should match pattern '^[a-zA-Z0-9_-]+$'", b.at("id"))
	}
	name, _, e := b.str("name", true)
	if e != nil {
		return blk, e
	}
	input, _, e := b.obj("input", true)
	if e != nil {
		return blk, e
	}
	ttl, e := d.breakpoint(b)
	if e != nil {
		return blk, e
	}
	blk.id, blk.name, blk.input = id, name, adapt.JSON(input.m)
	d.addSeg(Segment{Bytes: canonical(b.m), Breakpoint: ttl}, "tool_use")
	return blk, nil
}

// toolResult decodes a tool_result block. tool_reference items in its
// content resolve to tools; a deferred one renders its definition right
// after the result and becomes callable.
func (d *anthDecoder) toolResult(b anthObj) (anthBlock, *Error) {
	blk := anthBlock{}
	if e := b.extra("type", "tool_use_id", "content", "is_error", "cache_control", "toolset_name"); e != nil {
		return blk, e
	}
	id, _, e := b.str("tool_use_id", true)
	if e != nil {
		return blk, e
	}
	if !anthToolID.MatchString(id) {
		return blk, anthInvalid("%s: String should match pattern '^[a-zA-Z0-9_-]+$'", b.at("tool_use_id"))
	}
	isErr, e := b.boolean("is_error")
	if e != nil {
		return blk, e
	}
	blk.id, blk.isError = id, isErr
	ttl, e := d.breakpoint(b)
	if e != nil {
		return blk, e
	}
	var texts []string
	var refs []*anthTool
	switch c := b.m["content"].(type) {
	case nil:
	case string:
		texts = append(texts, c)
	case []any:
		for j, raw := range c {
			item, e := anthAsObj(anthJoin(b.at("content"), j), raw)
			if e != nil {
				return blk, e
			}
			typ, e := anthTag(item, "type", anthResultContentTags)
			if e != nil {
				return blk, e
			}
			item.path = anthJoin(item.path, typ)
			var itemTTL TTL
			switch typ {
			case "text":
				text, t, e := d.textBlock(item)
				if e != nil {
					return blk, e
				}
				texts, itemTTL = append(texts, text), t
			case "tool_reference":
				if e := item.extra("type", "tool_name", "cache_control"); e != nil {
					return blk, e
				}
				name, _, e := item.str("tool_name", true)
				if e != nil {
					return blk, e
				}
				t, e := d.resolve(item.at("tool_name"), name)
				if e != nil {
					return blk, e
				}
				refs = append(refs, t)
				if itemTTL, e = d.breakpoint(item); e != nil {
					return blk, e
				}
			default:
				if itemTTL, e = d.breakpoint(item); e != nil {
					return blk, e
				}
			}
			if itemTTL != "" {
				ttl = itemTTL
			}
		}
	default:
		return blk, anthInvalid("%s: Input should be a valid string or a valid list of content blocks", b.at("content"))
	}
	blk.text = strings.Join(texts, "\n")
	segs := []Segment{{Bytes: canonical(b.m), Text: blk.text}}
	for _, t := range refs {
		if t.deferred {
			segs = append(segs, Segment{Bytes: t.rendered(), ToolDef: true})
		}
		d.offer(t)
	}
	// A breakpoint inside the result covers the definitions it expands.
	segs[len(segs)-1].Breakpoint = ttl
	for _, s := range segs {
		d.addSeg(s, "tool_result")
	}
	return blk, nil
}

// toolSearchResult decodes a server tool search result: its references
// expand deferred tools like those of a tool_result.
func (d *anthDecoder) toolSearchResult(b anthObj) *Error {
	ttl, e := d.breakpoint(b)
	if e != nil {
		return e
	}
	segs := []Segment{{Bytes: canonical(b.m)}}
	if c, ok := b.m["content"].(map[string]any); ok && c["type"] == "tool_search_tool_search_result" {
		refs, _ := c["tool_references"].([]any)
		for j, raw := range refs {
			ref, _ := raw.(map[string]any)
			name, _ := ref["tool_name"].(string)
			t, e := d.resolve(anthJoin(b.path, "content", "tool_references", j, "tool_name"), name)
			if e != nil {
				return e
			}
			if t.deferred {
				segs = append(segs, Segment{Bytes: t.rendered(), ToolDef: true})
			}
			d.offer(t)
		}
	}
	segs[len(segs)-1].Breakpoint = ttl
	for _, s := range segs {
		d.addSeg(s, "")
	}
	return nil
}
