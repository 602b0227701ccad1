package emulator

import (
	"strings"
	"time"
)

// geminiPolicy is the Gemini API's implicit cache: every prefix of a
// request is stored and a later request reads the longest one stored
// (no breakpoints), from the model's minimum on (provider docs: 1,024
// tokens for Flash models, 4,096 for Pro); usage reports reads as
// cachedContentTokenCount and no writes.
func geminiPolicy(model string) policy {
	p := policy{minTokens: 1024, automatic: true, defaultTTL: 5 * time.Minute}
	if strings.Contains(model, "-pro") {
		p.minTokens = 4096
	}
	return p
}
