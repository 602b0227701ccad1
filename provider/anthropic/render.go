package anthropic

import (
	"errors"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// InlineToolsBeta is the beta the changes class sends: it enables
// tool_addition and tool_removal blocks in system messages, and inline tool
// definitions in additions.
const InlineToolsBeta = string(sdk.AnthropicBetaInlineTools2026_09_15)

// rendered is a request ready to send: the plan it came from (the stream
// unwraps calls with it) and the SDK parameters.
type rendered struct {
	plan   provider.Plan
	params sdk.BetaMessageNewParams
}

// RequestBody returns the JSON body Stream would send for the request,
// byte for byte; the anthropic-beta header, when one is needed, travels
// beside it.
func (m *Model) RequestBody(req *llm.Request) ([]byte, error) {
	r, err := m.render(req)
	if err != nil {
		return nil, err
	}
	return body(r.params)
}

// body marshals parameters as the SDK's streaming call sends them: the
// SDK appends "stream":true to the marshalled parameters.
func body(p sdk.BetaMessageNewParams) ([]byte, error) {
	b, err := adapt.StreamBody(p)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encoding the request: %w", err)
	}
	return b, nil
}

// render arranges the transcript with provider.Build and translates the
// plan. Tool names the API would refuse are an error, before anything is
// sent.
func (m *Model) render(req *llm.Request) (*rendered, error) {
	if req == nil {
		return nil, errors.New("anthropic: nil request: pass an *llm.Request with the transcript")
	}
	plan := provider.Build(req.Messages, m.caps)
	if err := plan.CheckNames(provider.AnthropicMessages); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	cc, caching := m.cacheControl()
	native := plan.Class == llm.ToolsChanges
	p := sdk.BetaMessageNewParams{
		Model:     sdk.Model(m.cfg.Model),
		MaxTokens: m.maxTokens(req.MaxTokens),
	}
	if strings.TrimSpace(plan.System) != "" {
		block := sdk.BetaTextBlockParam{Text: plan.System}
		if caching {
			block.CacheControl = cc
		}
		p.System = []sdk.BetaTextBlockParam{block}
	}
	for _, t := range plan.Tools {
		tp, err := toolParam(t)
		if err != nil {
			return nil, err
		}
		p.Tools = append(p.Tools, sdk.BetaToolUnionParam{OfTool: tp})
	}
	if caching && m.caps.CacheControlOnTools && len(p.Tools) > 0 {
		p.Tools[len(p.Tools)-1].OfTool.CacheControl = cc
	}
	if native {
		p.Tools = append(p.Tools, sdk.BetaToolUnionParam{OfTool: placeholderTool()})
		p.Betas = []sdk.AnthropicBeta{sdk.AnthropicBetaInlineTools2026_09_15}
	}
	conv := conversation{model: m.cfg.Model, native: native, updatesAsUser: plan.UpdatesAsUser}
	msgs, err := conv.render(plan.Items)
	if err != nil {
		return nil, err
	}
	if caching {
		markConversation(msgs, cc)
	}
	p.Messages = msgs
	return &rendered{plan: plan, params: p}, nil
}
