package agent

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolshelf/toolshelf/llm"
)

// TestBoundResultProperties cuts results of one to four text parts (and an
// image) of every size around the limit and checks: the text is within the
// limit plus one note, it starts with the original's head and ends with its
// tail, runes are whole, the image stays, and a result within the limit
// is unchanged.
func TestBoundResultProperties(t *testing.T) {
	const limit = 64
	runes := []string{"a", "é", "語", "😀"}
	for _, nparts := range []int{1, 2, 3, 4} {
		for size := 1; size <= 3*limit; size += 7 {
			for ri, r := range runes {
				var parts []llm.Part
				var all strings.Builder
				for i := range nparts {
					text := strings.Repeat(r, size/len(r)+i)
					parts = append(parts, llm.Text(text))
					all.WriteString(text)
					if i == 0 {
						parts = append(parts, llm.Part{Type: llm.PartImage, MIMEType: "image/png", Data: []byte{1}})
					}
				}
				name := fmt.Sprintf("%d parts of %d, rune %d", nparts, size, ri)
				out := boundResult(parts, limit)
				var got strings.Builder
				images := 0
				for _, p := range out {
					if p.Type == llm.PartImage {
						images++
						continue
					}
					got.WriteString(p.Text)
				}
				orig, cut := all.String(), got.String()
				if images != 1 {
					t.Errorf("%s: %d images", name, images)
				}
				if len(orig) <= limit {
					if cut != orig || len(out) != len(parts) {
						t.Errorf("%s: a result within the limit changed", name)
					}
					continue
				}
				note := fmt.Sprintf(cutNote, len(orig)-limit, limit)
				i := strings.Index(cut, note)
				if i < 0 {
					t.Errorf("%s: no note in %q", name, cut)
					continue
				}
				head, tail := cut[:i], cut[i+len(note):]
				if len(head)+len(tail) > limit || !strings.HasPrefix(orig, head) || !strings.HasSuffix(orig, tail) ||
					len(head) < limit/2-4 || len(tail) < limit/2-4 {
					t.Errorf("%s: head %q and tail %q of %q", name, head, tail, orig)
				}
				if !utf8.ValidString(cut) {
					t.Errorf("%s: a rune was split", name)
				}
			}
		}
	}
}
