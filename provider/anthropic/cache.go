package anthropic

import (
	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// cacheControl returns the breakpoint marker for the configured retention
// and whether breakpoints are placed at all.
func (m *Model) cacheControl() (sdk.BetaCacheControlEphemeralParam, bool) {
	cc := sdk.NewBetaCacheControlEphemeralParam()
	switch m.cfg.Retention {
	case RetentionNone:
		return cc, false
	case RetentionLong:
		if m.caps.LongCacheRetention {
			cc.TTL = sdk.BetaCacheControlEphemeralTTLTTL1h
		}
	}
	return cc, true
}

// markConversation places the conversation breakpoints: on the last
// block of the last message and of the message before it, each when that
// message is a user or system message and the block can carry one (text,
// image, tool_result, tool_addition, tool_removal). A trailing held-back
// update therefore carries one. The second marks where the previous
// request usually ended: a read looks back at most 20 blocks from a
// breakpoint, and an update that adds or removes many tools at once is
// longer than that. With the system block and the last head tool that
// makes at most four.
func markConversation(msgs []sdk.BetaMessageParam, cc sdk.BetaCacheControlEphemeralParam) {
	if len(msgs) == 0 {
		return
	}
	markMessage(msgs[len(msgs)-1], cc)
	if len(msgs) > 1 {
		markMessage(msgs[len(msgs)-2], cc)
	}
}

// markMessage marks the last block of a user or system message.
func markMessage(m sdk.BetaMessageParam, cc sdk.BetaCacheControlEphemeralParam) {
	switch {
	case m.OfUser != nil && len(m.OfUser.Content) > 0:
		b := m.OfUser.Content[len(m.OfUser.Content)-1]
		switch {
		case b.OfText != nil:
			b.OfText.CacheControl = cc
		case b.OfImage != nil:
			b.OfImage.CacheControl = cc
		case b.OfToolResult != nil:
			b.OfToolResult.CacheControl = cc
		}
	case m.OfSystem != nil && len(m.OfSystem.Content) > 0:
		b := m.OfSystem.Content[len(m.OfSystem.Content)-1]
		switch {
		case b.OfText != nil:
			b.OfText.CacheControl = cc
		case b.OfToolAddition != nil:
			b.OfToolAddition.CacheControl = cc
		case b.OfToolRemoval != nil:
			b.OfToolRemoval.CacheControl = cc
		}
	}
}
