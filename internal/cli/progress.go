package cli

import (
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf/mcpclient"
)

// progressEvery is how often, at most, the progress of one tool call is
// printed.
const progressEvery = time.Second

// progressPrinter prints for the person, on stderr, the progress MCP
// servers report during long tool calls: a line per call at once, then at
// most one every progressEvery, made safe to print. run and chat print it
// in text mode; --json output has none.
type progressPrinter struct {
	w   io.Writer
	now func() time.Time

	mu   sync.Mutex
	last map[string]time.Time // by call: when its last line was printed
}

// newProgressPrinter returns a printer to w.
func newProgressPrinter(w io.Writer) *progressPrinter {
	return &progressPrinter{w: w, now: time.Now, last: map[string]time.Time{}}
}

// report prints p unless a line of its call was printed less than
// progressEvery ago.
func (pp *progressPrinter) report(p mcpclient.Progress) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	now := pp.now()
	if last, ok := pp.last[p.Call]; ok && now.Sub(last) < progressEvery {
		return
	}
	if len(pp.last) >= 64 {
		clear(pp.last) // the calls of long ago
	}
	pp.last[p.Call] = now
	done := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		done += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	line := fmt.Sprintf("… %s: %s", oneLine(p.Tool, 0), done)
	if p.Message != "" {
		line += " " + oneLine(p.Message, 160)
	}
	printLine(pp.w, line)
}
