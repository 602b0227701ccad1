package emulator

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// responsesCodec speaks OpenAI's Responses API (POST /v1/responses).
type responsesCodec struct{}

// responsesFields are the request fields the emulator accepts.
var responsesFields = []string{
	"model", "input", "instructions", "tools", "tool_choice", "stream", "stream_options", "store",
	"prompt_cache_key", "prompt_cache_retention", "prompt_cache_options", "reasoning", "text", "include",
	"metadata", "parallel_tool_calls", "max_output_tokens", "truncation", "previous_response_id", "conversation",
	"temperature", "top_p", "service_tier", "safety_identifier", "user", "max_tool_calls", "top_logprobs",
	"client_metadata",
}

// responsesTTLs are the breakpoint lifetimes the Responses API offers.
var responsesTTLs = []string{"30m", "12h"}

// responsesInclude are the values of include[].
var responsesInclude = []string{
	"reasoning.encrypted_content", "message.output_text.logprobs", "message.input_image.image_url",
	"file_search_call.results", "web_search_call.results", "web_search_call.action.sources",
	"computer_call_output.output.image_url", "code_interpreter_call.outputs",
}

// responsesItemTypes are the input item types the emulator accepts.
var responsesItemTypes = []string{
	"message", "function_call", "function_call_output", "additional_tools", "tool_search_call",
	"tool_search_output", "reasoning", "item_reference",
}

// responsesDecoder is one Responses request being decoded.
type responsesDecoder struct {
	c  oaiCheck
	ex *Exchange
	// explicit: the model caches at breakpoints (gpt-5.6 on); mode and
	// ttl are prompt_cache_options' mode and default lifetime.
	explicit bool
	mode     string
	ttl      TTL
	tools    oaiToolList
	// marks are the segments with an explicit breakpoint; implicit is
	// the last segment of the last user message or function output.
	marks    []int
	implicit int
	// calls are the function_call ids in order; answered those with an
	// output; searches the tool_search_call ids.
	calls    []string
	called   map[string]bool
	answered map[string]bool
	searches map[string]bool
}

func (responsesCodec) decode(_ http.Header, body []byte) (*Exchange, *Error) {
	root, e := oaiParse(body)
	if e != nil {
		return nil, e
	}
	d := &responsesDecoder{
		ex:       &Exchange{API: OpenAIResponses},
		implicit: -1,
		called:   map[string]bool{},
		answered: map[string]bool{},
		searches: map[string]bool{},
	}
	d.run(oaiObj{c: &d.c, m: root})
	if d.c.err != nil {
		return nil, d.c.err
	}
	return d.ex, nil
}

// run validates the request and fills in the Exchange.
func (d *responsesDecoder) run(r oaiObj) {
	r.known(responsesFields...)
	r.require("model", "input")
	model := r.str("model")
	if r.has("model") && model == "" {
		d.c.fail(oaiInvalid("model", "empty_string",
			"Invalid 'model': empty string. Expected a string with minimum length 1, but got an empty string instead."))
	}
	if id := r.str("previous_response_id"); id != "" && d.c.ok() {
		d.c.fail(oaiInvalid("previous_response_id", "previous_response_not_found",
			"Previous response with id '%s' not found. The emulator stores no responses: send the whole conversation in 'input'.", id))
	}
	if r.has("conversation") && d.c.ok() {
		d.c.fail(oaiInvalid("conversation", "unsupported_parameter",
			"Unsupported parameter: 'conversation'. The emulator keeps no conversations: send the whole conversation in 'input'."))
	}
	d.ex.Model = model
	d.ex.Stream = r.boolean("stream")
	if so := r.obj("stream_options"); so.m != nil {
		so.known("include_obfuscation")
		so.boolean("include_obfuscation")
		if !d.ex.Stream && d.c.ok() {
			d.c.fail(oaiInvalid("stream_options", "", "The 'stream_options' parameter is only allowed when 'stream' is enabled."))
		}
	}
	r.boolean("store")
	r.boolean("parallel_tool_calls")
	d.ex.Namespace = r.str("prompt_cache_key")
	r.enum("prompt_cache_retention", "in_memory", "24h")
	d.mode, d.ttl = r.promptCacheOptions(responsesTTLs)
	d.explicit = explicitCacheModel(model)
	if rs := r.obj("reasoning"); rs.m != nil {
		rs.known("effort", "summary", "generate_summary", "context")
		rs.enum("effort", "none", "minimal", "low", "medium", "high", "xhigh")
		rs.enum("summary", "auto", "concise", "detailed")
		rs.enum("generate_summary", "auto", "concise", "detailed")
	}
	var schema map[string]any
	if t := r.obj("text"); t.m != nil {
		t.known("format", "verbosity")
		t.enum("verbosity", "low", "medium", "high")
		if f := t.obj("format"); f.m != nil {
			f.known("type", "name", "schema", "strict", "description")
			f.require("type")
			if f.enum("type", "text", "json_object", "json_schema") == "json_schema" {
				f.require("name", "schema")
				f.str("name")
				f.obj("schema")
				f.boolean("strict")
				f.str("description")
				schema = f.m
			}
		}
	}
	for i, v := range r.array("include", 0) {
		s, ok := v.(string)
		switch {
		case !d.c.ok():
		case !ok:
			d.c.fail(oaiWrongType(oaiIndex("include", i), "a string", v))
		case !slices.Contains(responsesInclude, s):
			d.c.fail(oaiBadValue(oaiIndex("include", i), s, responsesInclude))
		}
	}
	r.metadata("metadata")
	r.stringMap("client_metadata")
	d.ex.MaxTokens = int(r.integer("max_output_tokens", 16))
	r.enum("truncation", "auto", "disabled")
	r.number("temperature", 0, 2)
	r.number("top_p", 0, 1)
	r.enum("service_tier", "auto", "default", "flex", "priority", "scale")
	r.strMax("safety_identifier", 128)
	r.str("user")
	r.integer("max_tool_calls", 1)
	r.integer("top_logprobs", 0)

	d.topTools(r)
	if schema != nil && d.c.ok() {
		// A structured-output schema is rendered before the instructions.
		d.segment(Segment{Bytes: canonical(map[string]any{"text_format": schema})})
	}
	if instr := r.str("instructions"); instr != "" {
		// The instructions are a segment but not a turn: Turns are the
		// conversation after them.
		d.ex.Segments = append(d.ex.Segments, Segment{Bytes: canonical(map[string]any{"instructions": instr}), Text: instr})
	}
	d.input(r)
	d.toolChoice(r)
	if !d.c.ok() {
		return
	}
	for _, id := range d.calls {
		if !d.answered[id] {
			d.c.fail(oaiInvalid("input", "", "No tool output found for function call %s.", id))
			return
		}
	}
	if d.explicit {
		oaiMarks(d.ex.Segments, d.marks, d.implicit, d.mode, d.ttl)
	}
	d.ex.Tools = d.tools.defs
}

// segment appends a segment and returns its index.
func (d *responsesDecoder) segment(s Segment) int {
	d.ex.Segments = append(d.ex.Segments, s)
	return len(d.ex.Segments) - 1
}

// mark records an explicit breakpoint on a segment.
func (d *responsesDecoder) mark(i int, ttl TTL) {
	if ttl == "" || !d.explicit {
		return
	}
	d.ex.Segments[i].Breakpoint = ttl
	d.marks = append(d.marks, i)
}

// topTools reads the top-level tools: functions (deferred ones show
// their name and description only and are not callable until loaded),
// namespaces of functions, and tool_search.
func (d *responsesDecoder) topTools(r oaiObj) {
	names := map[string]bool{}
	for i, v := range r.array("tools", 0) {
		t := d.c.object(oaiIndex("tools", i), v)
		if !d.c.ok() {
			return
		}
		t.require("type")
		switch t.enum("type", "function", "namespace", "tool_search", "custom", "web_search") {
		case "function":
			def, deferred := d.function(t)
			d.unique(names, t.at("name"), def.Name)
			if deferred {
				d.segment(Segment{Bytes: canonical(oaiStub(t.m)), ToolDef: true})
				continue
			}
			d.segment(Segment{Bytes: canonical(t.m), ToolDef: true})
			d.tools.add(def)
		case "namespace":
			defs, rendered := d.namespace(t, false)
			d.unique(names, t.at("name"), t.str("name"))
			d.segment(Segment{Bytes: canonical(rendered), ToolDef: true})
			for _, def := range defs {
				d.tools.add(def)
			}
		case "custom":
			d.custom(t)
			d.unique(names, t.at("name"), t.str("name"))
			d.segment(Segment{Bytes: canonical(t.m), ToolDef: true})
		case "web_search":
			// A hosted tool: declared, and never called by the emulator.
			t.known("type", "external_web_access", "search_content_types", "filters", "user_location", "search_context_size")
			t.boolean("external_web_access")
			for j, v := range t.array("search_content_types", 0) {
				if c, ok := v.(string); d.c.ok() && (!ok || (c != "text" && c != "image")) {
					d.c.fail(oaiBadValue(oaiIndex(t.at("search_content_types"), j), fmt.Sprint(v), []string{"text", "image"}))
				}
			}
			t.obj("filters")
			t.obj("user_location")
			t.enum("search_context_size", "low", "medium", "high")
			d.segment(Segment{Bytes: canonical(t.m), ToolDef: true})
		case "tool_search":
			t.known("type", "execution", "description", "parameters")
			t.enum("execution", "server", "client")
			t.str("description")
			t.obj("parameters")
			d.segment(Segment{Bytes: canonical(t.m), ToolDef: true})
		}
	}
}

// unique records a tool name, failing on a repeat within one list.
func (d *responsesDecoder) unique(names map[string]bool, path, name string) {
	if !d.c.ok() {
		return
	}
	if names[name] {
		d.c.fail(oaiDuplicate(path, name))
	}
	names[name] = true
}

// oaiStub is a deferred function as the model sees it before it is
// loaded: its name and description.
func oaiStub(t map[string]any) map[string]any {
	stub := map[string]any{"type": t["type"], "name": t["name"], "defer_loading": true}
	if desc, ok := t["description"]; ok {
		stub["description"] = desc
	}
	return stub
}

// function reads a function tool.
func (d *responsesDecoder) function(t oaiObj) (ToolDef, bool) {
	t.known("type", "name", "description", "parameters", "strict", "defer_loading")
	t.require("name")
	name := t.toolName("name")
	desc := t.str("description")
	strict := t.boolean("strict")
	deferred := t.boolean("defer_loading")
	params := t.schema("parameters", name, strict)
	return ToolDef{Name: name, Description: desc, Parameters: params}, deferred
}

// custom reads a custom (freeform) tool: a name, a description and the
// format of its input, free text or a grammar. The emulator calls one
// only when a script names it; it is not a function to call.
func (d *responsesDecoder) custom(t oaiObj) {
	t.known("type", "name", "description", "format", "defer_loading")
	t.require("name")
	t.toolName("name")
	t.str("description")
	t.boolean("defer_loading")
	if f := t.obj("format"); f.m != nil {
		f.require("type")
		if f.enum("type", "text", "grammar") == "grammar" {
			f.known("type", "syntax", "definition")
			f.require("syntax", "definition")
			f.enum("syntax", "lark", "regex")
			f.str("definition")
		} else {
			f.known("type")
		}
	}
}

// namespace reads a namespace of functions: the callable ones (all of
// them when loaded, else those not deferred) and the namespace as the
// model sees it.
func (d *responsesDecoder) namespace(t oaiObj, loaded bool) ([]ToolDef, map[string]any) {
	t.known("type", "name", "description", "tools")
	t.require("name", "tools")
	t.toolName("name")
	t.str("description")
	var defs []ToolDef
	names := map[string]bool{}
	inner := t.array("tools", 1)
	rendered := make([]any, len(inner))
	for j, v := range inner {
		f := d.c.object(oaiIndex(t.at("tools"), j), v)
		f.require("type")
		if f.enum("type", "function", "custom") == "custom" {
			d.custom(f)
			d.unique(names, f.at("name"), f.str("name"))
			rendered[j] = f.m
			continue
		}
		def, deferred := d.function(f)
		d.unique(names, f.at("name"), def.Name)
		if !d.c.ok() {
			return nil, nil
		}
		rendered[j] = f.m
		if deferred && !loaded {
			rendered[j] = oaiStub(f.m)
			continue
		}
		defs = append(defs, def)
	}
	out := map[string]any{}
	for k, v := range t.m {
		out[k] = v
	}
	out["tools"] = rendered
	return defs, out
}

// loaded reads the tools of an additional_tools or tool_search_output
// item: each is one segment, and callable from here on.
func (d *responsesDecoder) loaded(path string, list []any) {
	names := map[string]bool{}
	for i, v := range list {
		t := d.c.object(oaiIndex(path, i), v)
		if !d.c.ok() {
			return
		}
		t.require("type")
		var defs []ToolDef
		switch t.enum("type", "function", "namespace") {
		case "function":
			def, _ := d.function(t)
			defs = []ToolDef{def}
		case "namespace":
			defs, _ = d.namespace(t, true)
		}
		d.unique(names, t.at("name"), t.str("name"))
		if !d.c.ok() {
			return
		}
		d.segment(Segment{Bytes: canonical(t.m), ToolDef: true})
		for _, def := range defs {
			d.tools.add(def)
		}
	}
}

// toolChoice checks tool_choice against the tools callable at the end.
func (d *responsesDecoder) toolChoice(r oaiObj) {
	switch v := r.get("tool_choice"); v.(type) {
	case nil:
	case string:
		r.enum("tool_choice", "none", "auto", "required")
	case map[string]any:
		tc := r.obj("tool_choice")
		tc.require("type")
		switch tc.enum("type", "function", "allowed_tools") {
		case "function":
			tc.known("type", "name")
			tc.require("name")
			d.chosen("tool_choice", tc.str("name"))
		case "allowed_tools":
			tc.known("type", "mode", "tools")
			tc.require("mode", "tools")
			tc.enum("mode", "auto", "required")
			for i, v := range tc.array("tools", 1) {
				t := d.c.object(oaiIndex(tc.at("tools"), i), v)
				t.known("type", "name")
				t.require("type", "name")
				t.enum("type", "function")
				d.chosen(t.at("name"), t.str("name"))
			}
		}
	default:
		d.c.fail(oaiWrongType("tool_choice", "one of a string or object", v))
	}
}

// chosen checks that tool_choice names a callable function.
func (d *responsesDecoder) chosen(path, name string) {
	if d.c.ok() && !d.tools.has(name) {
		d.c.fail(oaiInvalid(path, "invalid_value", "Tool choice '%s' not found in 'tools' parameter.", name))
	}
}

// input reads the input: a string (one user message) or items.
func (d *responsesDecoder) input(r oaiObj) {
	switch v := r.get("input"); x := v.(type) {
	case nil:
	case string:
		i := d.segment(Segment{Bytes: oaiTextBytes("user", "input_text", x), Text: x})
		d.implicit = i
		d.ex.Turns = append(d.ex.Turns, Turn{Role: "user", Text: x})
	case []any:
		for i, item := range x {
			if !d.c.ok() {
				return
			}
			d.item(oaiIndex("input", i), item)
		}
	default:
		d.c.fail(oaiWrongType("input", "one of a string or array of input items", v))
	}
}

// oaiTextBytes identifies a text part: its message's role, the part type
// and the text (string content and a single text part are the same).
func oaiTextBytes(role, typ, text string) []byte {
	return canonical(map[string]any{"role": role, "type": typ, "text": text})
}

// item reads one input item.
func (d *responsesDecoder) item(path string, v any) {
	it := d.c.object(path, v)
	if !d.c.ok() {
		return
	}
	typ := "message"
	if it.has("type") {
		typ = it.enum("type", responsesItemTypes...)
	}
	switch typ {
	case "message":
		d.message(it)
	case "function_call":
		d.functionCall(it)
	case "function_call_output":
		d.functionOutput(it)
	case "additional_tools":
		it.known("type", "role", "tools", "id")
		it.require("role", "tools")
		it.enum("role", "developer")
		it.str("id")
		d.loaded(it.at("tools"), it.array("tools", 1))
	case "tool_search_call":
		it.known("type", "call_id", "arguments", "execution", "status", "id")
		it.require("call_id")
		id := it.str("call_id")
		it.enum("execution", "server", "client")
		it.enum("status", "in_progress", "completed", "incomplete")
		it.str("id")
		if d.c.ok() {
			d.searches[id] = true
			d.segment(Segment{Bytes: canonical(withoutKeys(it.m, "id", "status"))})
		}
	case "tool_search_output":
		it.known("type", "call_id", "tools", "execution", "status", "id")
		it.require("call_id", "tools")
		id := it.str("call_id")
		it.enum("execution", "server", "client")
		it.enum("status", "in_progress", "completed", "incomplete")
		it.str("id")
		if d.c.ok() && !d.searches[id] {
			d.c.fail(oaiInvalid("input", "", "No tool search call found for tool search output with call_id %s.", id))
		}
		d.loaded(it.at("tools"), it.array("tools", 0))
	case "reasoning":
		d.reasoning(it)
	case "item_reference":
		it.known("type", "id")
		it.require("id")
		if id := it.str("id"); d.c.ok() {
			d.c.fail(oaiInvalid(it.at("id"), "invalid_value",
				"Item with id '%s' not found. The emulator stores no items: send the item itself instead of a reference.", id))
		}
	}
}

// message reads a message item (easy or typed): one segment per content
// part.
func (d *responsesDecoder) message(it oaiObj) {
	it.known("type", "role", "content", "id", "status", "phase")
	it.require("role", "content")
	role := it.enum("role", "user", "assistant", "system", "developer")
	it.str("id")
	it.enum("status", "in_progress", "completed", "incomplete")
	it.enum("phase", "commentary", "final_answer")
	if !d.c.ok() {
		return
	}
	start := len(d.ex.Segments)
	var texts []string
	switch content := it.get("content"); x := content.(type) {
	case string:
		typ := "input_text"
		if role == "assistant" {
			typ = "output_text"
		}
		d.segment(Segment{Bytes: oaiTextBytes(role, typ, x), Text: x})
		texts = append(texts, x)
	case []any:
		allowed := []string{"input_text", "input_image", "input_file"}
		if role == "assistant" {
			allowed = []string{"output_text", "refusal"}
		}
		for j, p := range x {
			text, isText := d.part(oaiIndex(it.at("content"), j), p, role, allowed)
			if isText {
				texts = append(texts, text)
			}
		}
	default:
		d.c.fail(oaiWrongType(it.at("content"), "one of a string or array of objects", content))
	}
	if !d.c.ok() {
		return
	}
	if role == "user" && len(d.ex.Segments) > start {
		d.implicit = len(d.ex.Segments) - 1
	}
	text := strings.Join(texts, "\n")
	switch role {
	case "assistant":
		n := len(d.ex.Turns)
		if n > 0 && d.ex.Turns[n-1].Role == "assistant" && len(d.ex.Turns[n-1].Calls) == 0 {
			d.ex.Turns[n-1].Text += "\n" + text
			return
		}
		d.ex.Turns = append(d.ex.Turns, Turn{Role: "assistant", Text: text})
	case "user":
		d.ex.Turns = append(d.ex.Turns, Turn{Role: "user", Text: text})
	default:
		d.ex.Turns = append(d.ex.Turns, Turn{Role: "system", Text: text})
	}
}

// part reads a content part of a message or function output into a
// segment; it returns the part's text for the turn.
func (d *responsesDecoder) part(path string, v any, role string, allowed []string) (string, bool) {
	p := d.c.object(path, v)
	p.require("type")
	typ := p.enum("type", allowed...)
	if !d.c.ok() {
		return "", false
	}
	switch typ {
	case "input_text":
		p.known("type", "text", "prompt_cache_breakpoint")
		p.require("text")
		text := p.str("text")
		ttl := p.breakpoint(responsesTTLs, d.ttl)
		if d.c.ok() {
			d.mark(d.segment(Segment{Bytes: oaiTextBytes(role, typ, text), Text: text}), ttl)
		}
		return text, true
	case "output_text":
		p.known("type", "text", "annotations", "logprobs")
		p.require("text")
		text := p.str("text")
		p.array("annotations", 0)
		p.array("logprobs", 0)
		d.segment(Segment{Bytes: oaiTextBytes(role, typ, text), Text: text})
		return text, true
	case "refusal":
		p.known("type", "refusal")
		p.require("refusal")
		text := p.str("refusal")
		d.segment(Segment{Bytes: oaiTextBytes(role, typ, text), Text: text})
		return text, true
	case "input_image":
		p.known("type", "image_url", "file_id", "detail", "prompt_cache_breakpoint")
		p.str("image_url")
		p.str("file_id")
		p.enum("detail", "low", "high", "auto", "original")
		d.oneOf(p, "image_url", "file_id")
	case "input_file":
		p.known("type", "file_id", "file_data", "file_url", "filename", "prompt_cache_breakpoint")
		p.str("file_id")
		p.str("file_data")
		p.str("file_url")
		p.str("filename")
		d.oneOf(p, "file_data", "file_id", "file_url")
	}
	ttl := p.breakpoint(responsesTTLs, d.ttl)
	if d.c.ok() {
		m := withoutKeys(p.m)
		m["role"] = role
		d.mark(d.segment(Segment{Bytes: canonical(m), Text: oaiImageText}), ttl)
	}
	return "", false
}

// oneOf requires at least one of keys.
func (d *responsesDecoder) oneOf(p oaiObj, keys ...string) {
	if !d.c.ok() {
		return
	}
	for _, k := range keys {
		if p.has(k) {
			return
		}
	}
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = "'" + p.at(k) + "'"
	}
	d.c.fail(oaiInvalid(p.at(keys[0]), "missing_required_parameter",
		"Missing required parameter: one of %s must be provided.", strings.Join(q, ", ")))
}

// functionCall reads a function_call item.
func (d *responsesDecoder) functionCall(it oaiObj) {
	it.known("type", "call_id", "name", "arguments", "id", "namespace", "status")
	it.require("call_id", "name", "arguments")
	id := it.str("call_id")
	name := it.str("name")
	args := it.str("arguments")
	ns := it.str("namespace")
	it.str("id")
	it.enum("status", "in_progress", "completed", "incomplete")
	if !d.c.ok() {
		return
	}
	seg := map[string]any{"type": "function_call", "call_id": id, "name": name, "arguments": args}
	if ns != "" {
		seg["namespace"] = ns
	}
	d.segment(Segment{Bytes: canonical(seg)})
	if !d.called[id] {
		d.calls = append(d.calls, id)
	}
	d.called[id] = true
	call := Call{ID: id, Name: name, Arguments: oaiArguments(args)}
	n := len(d.ex.Turns)
	if n > 0 && d.ex.Turns[n-1].Role == "assistant" {
		d.ex.Turns[n-1].Calls = append(d.ex.Turns[n-1].Calls, call)
		return
	}
	d.ex.Turns = append(d.ex.Turns, Turn{Role: "assistant", Calls: []Call{call}})
}

// functionOutput reads a function_call_output item: one segment.
func (d *responsesDecoder) functionOutput(it oaiObj) {
	it.known("type", "call_id", "output", "id", "status", "name", "namespace", "prompt_cache_breakpoint")
	it.require("call_id", "output")
	id := it.str("call_id")
	it.str("id")
	it.str("name")
	it.str("namespace")
	it.enum("status", "in_progress", "completed", "incomplete")
	ttl := it.breakpoint(responsesTTLs, d.ttl)
	if !d.c.ok() {
		return
	}
	if !d.called[id] {
		d.c.fail(oaiInvalid("input", "", "No tool call found for function call output with call_id %s.", id))
		return
	}
	var text string
	switch out := it.get("output"); x := out.(type) {
	case string:
		text = x
	case []any:
		var texts []string
		for j, v := range x {
			p := d.c.object(oaiIndex(it.at("output"), j), v)
			p.require("type")
			switch p.enum("type", "input_text", "input_image", "input_file") {
			case "input_text":
				p.known("type", "text", "prompt_cache_breakpoint")
				p.require("text")
				texts = append(texts, p.str("text"))
			case "input_image":
				p.known("type", "image_url", "file_id", "detail", "prompt_cache_breakpoint")
				p.str("image_url")
				p.str("file_id")
				p.enum("detail", "low", "high", "auto", "original")
				d.oneOf(p, "image_url", "file_id")
			case "input_file":
				p.known("type", "file_id", "file_data", "file_url", "filename", "prompt_cache_breakpoint")
				p.str("file_id")
				p.str("file_data")
				p.str("file_url")
				p.str("filename")
				d.oneOf(p, "file_data", "file_id", "file_url")
			}
			if t := p.breakpoint(responsesTTLs, d.ttl); t != "" {
				ttl = t
			}
		}
		text = strings.Join(texts, "\n")
	default:
		d.c.fail(oaiWrongType(it.at("output"), "one of a string or array of objects", out))
	}
	if !d.c.ok() {
		return
	}
	d.answered[id] = true
	i := d.segment(Segment{Bytes: canonical(map[string]any{"type": "function_call_output", "call_id": id, "output": it.get("output")})})
	d.mark(i, ttl)
	d.implicit = i
	d.ex.Turns = append(d.ex.Turns, Turn{Role: "tool", CallID: id, Text: text})
}

// reasoning reads a reasoning item replayed from an earlier answer.
func (d *responsesDecoder) reasoning(it oaiObj) {
	it.known("type", "id", "summary", "encrypted_content", "content", "status")
	it.require("id", "summary")
	it.str("id")
	it.str("encrypted_content")
	it.enum("status", "in_progress", "completed", "incomplete")
	for j, v := range it.array("summary", 0) {
		s := d.c.object(oaiIndex(it.at("summary"), j), v)
		s.known("type", "text")
		s.require("type", "text")
		s.enum("type", "summary_text")
		s.str("text")
	}
	for j, v := range it.array("content", 0) {
		s := d.c.object(oaiIndex(it.at("content"), j), v)
		s.known("type", "text")
		s.require("type", "text")
		s.enum("type", "reasoning_text")
		s.str("text")
	}
	if d.c.ok() {
		d.segment(Segment{Bytes: canonical(withoutKeys(it.m, "status"))})
	}
}
