package emulator

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
)

// chatCodec speaks OpenAI's Chat Completions API (POST
// /v1/chat/completions), with Kimi's extension: a system message may
// carry a tools array, tools available from there on.
type chatCodec struct{}

// chatFields are the request fields the emulator accepts.
var chatFields = []string{
	"model", "messages", "tools", "tool_choice", "stream", "stream_options", "max_completion_tokens", "max_tokens",
	"prompt_cache_key", "prompt_cache_retention", "prompt_cache_options", "temperature", "top_p", "n", "seed", "stop",
	"user", "parallel_tool_calls", "response_format", "reasoning_effort", "store", "metadata", "frequency_penalty",
	"presence_penalty", "logprobs", "top_logprobs", "logit_bias", "service_tier", "safety_identifier", "verbosity",
}

// chatTTLs are the breakpoint lifetimes Chat Completions offers.
var chatTTLs = []string{"30m"}

// chatDecoder is one Chat Completions request being decoded.
type chatDecoder struct {
	c        oaiCheck
	ex       *Exchange
	explicit bool
	mode     string
	ttl      TTL
	tools    oaiToolList
	marks    []int
	implicit int
	// pending are the tool call ids of the last assistant message not
	// yet answered, in order; run is that message's index, -1 once a
	// message other than a tool result has followed it.
	pending []string
	run     int
}

func (chatCodec) decode(h http.Header, body []byte) (*Exchange, *Error) {
	root, e := oaiParse(body)
	if e != nil {
		return nil, e
	}
	d := &chatDecoder{ex: &Exchange{API: OpenAIChat}, implicit: -1, run: -1}
	includeUsage := d.decode(oaiObj{c: &d.c, m: root})
	if d.c.err != nil {
		return nil, d.c.err
	}
	d.ex.IncludeUsage = includeUsage
	return d.ex, nil
}

// decode reads the request and reports stream_options.include_usage.
func (d *chatDecoder) decode(r oaiObj) bool {
	r.known(chatFields...)
	r.require("model", "messages")
	model := r.str("model")
	if r.has("model") && model == "" {
		d.c.fail(oaiInvalid("model", "empty_string",
			"Invalid 'model': empty string. Expected a string with minimum length 1, but got an empty string instead."))
	}
	d.ex.Model = model
	d.ex.Stream = r.boolean("stream")
	includeUsage := false
	if so := r.obj("stream_options"); so.m != nil {
		so.known("include_usage", "include_obfuscation")
		includeUsage = so.boolean("include_usage")
		so.boolean("include_obfuscation")
		if !d.ex.Stream && d.c.ok() {
			d.c.fail(oaiInvalid("stream_options", "", "The 'stream_options' parameter is only allowed when 'stream' is enabled."))
		}
	}
	if n := r.integer("max_completion_tokens", 1); n > 0 {
		d.ex.MaxTokens = int(n)
	} else {
		d.ex.MaxTokens = int(r.integer("max_tokens", 1))
	}
	d.ex.Namespace = r.str("prompt_cache_key")
	r.enum("prompt_cache_retention", "in_memory", "24h")
	d.mode, d.ttl = r.promptCacheOptions(chatTTLs)
	d.explicit = explicitCacheModel(model)
	r.number("temperature", 0, 2)
	r.number("top_p", 0, 1)
	r.number("frequency_penalty", -2, 2)
	r.number("presence_penalty", -2, 2)
	if n := r.integer("n", 1); n > 1 && d.c.ok() {
		d.c.fail(oaiInvalid("n", "invalid_value", "Invalid 'n': the emulator answers with one choice; got %d. Leave 'n' out or set it to 1.", n))
	}
	r.integer("seed", math.MinInt64)
	switch stop := r.get("stop"); x := stop.(type) {
	case nil, string:
		r.str("stop")
	case []any:
		if len(x) > 4 && d.c.ok() {
			d.c.fail(oaiInvalid("stop", "array_above_max_length",
				"Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length %d instead.", len(x)))
		}
		for i, s := range x {
			if _, ok := s.(string); !ok && d.c.ok() {
				d.c.fail(oaiWrongType(oaiIndex("stop", i), "a string", s))
			}
		}
	default:
		d.c.fail(oaiWrongType("stop", "one of a string or array of strings", stop))
	}
	r.str("user")
	r.strMax("safety_identifier", 128)
	r.boolean("parallel_tool_calls")
	r.boolean("store")
	r.boolean("logprobs")
	r.integer("top_logprobs", 0)
	r.obj("logit_bias")
	r.metadata("metadata")
	r.enum("reasoning_effort", "none", "minimal", "low", "medium", "high", "xhigh")
	r.enum("verbosity", "low", "medium", "high")
	r.enum("service_tier", "auto", "default", "flex", "priority", "scale")
	var schema map[string]any
	if f := r.obj("response_format"); f.m != nil {
		f.require("type")
		switch f.enum("type", "text", "json_object", "json_schema") {
		case "json_schema":
			f.known("type", "json_schema")
			f.require("json_schema")
			js := f.obj("json_schema")
			js.known("name", "schema", "strict", "description")
			js.require("name")
			js.str("name")
			js.obj("schema")
			js.boolean("strict")
			js.str("description")
			schema = js.m
		default:
			f.known("type")
		}
	}

	d.topTools(r)
	if schema != nil && d.c.ok() {
		// A structured-output schema is rendered before the messages.
		d.segment(Segment{Bytes: canonical(map[string]any{"response_format": schema})})
	}
	for i, v := range r.array("messages", 1) {
		if !d.c.ok() {
			break
		}
		d.message(i, v)
	}
	if d.c.ok() && len(d.pending) > 0 {
		d.c.fail(d.unanswered())
	}
	d.toolChoice(r)
	if !d.c.ok() {
		return false
	}
	if d.explicit {
		oaiMarks(d.ex.Segments, d.marks, d.implicit, d.mode, d.ttl)
	}
	d.ex.Tools = d.tools.defs
	return includeUsage
}

func (d *chatDecoder) segment(s Segment) int {
	d.ex.Segments = append(d.ex.Segments, s)
	return len(d.ex.Segments) - 1
}

func (d *chatDecoder) mark(i int, ttl TTL) {
	if ttl == "" || !d.explicit {
		return
	}
	d.ex.Segments[i].Breakpoint = ttl
	d.marks = append(d.marks, i)
}

// tool reads one {type:"function", function:{...}} tool.
func (d *chatDecoder) tool(path string, v any, names map[string]bool) {
	t := d.c.object(path, v)
	t.known("type", "function")
	t.require("type", "function")
	t.enum("type", "function")
	f := t.obj("function")
	f.known("name", "description", "parameters", "strict")
	f.require("name")
	name := f.toolName("name")
	desc := f.str("description")
	params := f.schema("parameters", name, f.boolean("strict"))
	if !d.c.ok() {
		return
	}
	if names[name] {
		d.c.fail(oaiDuplicate(f.at("name"), name))
		return
	}
	names[name] = true
	d.segment(Segment{Bytes: canonical(t.m), ToolDef: true})
	d.tools.add(ToolDef{Name: name, Description: desc, Parameters: params})
}

func (d *chatDecoder) topTools(r oaiObj) {
	names := map[string]bool{}
	for i, v := range r.array("tools", 0) {
		d.tool(oaiIndex("tools", i), v, names)
	}
}

// toolChoice checks tool_choice against the tools callable at the end.
func (d *chatDecoder) toolChoice(r oaiObj) {
	switch v := r.get("tool_choice"); v.(type) {
	case nil:
	case string:
		r.enum("tool_choice", "none", "auto", "required")
	case map[string]any:
		tc := r.obj("tool_choice")
		tc.require("type")
		switch tc.enum("type", "function", "allowed_tools") {
		case "function":
			tc.known("type", "function")
			tc.require("function")
			f := tc.obj("function")
			f.known("name")
			f.require("name")
			d.chosen(f.at("name"), f.str("name"))
		case "allowed_tools":
			tc.known("type", "allowed_tools")
			tc.require("allowed_tools")
			at := tc.obj("allowed_tools")
			at.known("mode", "tools")
			at.require("mode", "tools")
			at.enum("mode", "auto", "required")
			for i, v := range at.array("tools", 1) {
				t := d.c.object(oaiIndex(at.at("tools"), i), v)
				t.known("type", "function")
				t.require("type", "function")
				t.enum("type", "function")
				f := t.obj("function")
				f.known("name")
				f.require("name")
				d.chosen(f.at("name"), f.str("name"))
			}
		}
	default:
		d.c.fail(oaiWrongType("tool_choice", "one of a string or object", v))
	}
}

func (d *chatDecoder) chosen(path, name string) {
	if d.c.ok() && !d.tools.has(name) {
		d.c.fail(oaiInvalid(path, "invalid_value", "Tool choice '%s' not found in 'tools' parameter.", name))
	}
}

// unanswered is the error for tool calls without tool messages.
func (d *chatDecoder) unanswered() *Error {
	return oaiInvalid(fmt.Sprintf("messages.[%d].role", d.run), "",
		"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "+
			"The following tool_call_ids did not have response messages: %s", strings.Join(d.pending, ", "))
}

// message reads one message.
func (d *chatDecoder) message(i int, v any) {
	path := oaiIndex("messages", i)
	m := d.c.object(path, v)
	m.require("role")
	role := m.enum("role", "system", "assistant", "user", "tool", "developer")
	if !d.c.ok() {
		return
	}
	if role == "tool" {
		d.toolMessage(i, m)
		return
	}
	if len(d.pending) > 0 {
		d.c.fail(d.unanswered())
		return
	}
	d.run = -1
	switch role {
	case "system", "developer":
		if role == "system" {
			m.known("role", "content", "name", "tools")
		} else {
			m.known("role", "content", "name")
		}
		if !m.has("tools") {
			m.require("content")
		}
		m.str("name")
		text := d.content(m, role, []string{"text"})
		names := map[string]bool{}
		for j, t := range m.array("tools", 0) {
			d.tool(oaiIndex(m.at("tools"), j), t, names)
		}
		if d.c.ok() && m.has("content") {
			d.ex.Turns = append(d.ex.Turns, Turn{Role: "system", Text: text})
		}
	case "user":
		m.known("role", "content", "name")
		m.require("content")
		m.str("name")
		start := len(d.ex.Segments)
		text := d.content(m, role, []string{"text", "image_url", "input_audio", "file"})
		if len(d.ex.Segments) > start {
			d.implicit = len(d.ex.Segments) - 1
		}
		d.ex.Turns = append(d.ex.Turns, Turn{Role: "user", Text: text})
	case "assistant":
		d.assistant(i, m)
	}
}

// assistant reads an assistant message: reasoning_content, content and
// tool calls, each a segment.
func (d *chatDecoder) assistant(i int, m oaiObj) {
	m.known("role", "content", "refusal", "tool_calls", "name", "reasoning_content", "audio")
	if !m.has("content") && !m.has("tool_calls") {
		d.c.fail(oaiMissing(m.at("content")))
		return
	}
	m.str("name")
	m.obj("audio")
	if rc := m.str("reasoning_content"); rc != "" && d.c.ok() {
		d.segment(Segment{Bytes: oaiTextBytes("assistant", "reasoning_content", rc), Text: rc})
	}
	text := d.content(m, "assistant", []string{"text", "refusal"})
	if refusal := m.str("refusal"); refusal != "" && d.c.ok() {
		d.segment(Segment{Bytes: oaiTextBytes("assistant", "refusal", refusal), Text: refusal})
	}
	turn := Turn{Role: "assistant", Text: text}
	seen := map[string]bool{}
	for j, v := range m.array("tool_calls", 1) {
		tc := d.c.object(oaiIndex(m.at("tool_calls"), j), v)
		tc.known("id", "type", "function")
		tc.require("id", "type", "function")
		id := tc.str("id")
		tc.enum("type", "function")
		f := tc.obj("function")
		f.known("name", "arguments")
		f.require("name", "arguments")
		name := f.str("name")
		args := f.str("arguments")
		if !d.c.ok() {
			return
		}
		d.segment(Segment{Bytes: canonical(tc.m)})
		turn.Calls = append(turn.Calls, Call{ID: id, Name: name, Arguments: oaiArguments(args)})
		if !seen[id] {
			d.pending = append(d.pending, id)
		}
		seen[id] = true
	}
	if len(turn.Calls) > 0 {
		d.run = i
	}
	d.ex.Turns = append(d.ex.Turns, turn)
}

// toolMessage reads a tool message, which must answer a call of the
// assistant message its run of tool messages follows: one segment, marked
// when any of its parts is.
func (d *chatDecoder) toolMessage(i int, m oaiObj) {
	m.known("role", "tool_call_id", "content")
	m.require("tool_call_id", "content")
	id := m.str("tool_call_id")
	if !d.c.ok() {
		return
	}
	at := slices.Index(d.pending, id)
	if d.run < 0 || at < 0 {
		d.c.fail(oaiInvalid(fmt.Sprintf("messages.[%d].role", i), "",
			"Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'."))
		return
	}
	d.pending = slices.Delete(d.pending, at, at+1)
	var (
		texts []string
		ttl   TTL
	)
	for _, p := range d.parts(m, "tool", []string{"text"}) {
		texts = append(texts, p.text)
		if p.ttl != "" {
			ttl = p.ttl
		}
	}
	if !d.c.ok() {
		return
	}
	text := strings.Join(texts, "\n")
	seg := d.segment(Segment{Bytes: canonical(map[string]any{"role": "tool", "tool_call_id": id, "content": text}), Text: text})
	d.mark(seg, ttl)
	d.implicit = seg
	d.ex.Turns = append(d.ex.Turns, Turn{Role: "tool", CallID: id, Text: text})
}

// chatPart is a content part read: its segment, breakpoint and text.
type chatPart struct {
	seg    Segment
	ttl    TTL
	text   string
	isText bool
}

// content reads a message's content into a segment per part; it returns
// the text parts joined.
func (d *chatDecoder) content(m oaiObj, role string, allowed []string) string {
	var texts []string
	for _, p := range d.parts(m, role, allowed) {
		d.mark(d.segment(p.seg), p.ttl)
		if p.isText {
			texts = append(texts, p.text)
		}
	}
	return strings.Join(texts, "\n")
}

// parts reads a message's content: a string or parts of the allowed
// types.
func (d *chatDecoder) parts(m oaiObj, role string, allowed []string) []chatPart {
	switch v := m.get("content"); x := v.(type) {
	case nil:
		return nil
	case string:
		return []chatPart{{seg: Segment{Bytes: oaiTextBytes(role, "text", x), Text: x}, text: x, isText: true}}
	case []any:
		var out []chatPart
		for j, pv := range x {
			p := d.c.object(oaiIndex(m.at("content"), j), pv)
			p.require("type")
			typ := p.enum("type", allowed...)
			if !d.c.ok() {
				return nil
			}
			switch typ {
			case "text", "refusal":
				p.known("type", typ, "prompt_cache_breakpoint")
				p.require(typ)
				text := p.str(typ)
				out = append(out, chatPart{seg: Segment{Bytes: oaiTextBytes(role, typ, text), Text: text},
					ttl: p.breakpoint(chatTTLs, d.ttl), text: text, isText: true})
				continue
			case "image_url":
				p.known("type", "image_url", "prompt_cache_breakpoint")
				p.require("image_url")
				img := p.obj("image_url")
				img.known("url", "detail")
				img.require("url")
				img.str("url")
				img.enum("detail", "low", "high", "auto")
			case "input_audio":
				p.known("type", "input_audio", "prompt_cache_breakpoint")
				p.require("input_audio")
				a := p.obj("input_audio")
				a.known("data", "format")
				a.require("data", "format")
				a.str("data")
				a.enum("format", "wav", "mp3")
			case "file":
				p.known("type", "file", "prompt_cache_breakpoint")
				p.require("file")
				f := p.obj("file")
				f.known("file_id", "file_data", "filename")
				f.str("file_id")
				f.str("file_data")
				f.str("filename")
			}
			part := withoutKeys(p.m)
			part["role"] = role
			out = append(out, chatPart{seg: Segment{Bytes: canonical(part), Text: oaiImageText}, ttl: p.breakpoint(chatTTLs, d.ttl)})
		}
		if !d.c.ok() {
			return nil
		}
		return out
	default:
		d.c.fail(oaiWrongType(m.at("content"), "one of a string or array of objects", v))
		return nil
	}
}
