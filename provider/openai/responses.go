package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// Responses is an [llm.Model] on OpenAI's Responses API. It is safe for
// concurrent use.
type Responses struct {
	cfg     Config
	service responses.ResponseService
}

var _ llm.Model = (*Responses)(nil)

// NewResponses returns a Responses adapter. It fails when the model id is
// missing or the capabilities name a class or anchor the Responses API
// cannot render.
func NewResponses(cfg Config) (*Responses, error) {
	cfg, err := cfg.resolve(provider.OpenAIResponses)
	if err != nil {
		return nil, err
	}
	c := cfg.client()
	return &Responses{cfg: cfg, service: c.Responses}, nil
}

// Capabilities returns the capabilities the adapter renders with.
func (m *Responses) Capabilities() provider.Capabilities { return m.cfg.Capabilities }

// RequestBody returns the JSON body Stream would send for the request,
// byte for byte.
func (m *Responses) RequestBody(req *llm.Request) ([]byte, error) {
	params, _, err := m.params(req)
	if err != nil {
		return nil, err
	}
	return adapt.StreamBody(params)
}

// Stream sends the request and yields the answer's events; see
// [llm.Model].
func (m *Responses) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
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
		dec := newResponsesDecoder(plan, m.cfg.Model)
		run(ctx, provider.OpenAIResponses, stream, &failure, dec, yield)
	}
}

// params renders a request.
func (m *Responses) params(req *llm.Request) (responses.ResponseNewParams, *provider.Plan, error) {
	if req == nil {
		return responses.ResponseNewParams{}, nil, fmt.Errorf("%s: %w", provider.OpenAIResponses, errNilRequest)
	}
	plan := provider.Build(req.Messages, m.cfg.Capabilities)
	if err := plan.CheckNames(provider.OpenAIResponses); err != nil {
		return responses.ResponseNewParams{}, nil, err
	}
	r := responsesRenderer{model: m.cfg.Model, caps: m.cfg.Capabilities}
	params := responses.ResponseNewParams{
		Model: m.cfg.Model,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: r.input(&plan)},
		Tools: responsesTools(plan.Tools),
	}
	if n := m.cfg.maxTokens(req); n > 0 {
		params.MaxOutputTokens = param.NewOpt(n)
	}
	return params, &plan, nil
}

// responsesRenderer turns a plan into Responses input items.
type responsesRenderer struct {
	model string
	caps  provider.Capabilities
	items responses.ResponseInputParam
	// lastText is the last text part of the last item when that item is a
	// message, where the closing cache breakpoint goes.
	lastText *responses.ResponseInputTextParam
}

// role is the instruction role.
func (r *responsesRenderer) role() responses.EasyInputMessageRole {
	if r.caps.DeveloperRole {
		return responses.EasyInputMessageRoleDeveloper
	}
	return responses.EasyInputMessageRoleSystem
}

func (r *responsesRenderer) add(item responses.ResponseInputItemUnionParam) {
	r.items = append(r.items, item)
	r.lastText = nil
}

// text adds a message whose content is a string, or, on models with
// explicit cache breakpoints, one input_text part that can carry one.
func (r *responsesRenderer) text(role responses.EasyInputMessageRole, text string) *responses.ResponseInputTextParam {
	if !r.caps.CacheBreakpoints || role == responses.EasyInputMessageRoleAssistant {
		r.add(responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
			Role:    role,
			Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(text)},
		}})
		return nil
	}
	part := &responses.ResponseInputTextParam{Text: text}
	r.add(responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
		Role: role,
		Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: responses.ResponseInputMessageContentListParam{
			{OfInputText: part},
		}},
	}})
	r.lastText = part
	return part
}

// breakpoint marks the end of a reusable prefix at a text part.
func breakpoint(part *responses.ResponseInputTextParam) {
	part.PromptCacheBreakpoint = responses.NewResponseInputTextPromptCacheBreakpointParam()
}

// input renders the plan's conversation. On models with explicit cache
// breakpoints (gpt-5.6 and later) two are marked: the end of the head, so
// every conversation with the same tools and instructions reuses it, and
// the end of the request when it ends with a message, so an update after
// the last tool result is cached too (the implicit breakpoint sits at the
// last user or tool message). Markers are not part of the cache key, so
// moving the last one keeps the prefix.
func (r *responsesRenderer) input(plan *provider.Plan) responses.ResponseInputParam {
	if plan.System != "" {
		if head := r.text(r.role(), plan.System); head != nil {
			breakpoint(head)
		}
	}
	defer func() {
		if r.lastText != nil && r.lastText.PromptCacheBreakpoint.Mode == "" {
			breakpoint(r.lastText)
		}
	}()
	for _, e := range plan.Items {
		switch {
		case e.Update != nil:
			r.update(plan, e.Index, e.Update)
		case e.Message.Role == llm.RoleUser:
			r.user(e.Message.Content)
		case e.Message.Role == llm.RoleAssistant:
			r.assistant(e.Message)
		case e.Message.Role == llm.RoleToolResult:
			r.toolResult(e.Message)
		}
	}
	return r.items
}

// user adds a user message with the text and image parts of content.
func (r *responsesRenderer) user(content []llm.Part) {
	var parts responses.ResponseInputMessageContentListParam
	for _, p := range content {
		switch p.Type {
		case llm.PartText:
			parts = append(parts, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: p.Text}})
		case llm.PartImage:
			parts = append(parts, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
				ImageURL: param.NewOpt(dataURL(p)),
				Detail:   responses.ResponseInputImageDetailAuto,
			}})
		}
	}
	if len(parts) == 0 {
		return // an empty user message is refused; there is nothing to say
	}
	r.add(responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
		Role:    responses.EasyInputMessageRoleUser,
		Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: parts},
	}})
	if last := parts[len(parts)-1].OfInputText; last != nil && r.caps.CacheBreakpoints {
		r.lastText = last
	}
}

// assistant adds an assistant answer in part order: each text part as an
// assistant message (the easy form, which needs no item id), each tool call
// as a function_call, and each reasoning item this model produced as it
// came.
func (r *responsesRenderer) assistant(m *llm.Message) {
	ownReasoning := m.Model == r.model && m.StopReason != llm.StopError && m.StopReason != llm.StopAborted
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				r.text(responses.EasyInputMessageRoleAssistant, p.Text)
			}
		case llm.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			r.add(responses.ResponseInputItemUnionParam{OfFunctionCall: &responses.ResponseFunctionToolCallParam{
				CallID:    p.ToolCall.ID,
				Name:      p.ToolCall.Name,
				Arguments: string(adapt.ArgumentsObject(p.ToolCall.Arguments)),
			}})
		case llm.PartThinking:
			if item, ok := reasoningItem(p.Signature); ok && ownReasoning {
				reasoning := param.Override[responses.ResponseReasoningItemParam](item)
				r.add(responses.ResponseInputItemUnionParam{OfReasoning: &reasoning})
			}
		}
	}
}

// reasoningItem returns the reasoning item a thinking part's signature
// stores, if it holds one.
func reasoningItem(signature string) (json.RawMessage, bool) {
	var item struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if !strings.HasPrefix(signature, "{") || json.Unmarshal([]byte(signature), &item) != nil ||
		item.Type != "reasoning" || item.ID == "" {
		return nil, false
	}
	return json.RawMessage(signature), true
}

// toolResult adds a function_call_output: the result's text, or its text
// and images as input parts when it has images.
func (r *responsesRenderer) toolResult(m *llm.Message) {
	out := responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt(m.ToolCallID)}
	text := llm.ContentText(m.Content, "\n")
	var items responses.ResponseFunctionCallOutputItemListParam
	for _, p := range m.Content {
		if p.Type == llm.PartImage {
			items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
				ImageURL: param.NewOpt(dataURL(p)),
				Detail:   responses.ResponseInputImageContentDetailAuto,
			}})
		}
	}
	if len(items) == 0 {
		out.Output.OfString = param.NewOpt(text)
	} else {
		if text != "" {
			items = append([]responses.ResponseFunctionCallOutputItemUnionParam{{OfInputText: &responses.ResponseInputTextContentParam{Text: text}}}, items...)
		}
		out.Output.OfResponseFunctionCallOutputItemArray = items
	}
	r.add(responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &out})
}

// update adds a later system message in place: its anchored additions,
// then its text as an instruction message; or, when updates travel as
// user text, a user message.
func (r *responsesRenderer) update(plan *provider.Plan, index int, u *provider.Update) {
	if plan.UpdatesAsUser {
		if u.Text != "" {
			r.user([]llm.Part{llm.Text(adapt.UserUpdateText(u.Text))})
		}
		return
	}
	if len(u.Added) > 0 {
		switch r.caps.Anchor {
		case provider.AnchorToolSearch:
			r.toolSearchPair(index, u.Added)
		default:
			r.add(responses.ResponseInputItemUnionParam{OfAdditionalTools: &responses.ResponseInputItemAdditionalToolsParam{
				Tools: responsesTools(u.Added),
			}})
		}
	}
	switch {
	case u.Text != "":
		r.text(r.role(), u.Text)
	case len(u.Added) > 0 && r.caps.CacheBreakpoints:
		// A short instruction after the anchored tools gives the closing
		// breakpoint a place: tool items cannot carry one.
		names := make([]string, len(u.Added))
		for i, t := range u.Added {
			names[i] = t.Name
		}
		r.text(r.role(), "Tools loaded: "+strings.Join(names, ", ")+".")
	}
}

// toolSearchPair adds a completed client tool search that loaded tools:
// the call (query: the names, limit: their count) and its output (the
// declarations, defer_loading). The call id derives from the update's
// transcript position and the names, so it is the same in every request.
func (r *responsesRenderer) toolSearchPair(index int, added []llm.Tool) {
	names := make([]string, len(added))
	tools := make([]responses.ResponseToolSearchOutputItemParamToolUnion, len(added))
	for i, t := range added {
		names[i] = t.Name
		tools[i] = responses.ResponseToolSearchOutputItemParamToolUnion{OfFunction: responsesTool(t, true)}
	}
	callID := toolLoadCallID(index, names)
	r.add(responses.ResponseInputItemUnionParam{OfToolSearchCall: &responses.ResponseInputItemToolSearchCallParam{
		CallID:    param.NewOpt(callID),
		Execution: "client",
		Status:    "completed",
		Arguments: toolSearchArguments{Query: strings.Join(names, " "), Limit: len(names)},
	}})
	r.add(responses.ResponseInputItemUnionParam{OfToolSearchOutput: &responses.ResponseToolSearchOutputItemParam{
		CallID:    param.NewOpt(callID),
		Execution: responses.ResponseToolSearchOutputItemParamExecutionClient,
		Status:    responses.ResponseToolSearchOutputItemParamStatusCompleted,
		Tools:     tools,
	}})
}

// toolSearchArguments are a synthetic tool_search_call's arguments.
type toolSearchArguments struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// toolLoadCallID is the call id of the synthetic tool search that loads
// names at a transcript position.
func toolLoadCallID(index int, names []string) string {
	return "toolshelf_load_" + shortHash(fmt.Sprintf("system:%d:%s", index, strings.Join(names, ",")))
}
