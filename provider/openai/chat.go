package openai

import (
	"context"
	"fmt"
	"iter"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// Chat is an [llm.Model] on the Chat Completions API of OpenAI and of
// OpenAI-compatible servers. It is safe for concurrent use.
type Chat struct {
	cfg     Config
	service openai.ChatCompletionService
}

var _ llm.Model = (*Chat)(nil)

// NewChat returns a Chat Completions adapter. It fails when the model id
// is missing or the capabilities name a class or anchor Chat Completions
// cannot render.
func NewChat(cfg Config) (*Chat, error) {
	cfg, err := cfg.resolve(provider.OpenAIChat)
	if err != nil {
		return nil, err
	}
	c := cfg.client()
	return &Chat{cfg: cfg, service: c.Chat.Completions}, nil
}

// Capabilities returns the capabilities the adapter renders with.
func (m *Chat) Capabilities() provider.Capabilities { return m.cfg.Capabilities }

// RequestBody returns the JSON body Stream would send for the request,
// byte for byte.
func (m *Chat) RequestBody(req *llm.Request) ([]byte, error) {
	params, _, err := m.params(req)
	if err != nil {
		return nil, err
	}
	return adapt.StreamBody(params)
}

// Stream sends the request and yields the answer's events; see
// [llm.Model].
func (m *Chat) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, plan, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var failure httpFailure
		stream := m.service.NewStreaming(ctx, params, failure.option())
		run(ctx, provider.OpenAIChat, stream, &failure, newChatDecoder(plan, m.cfg.Model), yield)
	}
}

// params renders a request.
func (m *Chat) params(req *llm.Request) (openai.ChatCompletionNewParams, *provider.Plan, error) {
	if req == nil {
		return openai.ChatCompletionNewParams{}, nil, fmt.Errorf("%s: %w", provider.OpenAIChat, errNilRequest)
	}
	plan := provider.Build(req.Messages, m.cfg.Capabilities)
	if err := plan.CheckNames(provider.OpenAIChat); err != nil {
		return openai.ChatCompletionNewParams{}, nil, err
	}
	r := chatRenderer{caps: m.cfg.Capabilities}
	params := openai.ChatCompletionNewParams{
		Model:         m.cfg.Model,
		Messages:      r.messages(&plan),
		Tools:         chatTools(plan.Tools),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if n := m.cfg.maxTokens(req); n > 0 {
		params.MaxCompletionTokens = param.NewOpt(n)
	}
	return params, &plan, nil
}

// chatRenderer turns a plan into Chat Completions messages.
type chatRenderer struct {
	caps provider.Capabilities
	msgs []openai.ChatCompletionMessageParamUnion
	// images are the images of the tool results just rendered: tool
	// messages carry text only, so they follow in one user message.
	images []llm.Part
}

func (r *chatRenderer) add(m openai.ChatCompletionMessageParamUnion) { r.msgs = append(r.msgs, m) }

// instruction adds a message in the instruction role.
func (r *chatRenderer) instruction(text string) {
	if r.caps.DeveloperRole {
		r.add(openai.ChatCompletionMessageParamUnion{OfDeveloper: &openai.ChatCompletionDeveloperMessageParam{
			Content: openai.ChatCompletionDeveloperMessageParamContentUnion{OfString: param.NewOpt(text)},
		}})
		return
	}
	r.add(openai.ChatCompletionMessageParamUnion{OfSystem: &openai.ChatCompletionSystemMessageParam{
		Content: openai.ChatCompletionSystemMessageParamContentUnion{OfString: param.NewOpt(text)},
	}})
}

func (r *chatRenderer) messages(plan *provider.Plan) []openai.ChatCompletionMessageParamUnion {
	if plan.System != "" {
		r.instruction(plan.System)
	}
	for _, e := range plan.Items {
		if e.Message == nil || e.Message.Role != llm.RoleToolResult {
			r.flushImages()
		}
		switch {
		case e.Update != nil:
			r.update(plan, e.Update)
		case e.Message.Role == llm.RoleUser:
			r.user(e.Message.Content)
		case e.Message.Role == llm.RoleAssistant:
			r.assistant(e.Message)
		case e.Message.Role == llm.RoleToolResult:
			r.toolResult(e.Message)
		}
	}
	r.flushImages()
	return r.msgs
}

// user adds a user message: a string when it is all text, else parts.
func (r *chatRenderer) user(content []llm.Part) {
	hasImage := false
	for _, p := range content {
		hasImage = hasImage || p.Type == llm.PartImage
	}
	if !hasImage {
		if text := llm.ContentText(content, "\n"); text != "" {
			r.userText(text)
		}
		return
	}
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, p := range content {
		switch p.Type {
		case llm.PartText:
			parts = append(parts, openai.ChatCompletionContentPartUnionParam{OfText: &openai.ChatCompletionContentPartTextParam{Text: p.Text}})
		case llm.PartImage:
			parts = append(parts, openai.ChatCompletionContentPartUnionParam{OfImageURL: &openai.ChatCompletionContentPartImageParam{
				ImageURL: openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(p)},
			}})
		}
	}
	r.add(openai.ChatCompletionMessageParamUnion{OfUser: &openai.ChatCompletionUserMessageParam{
		Content: openai.ChatCompletionUserMessageParamContentUnion{OfArrayOfContentParts: parts},
	}})
}

func (r *chatRenderer) userText(text string) {
	r.add(openai.ChatCompletionMessageParamUnion{OfUser: &openai.ChatCompletionUserMessageParam{
		Content: openai.ChatCompletionUserMessageParamContentUnion{OfString: param.NewOpt(text)},
	}})
}

// assistant adds an assistant message: its text parts joined, its tool
// calls; thinking is not sent back.
func (r *chatRenderer) assistant(m *llm.Message) {
	a := openai.ChatCompletionAssistantMessageParam{}
	if text := llm.ContentText(m.Content, ""); text != "" {
		a.Content.OfString = param.NewOpt(text)
	}
	for _, tc := range m.ToolCalls() {
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
			ID: tc.ID,
			Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
				Name:      tc.Name,
				Arguments: string(adapt.ArgumentsObject(tc.Arguments)),
			},
		}})
	}
	if !a.Content.OfString.Valid() && len(a.ToolCalls) == 0 {
		return // nothing the API can carry (thinking only, or empty)
	}
	r.add(openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
}

// toolResult adds a tool message with the result's text; its images wait
// for the user message that follows the run of tool results.
func (r *chatRenderer) toolResult(m *llm.Message) {
	text := llm.ContentText(m.Content, "\n")
	images := 0
	for _, p := range m.Content {
		if p.Type == llm.PartImage {
			r.images = append(r.images, p)
			images++
		}
	}
	if text == "" && images > 0 {
		text = "(see the attached image)"
	}
	r.add(openai.ChatCompletionMessageParamUnion{OfTool: &openai.ChatCompletionToolMessageParam{
		ToolCallID: m.ToolCallID,
		Content:    openai.ChatCompletionToolMessageParamContentUnion{OfString: param.NewOpt(text)},
	}})
}

// flushImages adds the pending tool result images as one user message.
func (r *chatRenderer) flushImages() {
	if len(r.images) == 0 {
		return
	}
	content := append([]llm.Part{llm.Text("Attached image(s) from tool result:")}, r.images...)
	r.images = nil
	r.user(content)
}

// update adds a later system message in place: a system message carrying
// the added tools (Kimi's shape, no content), then its text as an
// instruction message; or, when updates travel as user text, a user
// message.
func (r *chatRenderer) update(plan *provider.Plan, u *provider.Update) {
	if plan.UpdatesAsUser {
		if u.Text != "" {
			r.userText(adapt.UserUpdateText(u.Text))
		}
		return
	}
	if len(u.Added) > 0 {
		tools := make([]any, len(u.Added))
		for i, t := range u.Added {
			tools[i] = chatToolJSON(t)
		}
		m := param.Override[openai.ChatCompletionSystemMessageParam](adapt.JSON(struct {
			Role  string `json:"role"`
			Tools []any  `json:"tools"`
		}{"system", tools}))
		r.add(openai.ChatCompletionMessageParamUnion{OfSystem: &m})
	}
	if u.Text != "" {
		r.instruction(u.Text)
	}
}
