package mcpclient

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tool"
)

// SectionName is the name of the system prompt section that lists the MCP
// servers whose tools are loaded on demand.
const SectionName = "mcp_servers"

// The section's limits, in UTF-16 code units as the reference counts them.
const (
	maxSectionChars = 4096
	maxSummaryChars = 250
)

// The section's fixed texts.
const (
	sectionIntro = "MCP servers whose tools are not declared to you yet. " +
		"Load the tools of a `tool_search` server with `tool_search`."
	sectionCodemodeIntro = " Call the tools of a `codemode` server from a codemode script: " +
		"`searchTools(query, { namespace })` finds them and `describeNamespace(name)` gives the server's instructions and tool names."
	sectionOmitted = "- … %d more server(s); find their tools with tool_search"
)

// sectionServer is one server of the section.
type sectionServer struct {
	namespace string
	codemode  bool
	summary   string
}

// Section returns the mcp_servers section of the system prompt: the enabled
// servers whose tools are not declared up front (deferred or codemode, not
// always loaded), sorted by name, each with a one-line summary from its
// configured description or else its instructions. The section is at most
// 4,096 UTF-16 code units: servers that do not fit are counted in a last
// line, and summaries share what is left (at most 250 each). Without such
// servers it returns a deletion of the section.
func (m *Manager) Section() llm.Section {
	m.mu.Lock()
	var servers []sectionServer
	for _, s := range m.servers {
		if !s.onShelf() {
			continue
		}
		summary := firstLine(s.cfg.Description)
		if summary == "" {
			summary = firstLine(s.instructions)
		}
		servers = append(servers, sectionServer{
			namespace: tool.NamespaceName(s.cfg.Name),
			codemode:  s.cfg.hasExposure(tool.Codemode),
			summary:   summary,
		})
	}
	m.mu.Unlock()
	if len(servers) == 0 {
		return llm.Delete(SectionName)
	}
	return llm.Set(SectionName, renderSection(servers))
}

// renderSection lays out the section (servers sorted by name).
func renderSection(servers []sectionServer) string {
	intro := sectionIntro
	heads := make([]string, len(servers))
	for i, s := range servers {
		kind := "tool_search"
		if s.codemode {
			kind = "codemode"
			intro = sectionIntro + sectionCodemodeIntro
		}
		heads[i] = fmt.Sprintf("- %s (%s)", s.namespace, kind)
	}
	lines := func(kept int) []string {
		out := append([]string{intro}, heads[:kept]...)
		if kept < len(heads) {
			out = append(out, fmt.Sprintf(sectionOmitted, len(heads)-kept))
		}
		return out
	}
	size := func(ls []string) int { return utf16Len(strings.Join(ls, "\n")) }
	kept := len(heads)
	for kept > 0 && size(lines(kept)) > maxSectionChars {
		kept--
	}
	if kept == 0 {
		return strings.Join(lines(0), "\n")
	}
	budget := min(maxSummaryChars, (maxSectionChars-size(lines(kept)))/kept-2)
	for i := range kept {
		if sum := truncateUTF16(servers[i].summary, budget); sum != "" {
			heads[i] += ": " + sum
		}
	}
	return strings.Join(lines(kept), "\n")
}

// firstLine returns the first line of the trimmed text, with control
// characters replaced by spaces.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// truncateUTF16 cuts s to at most max UTF-16 code units, ending a cut text
// with "…" (cut to max-1 units, trailing space removed). It returns "" when
// max leaves no room.
func truncateUTF16(s string, max int) string {
	if utf16Len(s) <= max {
		return s
	}
	if max < 2 {
		return ""
	}
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if n+w > max-1 {
			return strings.TrimRightFunc(s[:i], unicode.IsSpace) + "…"
		}
		n += w
	}
	return s
}

// utf16Len is the length of s in UTF-16 code units, as JavaScript counts.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
