package gemini

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// generatedIDPrefix begins the call ids the adapter makes for calls the
// API sent without one; they are not sent back.
const generatedIDPrefix = "toolshelf_gemini_"

// tools returns the plan's top-level tools as one tool of function
// declarations, each schema as parametersJsonSchema (JSON Schema, as the
// transcript holds it); nil when there are none.
func tools(ts []llm.Tool) []tool {
	if len(ts) == 0 {
		return nil
	}
	decls := make([]functionDeclaration, len(ts))
	for i, t := range ts {
		decls[i] = functionDeclaration{Name: t.Name, Description: t.Description,
			ParametersJSONSchema: adapt.CompactSchema(t)}
	}
	return []tool{{FunctionDeclarations: decls}}
}

// renderer turns a plan into Gemini contents.
type renderer struct {
	model string
	out   []*content
	// names maps the call ids of the assistant messages rendered so far
	// to the name the call was sent with, which a functionResponse
	// repeats (call_tool for a bridged call).
	names map[string]string
	// results is the user content the current run of tool results goes
	// into; nil after anything else.
	results *content
}

func (r *renderer) render(plan *provider.Plan) []*content {
	for _, e := range plan.Items {
		if e.Message == nil || e.Message.Role != llm.RoleToolResult {
			r.results = nil
		}
		switch {
		case e.Update != nil:
			// No system role after the head: an update that reaches the
			// plan (bridge) travels as user text.
			if e.Update.Text != "" {
				r.add("user", &part{Text: adapt.UserUpdateText(e.Update.Text)})
			}
		case e.Message.Role == llm.RoleUser:
			r.add("user", userParts(e.Message.Content)...)
		case e.Message.Role == llm.RoleAssistant:
			r.assistant(e.Message)
		case e.Message.Role == llm.RoleToolResult:
			r.toolResult(e.Message)
		}
	}
	return r.out
}

func (r *renderer) add(role string, parts ...*part) {
	if len(parts) == 0 {
		return
	}
	r.out = append(r.out, &content{Role: role, Parts: parts})
}

// userParts returns a user message's text and images.
func userParts(ps []llm.Part) []*part {
	var parts []*part
	for _, p := range ps {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				parts = append(parts, &part{Text: p.Text})
			}
		case llm.PartImage:
			parts = append(parts, &part{InlineData: &blob{MIMEType: p.MIMEType, Data: p.Data}})
		}
	}
	return parts
}

// assistant adds a model content: its text and function calls. Thinking
// is not sent back, but the thought signatures of the model that wrote
// the message are: a thinking part's signature goes on the part that
// follows it, where the API put it.
func (r *renderer) assistant(m *llm.Message) {
	var parts []*part
	var signature []byte
	sameModel := m.Model == r.model
	for _, p := range m.Content {
		var pt *part
		switch p.Type {
		case llm.PartThinking:
			if sameModel && p.Signature != "" {
				if b, err := base64.StdEncoding.DecodeString(p.Signature); err == nil {
					signature = b
				}
			}
			continue
		case llm.PartText:
			if p.Text == "" {
				continue
			}
			pt = &part{Text: p.Text}
		case llm.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			tc := p.ToolCall
			fc := &functionCall{Name: tc.Name, Args: argsMap(tc.Arguments)}
			if !strings.HasPrefix(tc.ID, generatedIDPrefix) {
				fc.ID = tc.ID
			}
			r.names[tc.ID] = tc.Name
			pt = &part{FunctionCall: fc}
		default:
			continue
		}
		pt.ThoughtSignature, signature = signature, nil
		parts = append(parts, pt)
	}
	r.add("model", parts...)
}

// argsMap returns a call's arguments as the object sent back; what
// is not an object (model output is untrusted) becomes an empty one.
func argsMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(adapt.ArgumentsObject(raw), &m) != nil || m == nil {
		m = map[string]any{}
	}
	return m
}

// toolResult adds a functionResponse to the user content of the current
// run of results: {"output": text}, or {"error": text} for a failure, as
// the API documents; images follow as inline data.
func (r *renderer) toolResult(m *llm.Message) {
	text := llm.ContentText(m.Content, "\n")
	var images []*part
	for _, p := range m.Content {
		if p.Type == llm.PartImage {
			images = append(images, &part{InlineData: &blob{MIMEType: p.MIMEType, Data: p.Data}})
		}
	}
	if text == "" && len(images) > 0 {
		text = "(see the attached image)"
	}
	key := "output"
	if m.IsError {
		key = "error"
	}
	name, ok := r.names[m.ToolCallID]
	if !ok {
		name = m.ToolName
	}
	fr := &functionResponse{Name: name, Response: map[string]string{key: text}}
	if !strings.HasPrefix(m.ToolCallID, generatedIDPrefix) {
		fr.ID = m.ToolCallID
	}
	parts := append([]*part{{FunctionResponse: fr}}, images...)
	if r.results == nil {
		r.results = &content{Role: "user"}
		r.out = append(r.out, r.results)
	}
	r.results.Parts = append(r.results.Parts, parts...)
}
