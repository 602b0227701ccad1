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

// markLastMessage places the conversation breakpoint: on the last block of
// the last message when that message is a user or system message and the
// block can carry one (text, image, tool_result, tool_addition,
// tool_removal). A trailing held-back update therefore carries it.
func markLastMessage(msgs []sdk.BetaMessageParam, cc sdk.BetaCacheControlEphemeralParam) {
	if len(msgs) == 0 {
		return
	}
	last := msgs[len(msgs)-1]
	switch {
	case last.OfUser != nil && len(last.OfUser.Content) > 0:
		b := last.OfUser.Content[len(last.OfUser.Content)-1]
		switch {
		case b.OfText != nil:
			b.OfText.CacheControl = cc
		case b.OfImage != nil:
			b.OfImage.CacheControl = cc
		case b.OfToolResult != nil:
			b.OfToolResult.CacheControl = cc
		}
	case last.OfSystem != nil && len(last.OfSystem.Content) > 0:
		b := last.OfSystem.Content[len(last.OfSystem.Content)-1]
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
