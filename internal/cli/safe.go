package cli

import (
	"fmt"
	"io"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolshelf/toolshelf/internal/safetext"
)

// Text printed for a person goes through these: what comes from outside
// (MCP servers, models, catalog, session and metrics files, error
// messages that quote them) may carry escape sequences, carriage returns
// or bidi overrides, which package safetext makes visible. --json output
// does not: its encoder escapes what JSON needs, and its readers want the
// text as it is.

// show returns s made safe to print.
func show(s string) string { return safetext.String(s) }

// printf writes the formatted text made safe.
func printf(w io.Writer, format string, args ...any) {
	_, _ = io.WriteString(w, safetext.String(fmt.Sprintf(format, args...)))
}

// printLine writes s and a newline, made safe.
func printLine(w io.Writer, s string) {
	_, _ = io.WriteString(w, safetext.String(s)+"\n")
}

// numbers prints integers with thousands separators, for people; --json
// output keeps plain numbers.
var numbers = message.NewPrinter(language.English)

// num returns n with thousands separators: 12,370,001.
func num(n int) string { return numbers.Sprintf("%d", n) }
