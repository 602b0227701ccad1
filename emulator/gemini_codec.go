package emulator

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Gemini is Google's Gemini API: POST
// /v1beta/models/{model}:generateContent and :streamGenerateContent.
const Gemini API = "gemini"

// geminiCodec speaks the Gemini API for one request: the model and
// whether it streams come from the URL, not the body.
type geminiCodec struct {
	model  string
	stream bool
	// sse reports alt=sse: a stream of server-sent events rather than one
	// JSON array.
	sse bool
}

// geminiPath matches the methods the emulator serves:
// /v1beta/models/{model}:generateContent and :streamGenerateContent (v1
// too, and without the version, as a base URL may already hold it).
var geminiPath = regexp.MustCompile(`^(?:/v1beta|/v1)?/models/([^/:]+):(generateContent|streamGenerateContent)$`)

// geminiRoute returns the codec of a Gemini API URL, and whether the URL
// is one.
func geminiRoute(u *url.URL) (c geminiCodec, ok bool) {
	m := geminiPath.FindStringSubmatch(u.Path)
	if m == nil {
		return geminiCodec{}, false
	}
	return geminiCodec{model: m[1], stream: m[2] == "streamGenerateContent", sse: u.Query().Get("alt") == "sse"}, true
}

// geminiLike reports a path of the Gemini API's shape that the emulator
// does not serve, answered 404 in that API's error shape.
func geminiLike(path string) bool {
	return strings.HasPrefix(path, "/v1beta/") || strings.Contains(path, ":generateContent") ||
		strings.Contains(path, ":streamGenerateContent")
}

// geminiKey returns a Gemini request's API key: the x-goog-api-key
// header, else the key query parameter.
func geminiKey(r *http.Request) string {
	if k := r.Header.Get("X-Goog-Api-Key"); k != "" {
		return k
	}
	return r.URL.Query().Get("key")
}

// geminiNoKey is the API's answer to a request without a key.
func geminiNoKey() *Error {
	return &Error{Status: http.StatusForbidden, Type: "PERMISSION_DENIED",
		Message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API. The emulator accepts any key, sent as x-goog-api-key or ?key=."}
}

// The fields of the request's messages the emulator accepts (the Gemini
// API's REST names; the API also takes them in snake_case).
var (
	geminiRequestFields = []string{"model", "contents", "tools", "toolConfig", "safetySettings", "systemInstruction",
		"generationConfig", "cachedContent"}
	geminiContentFields = []string{"role", "parts"}
	geminiPartFields    = []string{"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
		"codeExecutionResult", "thought", "thoughtSignature", "videoMetadata", "partMetadata", "mediaResolution"}
	// geminiData are the part fields of its data oneof: exactly one is set.
	geminiData                  = []string{"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"}
	geminiToolFields            = []string{"functionDeclarations", "googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext", "computerUse", "fileSearch", "googleMaps", "mcpServers"}
	geminiDeclarationFields     = []string{"name", "description", "parameters", "parametersJsonSchema", "response", "responseJsonSchema", "behavior"}
	geminiFunctionCallFields    = []string{"id", "name", "args"}
	geminiFunctionRespFields    = []string{"id", "name", "response", "parts", "willContinue", "scheduling"}
	geminiBlobFields            = []string{"mimeType", "data"}
	geminiGenerationFields      = []string{"stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema", "_responseJsonSchema", "responseModalities", "candidateCount", "maxOutputTokens", "temperature", "topP", "topK", "seed", "presencePenalty", "frequencyPenalty", "responseLogprobs", "logprobs", "enableEnhancedCivicAnswers", "speechConfig", "thinkingConfig", "mediaResolution", "imageConfig"}
	geminiThinkingFields        = []string{"includeThoughts", "thinkingBudget", "thinkingLevel"}
	geminiToolConfigFields      = []string{"functionCallingConfig", "retrievalConfig", "includeServerSideToolInvocations"}
	geminiFunctionCallingFields = []string{"mode", "allowedFunctionNames"}
	geminiSafetyFields          = []string{"category", "threshold", "method"}
	// geminiName is what a function declaration's name must match.
	geminiName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`)
)

// geminiInvalid returns the API's 400 INVALID_ARGUMENT.
func geminiInvalid(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "INVALID_ARGUMENT", Message: fmt.Sprintf(format, args...)}
}

// geminiCheck keeps the first problem of a request.
type geminiCheck struct{ err *Error }

func (c *geminiCheck) fail(e *Error) {
	if c.err == nil {
		c.err = e
	}
}

// geminiObj is a JSON object being validated, with its path
// (contents[0].parts[1]).
type geminiObj struct {
	c    *geminiCheck
	path string
	m    map[string]any
}

// camel returns a proto field's JSON name in lowerCamelCase, which the
// API reads as well as the snake_case one.
func camel(k string) string {
	if !strings.Contains(k, "_") || strings.HasPrefix(k, "_") {
		return k
	}
	parts := strings.Split(k, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// object returns the object at path, after normalising its keys to
// lowerCamelCase and refusing keys the message does not have, as the
// API's JSON parser does.
func (c *geminiCheck) object(path string, v any, fields []string) geminiObj {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(geminiInvalid("Invalid value at '%s' (object), %s", path, geminiJSON(v)))
		return geminiObj{c: c, path: path}
	}
	norm := make(map[string]any, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first unknown name reported does not depend on map order
	for _, k := range keys {
		ck := camel(k)
		if fields != nil && !slices.Contains(fields, ck) {
			c.fail(geminiInvalid("Invalid JSON payload received. Unknown name %q%s: Cannot find field.", k, at(path)))
			continue
		}
		norm[ck] = m[k]
	}
	return geminiObj{c: c, path: path, m: norm}
}

func at(path string) string {
	if path == "" {
		return ""
	}
	return " at '" + path + "'"
}

func geminiTypeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return "null"
}

func geminiJoin(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (o geminiObj) at(key string) string { return geminiJoin(o.path, key) }

func (o geminiObj) has(key string) bool { return o.m[key] != nil }

// str returns a string field; another type is the API's type error.
func (o geminiObj) str(key string) string {
	v, ok := o.m[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		o.c.fail(geminiInvalid("Invalid value at '%s' (TYPE_STRING), %s", o.at(key), geminiJSON(v)))
	}
	return s
}

func (o geminiObj) boolean(key string) bool {
	v, ok := o.m[key]
	if !ok || v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		o.c.fail(geminiInvalid("Invalid value at '%s' (TYPE_BOOL), %s", o.at(key), geminiJSON(v)))
	}
	return b
}

func (o geminiObj) integer(key string) int64 {
	v, ok := o.m[key]
	if !ok || v == nil {
		return 0
	}
	var n int64
	var err error
	switch x := v.(type) {
	case json.Number:
		n, err = strconv.ParseInt(x.String(), 10, 32)
	case string: // proto JSON takes integers as strings too
		n, err = strconv.ParseInt(x, 10, 32)
	default:
		err = fmt.Errorf("not a number")
	}
	if err != nil {
		o.c.fail(geminiInvalid("Invalid value at '%s' (TYPE_INT32), %s", o.at(key), geminiJSON(v)))
	}
	return n
}

func (o geminiObj) number(key string) {
	v, ok := o.m[key]
	if !ok || v == nil {
		return
	}
	if _, ok := v.(json.Number); !ok {
		o.c.fail(geminiInvalid("Invalid value at '%s' (TYPE_FLOAT), %s", o.at(key), geminiJSON(v)))
	}
}

// list returns a repeated field.
func (o geminiObj) list(key string) []any {
	v, ok := o.m[key]
	if !ok || v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		o.c.fail(geminiInvalid("Invalid JSON payload received. Unknown name %q%s: Proto field is not repeating, cannot start list.", key, at(o.path)))
		return nil
	}
	return l
}

// obj returns a message field, its keys checked against fields (nil
// for a free-form Struct).
func (o geminiObj) obj(key string, fields []string) geminiObj {
	v, ok := o.m[key]
	if !ok || v == nil {
		return geminiObj{c: o.c, path: o.at(key)}
	}
	return o.c.object(o.at(key), v, fields)
}

func geminiJSON(v any) string { return string(compactJSON(v)) }

// geminiParse decodes a body into a JSON object, or the API's parse error.
func geminiParse(body []byte) (map[string]any, *Error) {
	v, err := parseBody(body)
	m, ok := v.(map[string]any)
	if err == nil && !ok {
		err = fmt.Errorf("the body is a %s, not an object", geminiTypeName(v))
	}
	if err != nil {
		return nil, geminiInvalid("Invalid JSON payload received. %s", err.Error())
	}
	return m, nil
}

// geminiDecoder is one request being decoded.
type geminiDecoder struct {
	c  geminiCheck
	ex *Exchange
	// pending are the function calls of the last model content not yet
	// answered: a content of function responses must answer them all.
	pending int
}

func (g geminiCodec) decode(_ http.Header, body []byte) (*Exchange, *Error) {
	root, e := geminiParse(body)
	if e != nil {
		return nil, e
	}
	d := &geminiDecoder{ex: &Exchange{API: Gemini, Model: g.model, Stream: g.stream}}
	d.decode(d.c.object("", root, geminiRequestFields))
	if d.c.err != nil {
		return nil, d.c.err
	}
	return d.ex, nil
}

func (d *geminiDecoder) decode(r geminiObj) {
	if m := r.str("model"); m != "" && strings.TrimPrefix(m, "models/") != d.ex.Model {
		d.c.fail(geminiInvalid("The model in the body (%s) is not the model of the URL (models/%s).", m, d.ex.Model))
	}
	if r.has("cachedContent") {
		d.c.fail(&Error{Status: http.StatusNotFound, Type: "NOT_FOUND",
			Message: fmt.Sprintf("CachedContent not found (or permission denied): %s. The emulator simulates implicit caching only.", r.str("cachedContent"))})
	}
	if g := r.obj("generationConfig", geminiGenerationFields); g.m != nil {
		if n := g.integer("maxOutputTokens"); n > 0 {
			d.ex.MaxTokens = int(n)
		} else if g.has("maxOutputTokens") && n < 0 {
			d.c.fail(geminiInvalid("* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be positive."))
		}
		if n := g.integer("candidateCount"); n > 1 {
			d.c.fail(geminiInvalid("* GenerateContentRequest.generation_config.candidate_count: the emulator answers one candidate; leave candidateCount unset or 1."))
		}
		for _, k := range []string{"temperature", "topP", "presencePenalty", "frequencyPenalty"} {
			g.number(k)
		}
		g.integer("topK")
		g.integer("seed")
		if t := g.obj("thinkingConfig", geminiThinkingFields); t.m != nil {
			t.boolean("includeThoughts")
			t.integer("thinkingBudget")
			t.str("thinkingLevel")
		}
	}
	if tc := r.obj("toolConfig", geminiToolConfigFields); tc.m != nil {
		if fc := tc.obj("functionCallingConfig", geminiFunctionCallingFields); fc.m != nil {
			if m := fc.str("mode"); m != "" && !slices.Contains([]string{"MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"}, m) {
				d.c.fail(geminiInvalid("Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), %q", m))
			}
		}
	}
	for i, s := range r.list("safetySettings") {
		d.c.object(fmt.Sprintf("safety_settings[%d]", i), s, geminiSafetyFields)
	}
	d.tools(r)
	if si := r.obj("systemInstruction", geminiContentFields); si.m != nil {
		text := d.parts(si, true)
		if d.c.err == nil {
			d.ex.Segments = append(d.ex.Segments, Segment{Bytes: canonical(map[string]any{"systemInstruction": text}), Text: text})
		}
	}
	contents := r.list("contents")
	if len(contents) == 0 {
		d.c.fail(geminiInvalid("* GenerateContentRequest.contents: contents is not specified\n"))
		return
	}
	for i, raw := range contents {
		d.content(d.c.object(fmt.Sprintf("contents[%d]", i), raw, geminiContentFields))
	}
	if d.c.err == nil && d.ex.Turns[len(d.ex.Turns)-1].Role == "assistant" && d.pending > 0 {
		d.c.fail(geminiInvalid("Please ensure that function call turn comes immediately after a user turn or after a function response turn."))
	}
}

// tools reads the function declarations.
func (d *geminiDecoder) tools(r geminiObj) {
	seen := map[string]bool{}
	for i, raw := range r.list("tools") {
		t := d.c.object(fmt.Sprintf("tools[%d]", i), raw, geminiToolFields)
		for j, rd := range t.list("functionDeclarations") {
			path := fmt.Sprintf("tools[%d].function_declarations[%d]", i, j)
			fd := d.c.object(path, rd, geminiDeclarationFields)
			name := fd.str("name")
			switch {
			case name == "":
				d.c.fail(geminiInvalid("* GenerateContentRequest.%s.name: [FIELD_INVALID] Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n", path))
			case !geminiName.MatchString(name):
				d.c.fail(geminiInvalid("* GenerateContentRequest.%s.name: [FIELD_INVALID] Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n", path))
			case seen[name]:
				d.c.fail(geminiInvalid("* GenerateContentRequest.tools[0].function_declarations: Duplicate function declaration found: %s\n", name))
			}
			seen[name] = true
			var params any
			switch {
			case fd.has("parameters") && fd.has("parametersJsonSchema"):
				d.c.fail(geminiInvalid("* GenerateContentRequest.%s: parameters and parameters_json_schema cannot both be set.\n", path))
			case fd.has("parametersJsonSchema"):
				params = fd.m["parametersJsonSchema"]
				s, ok := params.(map[string]any)
				if !ok {
					d.c.fail(geminiInvalid("* GenerateContentRequest.%s.parameters_json_schema: must be a JSON Schema object.\n", path))
					break
				}
				if err := anthCheckSchema(s, canonical(s)); err != nil {
					d.c.fail(geminiInvalid("* GenerateContentRequest.%s.parameters_json_schema: invalid JSON Schema: %v\n", path, err))
				}
			case fd.has("parameters"):
				params = fd.m["parameters"] // the OpenAPI subset; taken as given
				if _, ok := params.(map[string]any); !ok {
					d.c.fail(geminiInvalid("Invalid value at '%s.parameters' (type.googleapis.com/google.ai.generativelanguage.v1beta.Schema), %s", path, geminiJSON(params)))
				}
			}
			if d.c.err != nil {
				return
			}
			def := ToolDef{Name: name, Description: fd.str("description")}
			if params != nil {
				def.Parameters = json.RawMessage(canonical(params))
			}
			d.ex.Tools = append(d.ex.Tools, def)
			d.ex.Segments = append(d.ex.Segments, Segment{Bytes: canonical(rd), ToolDef: true})
		}
	}
}

// parts reads a content's parts into segments and returns their text;
// system reports the systemInstruction, whose parts are text only and
// are one segment.
func (d *geminiDecoder) parts(c geminiObj, system bool) string {
	var texts []string
	for i, raw := range c.list("parts") {
		p := d.c.object(fmt.Sprintf("%s.parts[%d]", c.path, i), raw, geminiPartFields)
		set := 0
		for _, k := range geminiData {
			if p.has(k) {
				set++
			}
		}
		if set != 1 && d.c.err == nil {
			d.c.fail(geminiInvalid("* GenerateContentRequest.%s.parts[%d].data: required oneof field 'data' must have one initialized field\n", c.path, i))
			return ""
		}
		if sig := p.str("thoughtSignature"); sig != "" {
			if _, err := base64.StdEncoding.DecodeString(sig); err != nil {
				if _, err := base64.URLEncoding.DecodeString(sig); err != nil {
					d.c.fail(geminiInvalid("Invalid value at '%s.thought_signature' (TYPE_BYTES), Base64 decoding failed for %q", p.path, sig))
				}
			}
		}
		p.boolean("thought")
		if p.has("text") {
			texts = append(texts, p.str("text"))
		}
		if system && !p.has("text") {
			d.c.fail(geminiInvalid("* GenerateContentRequest.system_instruction.parts[%d]: system instructions take text parts only.\n", i))
		}
		if b := p.obj("inlineData", geminiBlobFields); b.m != nil {
			if b.str("mimeType") == "" {
				d.c.fail(geminiInvalid("* GenerateContentRequest.%s.inline_data.mime_type: mime_type is required.\n", p.path))
			}
			if _, err := base64.StdEncoding.DecodeString(b.str("data")); err != nil {
				d.c.fail(geminiInvalid("Invalid value at '%s.inline_data.data' (TYPE_BYTES), Base64 decoding failed", p.path))
			}
		}
	}
	if len(c.list("parts")) == 0 && d.c.err == nil {
		what := c.path
		if system {
			what = "system_instruction"
		}
		d.c.fail(geminiInvalid("* GenerateContentRequest.%s.parts: contents.parts must not be empty.\n", what))
	}
	return strings.Join(texts, "\n")
}

// content reads one content of the conversation.
func (d *geminiDecoder) content(c geminiObj) {
	if d.c.err != nil || c.m == nil {
		return
	}
	role := c.str("role")
	if role == "" {
		role = "user"
	}
	if role != "user" && role != "model" {
		d.c.fail(geminiInvalid("Please use a valid role: user, model."))
		return
	}
	var texts []string
	var calls []Call
	responses := 0
	for i, raw := range c.list("parts") {
		path := fmt.Sprintf("%s.parts[%d]", c.path, i)
		p := d.c.object(path, raw, geminiPartFields)
		if p.has("text") && !p.boolean("thought") {
			texts = append(texts, p.str("text"))
		}
		if fc := p.obj("functionCall", geminiFunctionCallFields); fc.m != nil {
			if role != "model" {
				d.c.fail(geminiInvalid("Please ensure that function call turns come from the model (role \"model\"): %s.function_call is in a %s turn.", path, role))
			}
			name := fc.str("name")
			if name == "" {
				d.c.fail(geminiInvalid("* GenerateContentRequest.%s.function_call.name: name is required.\n", path))
			}
			args := fc.obj("args", nil)
			a := json.RawMessage("{}")
			if args.m != nil {
				a = canonical(args.m)
			}
			calls = append(calls, Call{ID: fc.str("id"), Name: name, Arguments: a})
		}
		if fr := p.obj("functionResponse", geminiFunctionRespFields); fr.m != nil {
			if role != "user" {
				d.c.fail(geminiInvalid("Please ensure that function response turns come from the user (role \"user\"): %s.function_response is in a %s turn.", path, role))
			}
			name := fr.str("name")
			if name == "" {
				d.c.fail(geminiInvalid("* GenerateContentRequest.%s.function_response.name: Name cannot be empty.\n", path))
			}
			resp := fr.obj("response", nil)
			text := ""
			isError := false
			if resp.m != nil {
				if s, ok := resp.m["output"].(string); ok {
					text = s
				} else if s, ok := resp.m["error"].(string); ok {
					text, isError = s, true
				} else {
					text = string(canonical(resp.m))
				}
			}
			id := fr.str("id")
			if id == "" {
				id = name
			}
			if d.c.err == nil {
				d.ex.Turns = append(d.ex.Turns, Turn{Role: "tool", Text: text, CallID: id, IsError: isError})
			}
			responses++
		}
	}
	if d.c.err != nil {
		return
	}
	// Each part is a segment of the prompt, in order.
	for _, raw := range c.list("parts") {
		seg := Segment{Bytes: canonical(map[string]any{"role": role, "part": raw})}
		if m, ok := raw.(map[string]any); ok {
			if s, ok := m["text"].(string); ok && len(m) == 1 {
				seg.Text = s
			}
		}
		d.ex.Segments = append(d.ex.Segments, seg)
	}
	d.parts(c, false)
	if d.c.err != nil {
		return
	}
	switch {
	case d.pending > 0 && responses != d.pending:
		d.c.fail(geminiInvalid("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."))
		return
	case d.pending == 0 && responses > 0:
		d.c.fail(geminiInvalid("Please ensure that function response turn comes immediately after a function call turn."))
		return
	}
	d.pending = len(calls)
	if role == "model" {
		d.ex.Turns = append(d.ex.Turns, Turn{Role: "assistant", Text: strings.Join(texts, ""), Calls: calls})
	} else if len(texts) > 0 || responses == 0 {
		d.ex.Turns = append(d.ex.Turns, Turn{Role: "user", Text: strings.Join(texts, "\n")})
	}
}
