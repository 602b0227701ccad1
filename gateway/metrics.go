package gateway

import (
	"time"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/tokens"
)

// record appends a metrics record for a search or a call through a
// surface: the tools that surface declares to its clients, with their
// tokens, the tool called (tool_search for a search, code for a script),
// and a script's inner calls with their result tokens, then one
// tool_search for each search the script made (searchTools), as a search
// through the surface counts.
func (g *Gateway) record(s Surface, called string, inner []codemode.Call, searches []codemode.SearchCall) {
	counter, err := tokens.Default()
	if err != nil {
		return
	}
	rec := tokens.Record{Time: time.Now(), API: "mcp", Strategy: "gateway-" + string(s), Called: []string{called}}
	for _, c := range inner {
		rec.Inner = append(rec.Inner, c.Tool)
		rec.InnerTokens += c.ResultTokens
	}
	for range searches {
		rec.Inner = append(rec.Inner, SearchName)
	}
	for _, t := range g.Tools(s) {
		n := counter.Tool(declaration(t))
		rec.Declared = append(rec.Declared, t.Name)
		rec.DeclaredTokens = append(rec.DeclaredTokens, n)
		rec.ToolTokens += n
	}
	rec.Tools = len(rec.Declared)
	if err := g.shelf.Record(rec); err != nil {
		g.cfg.Logger.Warn("metrics not recorded", "err", err)
	}
}
