package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
)

// The README's markers around the generated table.
const (
	beginMarker = "<!-- gateway-pays:begin -->"
	endMarker   = "<!-- gateway-pays:end -->"
)

// Provenance says where and when the figures were measured.
type Provenance struct {
	// Command is the command that measured them.
	Command string
	// Date is the day of the run, such as 2026-12-02.
	Date string
	// Machine describes the machine, such as "linux/amd64, 2 CPUs".
	Machine string
	// Claude is Claude Code's version, such as 2.1.332.
	Claude string
	// Model is the model Claude Code asked for.
	Model string
}

var setupName = map[string]string{
	Meta:   "gateway, `meta`",
	Direct: "gateway, `direct`",
	None:   "no gateway",
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Table renders the results as the README's section body: where they were
// measured, one row per session, and what they say.
func Table(p Provenance, results []Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `%s` on %s (%s), with Claude Code %s asking for %s, whose context window it gives as %s tokens.\n\n",
		p.Command, p.Date, p.Machine, p.Claude, p.Model, thousands(contextWindow))
	b.WriteString("| upstream tools | Claude Code reaches them through | its tool search | requests | prompt tokens | cache reads | cache writes | uncached | cost in input tokens |\n")
	b.WriteString("|---:|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", thousands(r.Tools), setupName[r.Setup], onOff(r.ToolSearch),
			r.Requests, thousands(r.Input), thousands(r.Read), thousands(r.Write), thousands(r.Uncached), cost(r))
	}
	var failures []string
	for _, r := range results {
		if r.Failed != "" {
			failures = append(failures, fmt.Sprintf("%s tools, %s, tool search %s: %s", thousands(r.Tools), setupName[r.Setup], onOff(r.ToolSearch), r.Failed))
		}
	}
	if len(failures) > 0 {
		b.WriteString("\nSessions that did not run as scripted (their figures are those of the requests answered):\n\n")
		for _, f := range failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if s := summary(results); s != "" {
		b.WriteString("\n" + s)
	}
	return b.String()
}

// cost is a row's cost column, marked when the session failed.
func cost(r Result) string {
	switch {
	case r.Failed != "" && r.Requests == 0:
		return "failed"
	case r.Failed != "":
		return thousands(int(math.Round(r.Cost()))) + " (failed)"
	}
	return thousands(int(math.Round(r.Cost())))
}

// summary says, for each size and tool search setting, which setup cost
// least, and what meta costs over no gateway at the smallest size.
func summary(results []Result) string {
	type key struct {
		tools      int
		toolSearch bool
	}
	var order []key
	groups := map[key][]Result{}
	for _, r := range results {
		k := key{r.Tools, r.ToolSearch}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var b strings.Builder
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		best := -1
		for i, r := range g {
			if r.Failed == "" && (best < 0 || r.Cost() < g[best].Cost()) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s tools, tool search %s: %s costs least (%s input tokens' worth).", thousands(k.tools), onOff(k.toolSearch),
			setupName[g[best].Setup], thousands(int(math.Round(g[best].Cost()))))
		meta, none := find(g, Meta), find(g, None)
		if meta != nil && none != nil && meta.Failed == "" && none.Failed != "" {
			b.WriteString(" With no gateway the session failed.")
		}
		if meta != nil && none != nil && meta.Failed == "" && none.Failed == "" {
			d := meta.Cost() - none.Cost()
			word := "more"
			if d < 0 {
				word, d = "less", -d
			}
			fmt.Fprintf(&b, " `meta` costs %s %s than no gateway, with %s and %s.", thousands(int(math.Round(d))), word,
				more(meta.Requests-none.Requests, "request", "requests"), more(meta.Input-none.Input, "prompt token", "prompt tokens"))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func find(g []Result, setup string) *Result {
	for i := range g {
		if g[i].Setup == setup {
			return &g[i]
		}
	}
	return nil
}

// more says "3 more requests", "1 fewer request" or "as many requests".
func more(n int, one, many string) string {
	word := "more"
	if n < 0 {
		word, n = "fewer", -n
	}
	switch n {
	case 0:
		return "as many " + many
	case 1:
		return "1 " + word + " " + one
	}
	return thousands(n) + " " + word + " " + many
}

// thousands writes n with commas: 1,564.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Rewrite replaces what lies between the README's markers with body.
func Rewrite(readme []byte, body string) ([]byte, error) {
	begin := bytes.Index(readme, []byte(beginMarker))
	end := bytes.Index(readme, []byte(endMarker))
	if begin < 0 || end < 0 || end < begin {
		return nil, errors.New("the README has no " + beginMarker + " … " + endMarker + " pair: add both, in this order, where the table goes")
	}
	if bytes.Count(readme, []byte(beginMarker)) > 1 || bytes.Count(readme, []byte(endMarker)) > 1 {
		return nil, errors.New("the README has more than one " + beginMarker + " or " + endMarker + ": keep one pair")
	}
	var out bytes.Buffer
	out.Write(readme[:begin+len(beginMarker)])
	out.WriteString("\n" + body)
	out.Write(readme[end:])
	return out.Bytes(), nil
}
