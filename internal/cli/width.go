package cli

import (
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// maxWidth is the most columns a line of help or human output takes.
const maxWidth = 120

// outputWidth returns the columns lines written to w may take: the
// terminal's width when w is a terminal narrower than maxWidth, maxWidth
// otherwise.
func outputWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 && cols < maxWidth {
			return cols
		}
	}
	return maxWidth
}

// wrapIndented breaks s into lines of at most width columns at spaces, the
// first line after first, the others after indent; a word longer than the
// room keeps a line of its own.
func wrapIndented(s, first, indent string, width int) string {
	var b strings.Builder
	line, col := first, utf8.RuneCountInString(first)
	start := col
	for _, w := range strings.Fields(s) {
		n := utf8.RuneCountInString(w)
		if col > start && col+1+n > width {
			b.WriteString(line + "\n")
			line, col = indent, utf8.RuneCountInString(indent)
			start = col
		}
		if col > start {
			line += " "
			col++
		}
		line += w
		col += n
	}
	b.WriteString(line + "\n")
	return b.String()
}
