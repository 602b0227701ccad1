package agent

import (
	"fmt"
	"strconv"

	"github.com/toolshelf/toolshelf/internal/cut"
	"github.com/toolshelf/toolshelf/llm"
)

// DefaultMaxResultBytes bounds the text of one tool result that enters the
// transcript when Config.MaxResultBytes is zero: 32 KiB, about 8,000
// tokens, 4% of a 200,000-token window. A transcript re-sends every result
// on every later request, so one unbounded result (a file dump, a log, a
// listing of everything) would make every request after it fail with
// "prompt is too long". It is above the 20 KiB at which MCP tools' results
// are already cut (with the whole output saved to a file), so those arrive
// untouched.
const DefaultMaxResultBytes = 32 << 10

// maxEchoBytes bounds how much of a model-supplied name an error text
// repeats: real tool names have at most 64 characters (128 for
// Anthropic), and a longer one is the model's mistake, not something to
// send back whole.
const maxEchoBytes = 128

// quoteName quotes a model-supplied tool name for an error text, cut to
// maxEchoBytes.
func quoteName(name string) string {
	if len(name) <= maxEchoBytes {
		return strconv.Quote(name)
	}
	return strconv.Quote(clipText(name, maxEchoBytes)) + fmt.Sprintf(" (%d bytes)", len(name))
}

// clipText returns s cut to at most n bytes at a rune boundary, with "…"
// marking a cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:cut.Before(s, n)] + "…"
}

// cutNote is the text put where the middle of a long result was.
const cutNote = "\n\n[… %d bytes cut from the middle of this tool result: results are limited to %d bytes. Ask the tool for less (a narrower query, a page, a range) if you need what was cut. …]\n\n"

// boundResult cuts the text of a result's parts to at most limit bytes
// (plus the note), in the middle of the text as the parts read in order:
// the head and the tail are kept whole runes, text parts entirely in the
// middle are dropped, and the note saying how much was cut goes where the
// cut is. Images are kept. Content within the limit is returned as it is.
func boundResult(content []llm.Part, limit int) []llm.Part {
	total := 0
	for _, p := range content {
		if p.Type == llm.PartText {
			total += len(p.Text)
		}
	}
	if total <= limit {
		return content
	}
	// Positions in the text of all the parts read in order: [0, headEnd)
	// and [tailStart, total) are kept.
	headEnd := limit / 2
	tailStart := total - (limit - headEnd)
	out := make([]llm.Part, 0, len(content))
	pos, noted := 0, false
	for _, p := range content {
		if p.Type != llm.PartText {
			out = append(out, p)
			continue
		}
		start := pos
		pos += len(p.Text)
		if pos <= headEnd || start >= tailStart {
			out = append(out, p) // wholly in the head or the tail
			continue
		}
		n := len(p.Text)
		head := p.Text[:cut.Before(p.Text, min(max(headEnd-start, 0), n))]
		tail := p.Text[cut.After(p.Text, min(max(tailStart-start, 0), n)):]
		text := head
		if !noted {
			text += fmt.Sprintf(cutNote, total-limit, limit)
			noted = true
		}
		text += tail
		if text != "" {
			out = append(out, llm.Text(text))
		}
	}
	return out
}
