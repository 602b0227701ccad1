package anthropic

import (
	"encoding/base64"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// conversation turns a plan's items into messages. Tool results
// accumulate into one user message until another message arrives; updates
// rendered as system messages wait until just before the next assistant
// message or the end, so that none sits between a tool_use and its
// tool_result and each follows a user turn.
type conversation struct {
	// model is the configured model id: thinking is replayed only to the
	// model that wrote it.
	model string
	// native renders tool additions and removals as blocks.
	native bool
	// updatesAsUser sends updates in place as user text.
	updatesAsUser bool

	msgs    []sdk.BetaMessageParam
	results []sdk.BetaContentBlockParamUnion
	held    []sdk.BetaMessageParam
}

// render returns the messages of a plan's items.
func (c *conversation) render(items []provider.Item) ([]sdk.BetaMessageParam, error) {
	for _, e := range items {
		if e.Update != nil {
			if err := c.update(e.Update); err != nil {
				return nil, err
			}
			continue
		}
		m := e.Message
		switch m.Role {
		case llm.RoleToolResult:
			c.results = append(c.results, toolResultBlock(m))
		case llm.RoleUser:
			c.flushResults()
			if blocks := userBlocks(m.Content); len(blocks) > 0 {
				c.msgs = append(c.msgs, sdk.BetaMessageParam{OfUser: &sdk.BetaUserMessageParam{Content: blocks}})
			}
		case llm.RoleAssistant:
			c.flushResults()
			if blocks := c.assistantBlocks(m); len(blocks) > 0 {
				c.flushHeld()
				c.msgs = append(c.msgs, sdk.BetaMessageParam{OfAssistant: &sdk.BetaAssistantMessageParam{Content: blocks}})
			}
		}
	}
	c.flushResults()
	c.flushHeld()
	return c.msgs, nil
}

func (c *conversation) flushResults() {
	if len(c.results) > 0 {
		c.msgs = append(c.msgs, sdk.BetaMessageParam{OfUser: &sdk.BetaUserMessageParam{Content: c.results}})
		c.results = nil
	}
}

func (c *conversation) flushHeld() {
	c.msgs = append(c.msgs, c.held...)
	c.held = nil
}

// update renders an update: in place as user text when the model takes no
// system text mid-conversation, else as a held-back system message of a
// text block, then (changes class) a tool_removal per removed name and a
// tool_addition with the inline definition per added tool.
func (c *conversation) update(u *provider.Update) error {
	if c.updatesAsUser {
		if strings.TrimSpace(u.Text) != "" {
			c.flushResults()
			c.msgs = append(c.msgs, sdk.NewBetaUserMessage(sdk.NewBetaTextBlock(adapt.UserUpdateText(u.Text))))
		}
		return nil
	}
	var blocks []sdk.BetaSystemMessageParamContentUnion
	if strings.TrimSpace(u.Text) != "" {
		blocks = append(blocks, sdk.BetaSystemMessageParamContentUnion{OfText: &sdk.BetaTextBlockParam{Text: u.Text}})
	}
	if c.native {
		for _, name := range u.Removed {
			blocks = append(blocks, sdk.BetaSystemMessageParamContentUnion{OfToolRemoval: &sdk.BetaRequestToolRemovalBlockParam{
				Tool: sdk.BetaRequestToolRemovalBlockToolUnionParam{OfToolReference: &sdk.BetaToolChangeToolReferenceParam{Name: name}},
			}})
		}
		for _, t := range u.Added {
			def, err := toolParam(t)
			if err != nil {
				return err
			}
			blocks = append(blocks, sdk.BetaSystemMessageParamContentUnion{OfToolAddition: &sdk.BetaRequestToolAdditionBlockParam{
				Tool: sdk.BetaRequestToolAdditionBlockToolUnionParam{OfToolDefinition: &sdk.BetaToolChangeToolDefinitionParam{
					Definition: sdk.BetaToolUnionParam{OfTool: def},
				}},
			}})
		}
	}
	if len(blocks) > 0 {
		c.held = append(c.held, sdk.BetaMessageParam{OfSystem: &sdk.BetaSystemMessageParam{Content: blocks}})
	}
	return nil
}

// userBlocks converts a user message's text and images; blank text is left
// out, as the API refuses it.
func userBlocks(parts []llm.Part) []sdk.BetaContentBlockParamUnion {
	var blocks []sdk.BetaContentBlockParamUnion
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if strings.TrimSpace(p.Text) != "" {
				blocks = append(blocks, sdk.NewBetaTextBlock(p.Text))
			}
		case llm.PartImage:
			blocks = append(blocks, sdk.BetaContentBlockParamUnion{OfImage: imageBlock(p)})
		}
	}
	return blocks
}

func imageBlock(p llm.Part) *sdk.BetaImageBlockParam {
	return &sdk.BetaImageBlockParam{Source: sdk.BetaImageBlockParamSourceUnion{OfBase64: &sdk.BetaBase64ImageSourceParam{
		Data:      base64.StdEncoding.EncodeToString(p.Data),
		MediaType: sdk.BetaBase64ImageSourceMediaType(p.MIMEType),
	}}}
}

// assistantBlocks converts an assistant message: thinking (only for the
// model that wrote it, with its signature), non-blank text and tool calls
// with their arguments as an object.
func (c *conversation) assistantBlocks(m *llm.Message) []sdk.BetaContentBlockParamUnion {
	var blocks []sdk.BetaContentBlockParamUnion
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartThinking:
			if m.Model != c.model || p.Signature == "" {
				continue
			}
			if p.Redacted {
				blocks = append(blocks, sdk.NewBetaRedactedThinkingBlock(p.Signature))
			} else {
				blocks = append(blocks, sdk.NewBetaThinkingBlock(p.Signature, p.Text))
			}
		case llm.PartText:
			if strings.TrimSpace(p.Text) != "" {
				blocks = append(blocks, sdk.NewBetaTextBlock(p.Text))
			}
		case llm.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			blocks = append(blocks, sdk.BetaContentBlockParamUnion{OfToolUse: &sdk.BetaToolUseBlockParam{
				ID:    toolID(p.ToolCall.ID),
				Name:  p.ToolCall.Name,
				Input: adapt.ArgumentsObject(p.ToolCall.Arguments),
			}})
		}
	}
	return blocks
}

// toolResultBlock converts a tool result: its non-blank text and images,
// and whether it reports an error.
func toolResultBlock(m *llm.Message) sdk.BetaContentBlockParamUnion {
	r := &sdk.BetaToolResultBlockParam{ToolUseID: toolID(m.ToolCallID), IsError: param.NewOpt(m.IsError)}
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartText:
			if strings.TrimSpace(p.Text) != "" {
				r.Content = append(r.Content, sdk.BetaToolResultBlockParamContentUnion{OfText: &sdk.BetaTextBlockParam{Text: p.Text}})
			}
		case llm.PartImage:
			r.Content = append(r.Content, sdk.BetaToolResultBlockParamContentUnion{OfImage: imageBlock(p)})
		}
	}
	return sdk.BetaContentBlockParamUnion{OfToolResult: r}
}

// maxToolIDLength bounds the tool call ids sent.
const maxToolIDLength = 64

// toolID returns a tool call id as Anthropic accepts it: every character
// outside [a-zA-Z0-9_-] replaced by '_', cut to 64 characters. A call and
// its result map to the same id, and ids the API wrote come back unchanged.
func toolID(id string) string {
	var b strings.Builder
	for _, r := range id {
		if b.Len() == maxToolIDLength {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
