package bench

import (
	"fmt"
	"slices"
	"strings"
)

// Profile is a set of MCP servers an agent is connected to.
type Profile struct {
	Name        string
	Description string
	// Servers names the catalog servers; nil means all of them.
	Servers []string
}

// Profiles returns the built-in profiles.
//
//   - team: the servers a product engineering team would connect — code
//     hosting, issues, chat, docs, errors, cluster, files, browser tests,
//     database, metrics and calendar: 11 servers, 99,250 tokens of tool
//     definitions (o200k), which fits every model's context window when
//     declared in full.
//   - corpus: all 53 servers of the built-in catalog, 1,564 tools,
//     438,018 tokens of definitions: more than any model's context window,
//     so declaring everything does not fit.
func Profiles() []Profile {
	return []Profile{
		{Name: "team", Description: "11 servers a product engineering team connects (about 99k tokens of definitions)",
			Servers: []string{"github", "linear", "slack", "notion", "sentry", "kubernetes-go", "filesystem",
				"playwright", "postgres", "datadog", "google-calendar"}},
		{Name: "corpus", Description: "all 53 servers of the built-in catalog (about 438k tokens of definitions)"},
	}
}

// ProfileNamed returns a built-in profile.
func ProfileNamed(name string) (Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("unknown profile %q: use %s, or --servers a,b,c", name, strings.Join(names, " or "))
}

// includes reports whether the profile has the server.
func (p Profile) includes(server string) bool {
	return p.Servers == nil || slices.Contains(p.Servers, server)
}
