package selection

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/tool"
)

// DefaultGroupAbove is the pool size past which the catalog is grouped by
// namespace: the model picks groups first, then tools.
const DefaultGroupAbove = 30

// ungrouped is the group of tools without a namespace.
const ungrouped = "other"

// Choice is one tool of a catalog, as the model sees it to choose.
type Choice struct {
	// Name is the model-facing tool name.
	Name string
	// Brief is the verb-first one-line summary the model chooses by.
	Brief string
	// Group is the tool's namespace name ("other" without one).
	Group string
	// New marks a tool registered since the last selection, so the model
	// notices it.
	New bool
	// Uses is the tool's measured use (calls), which orders the catalog.
	Uses int
}

// Group is one namespace of a grouped catalog.
type Group struct {
	// Name is the namespace's model-facing name, such as mcp__github.
	Name string
	// Description says what the group is for (the namespace's
	// description, else its first tools' briefs).
	Description string
	// Tools is the number of its tools in the catalog.
	Tools int
}

// CatalogOptions adjusts a catalog.
type CatalogOptions struct {
	// Briefs overrides the tools' briefs (their Brief, else one derived
	// from the description), by tool name.
	Briefs map[string]string
	// Uses is each tool's measured use; choices are ordered by it, most
	// used first, and otherwise keep the registry's order.
	Uses map[string]int
	// Known, when not nil, is the pool of the previous selection: tools
	// not in it are marked new.
	Known map[string]bool
	// GroupAbove is the pool size past which the catalog is grouped;
	// zero means DefaultGroupAbove, a negative value never groups.
	GroupAbove int
}

// Catalog is the short list the model selects from.
type Catalog struct {
	// Choices are the tools, most used first.
	Choices []Choice
	// Groups are the namespaces, in order of their first choice.
	Groups []Group
	// Grouped reports that the pool is large enough to select groups
	// first.
	Grouped bool
	hash    string
}

// NewCatalog builds the catalog of tools (typically the registry's
// loadable tools, in registration order).
func NewCatalog(tools []tool.Tool, opts CatalogOptions) *Catalog {
	c := &Catalog{}
	// hashed is what the pool hash covers of each tool.
	hashed := make([]string, 0, len(tools))
	groupDesc := map[string]string{}
	for _, t := range tools {
		brief := opts.Briefs[t.Name]
		if brief == "" {
			brief = clip(firstSentence(t.Brief), MaxBriefRunes)
		}
		if brief == "" {
			brief = Brief(t.Name, t.Title, t.Description)
		}
		group := ungrouped
		if t.Namespace != nil && t.Namespace.Name != "" {
			group = t.Namespace.Name
			if _, ok := groupDesc[group]; !ok {
				groupDesc[group] = firstSentence(t.Namespace.Description)
			}
		}
		c.Choices = append(c.Choices, Choice{Name: t.Name, Brief: brief, Group: group,
			New: opts.Known != nil && !opts.Known[t.Name], Uses: opts.Uses[t.Name]})
		// The pool hash covers what the model is told about each tool,
		// so a changed definition invalidates cached selections.
		hashed = append(hashed, fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00", t.Name, brief, t.Description, t.Parameters))
	}
	// Sorted (by name first): the registration order is the order in which MCP
	// servers happened to connect, and the same pool must hit the same
	// cached selections whatever it was.
	h := sha256.New()
	slices.Sort(hashed)
	for _, s := range hashed {
		io.WriteString(h, s)
	}
	c.hash = hex.EncodeToString(h.Sum(nil))
	slices.SortStableFunc(c.Choices, func(a, b Choice) int { return b.Uses - a.Uses })
	index := map[string]int{}
	for _, e := range c.Choices {
		i, ok := index[e.Group]
		if !ok {
			i = len(c.Groups)
			index[e.Group] = i
			c.Groups = append(c.Groups, Group{Name: e.Group, Description: groupDesc[e.Group]})
		}
		c.Groups[i].Tools++
	}
	for i, g := range c.Groups {
		if g.Description == "" {
			var briefs []string
			for _, e := range c.Choices {
				if e.Group == g.Name && len(briefs) < 3 {
					briefs = append(briefs, lowerFirst(e.Brief))
				}
			}
			c.Groups[i].Description = clip(strings.Join(briefs, "; "), 2*MaxBriefRunes)
		}
	}
	above := opts.GroupAbove
	if above == 0 {
		above = DefaultGroupAbove
	}
	c.Grouped = above > 0 && len(c.Choices) > above && len(c.Groups) > 1
	return c
}

// Hash identifies the pool: the tools' names, briefs and definitions,
// whatever their order.
func (c *Catalog) Hash() string { return c.hash }

// Text renders the choices of the given groups (every choice when groups
// is empty) as "name: brief" lines, marking new tools.
func (c *Catalog) Text(groups []string) string {
	var b strings.Builder
	for _, e := range c.Choices {
		if len(groups) > 0 && !slices.Contains(groups, e.Group) {
			continue
		}
		b.WriteString(e.Name)
		b.WriteString(": ")
		b.WriteString(e.Brief)
		if e.New {
			b.WriteString(" [new]")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// GroupText renders the groups as "name (N tools): description" lines
// ("1 tool" for one).
func (c *Catalog) GroupText() string {
	var b strings.Builder
	for _, g := range c.Groups {
		noun := "tools"
		if g.Tools == 1 {
			noun = "tool"
		}
		fmt.Fprintf(&b, "%s (%d %s): %s\n", g.Name, g.Tools, noun, g.Description)
	}
	return b.String()
}

// names returns the names of the choices of the given groups (all when
// groups is empty).
func (c *Catalog) names(groups []string) []string {
	var out []string
	for _, e := range c.Choices {
		if len(groups) == 0 || slices.Contains(groups, e.Group) {
			out = append(out, e.Name)
		}
	}
	return out
}

// groupNames returns the names of the groups.
func (c *Catalog) groupNames() []string {
	out := make([]string, len(c.Groups))
	for i, g := range c.Groups {
		out[i] = g.Name
	}
	return out
}
