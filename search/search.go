package search

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Document is what an index knows about one tool.
type Document struct {
	// Name is the model-facing tool name and the document's key.
	Name string
	// OriginalName is the name the tool's server uses (create_issue for
	// mcp__github__create_issue); empty when it is the same as Name.
	OriginalName string
	// Description is the tool's description.
	Description string
	// Parameters is the tool's JSON Schema; its property names,
	// descriptions and enum values are searchable.
	Parameters json.RawMessage
	// Namespace is the tool's group, usually its MCP server; zero if none.
	Namespace Namespace
}

// Namespace is a group of tools, usually one MCP server.
type Namespace struct {
	// Name is the model-facing group name, such as mcp__github.
	Name string
	// Description and Instructions describe the group. Both rankers
	// index them with each of the group's tools (the toolshelf ranker as
	// its server-text field).
	Description, Instructions string
}

// Query is one search.
type Query struct {
	// Text is what to look for. Rankers define their syntax; see
	// [NewBM25F] for the default one.
	Text string
	// Limit is the most hits to return; zero or less returns none.
	Limit int
	// Exclude names documents that are not candidates this time, such as
	// tools that are already loaded. Statistics (document count, lengths,
	// document frequencies) are computed over the candidates only.
	Exclude []string
}

// Hit is one matching document.
type Hit struct {
	// Name is the document's name.
	Name string
	// Score is the ranker's score; higher is better. Scores of different
	// rankers or queries are not comparable.
	Score float64
	// Exact reports a match of the whole query (or a select: entry) with
	// the tool's name rather than a ranked text match.
	Exact bool
}

// Result is the answer to a [Query].
type Result struct {
	// Hits are the matches, best first.
	Hits []Hit
	// Hint explains a search that found nothing, when the ranker can; nil
	// otherwise.
	Hint *Hint
}

// Hint explains why a search found nothing and what might work instead.
type Hint struct {
	// Loaded lists tools the query named exactly that are already loaded.
	Loaded []string `json:"loaded,omitempty"`
	// Unmatched lists the query's words that no tool contains, as they
	// were written in the query.
	Unmatched []string `json:"unmatched,omitempty"`
	// OnlyLoaded lists the query's words that only tools already loaded
	// contain.
	OnlyLoaded []string `json:"only_loaded,omitempty"`
	// Together lists the required words (+word) when each occurs but no
	// tool has them all.
	Together []string `json:"together,omitempty"`
	// Nearest lists candidate tool names that look most like the
	// unmatched words.
	Nearest []string `json:"nearest,omitempty"`
}

// String returns the hint as short sentences for a model or a user.
func (h *Hint) String() string {
	if h == nil {
		return ""
	}
	var parts []string
	if len(h.Loaded) > 0 {
		parts = append(parts, fmt.Sprintf("Already loaded: %s.", strings.Join(h.Loaded, ", ")))
	}
	if len(h.Unmatched) > 0 {
		parts = append(parts, fmt.Sprintf("No tool mentions %s.", quoteList(h.Unmatched)))
	}
	if len(h.OnlyLoaded) > 0 {
		parts = append(parts, fmt.Sprintf("Only tools already loaded mention %s.", quoteList(h.OnlyLoaded)))
	}
	if len(h.Together) > 0 {
		parts = append(parts, fmt.Sprintf("No tool has %s together.", strings.Join(h.Together, ", ")))
	}
	if len(h.Nearest) > 0 {
		parts = append(parts, fmt.Sprintf("Closest tool names: %s.", strings.Join(h.Nearest, ", ")))
	}
	return strings.Join(parts, " ")
}

// empty reports whether the hint says nothing.
func (h *Hint) empty() bool {
	return len(h.Loaded)+len(h.Unmatched)+len(h.OnlyLoaded)+len(h.Together)+len(h.Nearest) == 0
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// Ranker is a search index over tool documents. Implementations analyse a
// document once, when it is added, keep postings in memory and answer a
// query in time proportional to the postings of its terms, not to the
// catalog's total text. They are safe for concurrent use.
type Ranker interface {
	// Name returns the ranker's mode name, such as "toolshelf" or "pi".
	Name() string
	// Add indexes documents. A document whose name is already indexed is
	// replaced and keeps its position in the document order, which breaks
	// ties between equal scores.
	Add(docs ...Document)
	// Remove drops the named documents; unknown names are ignored.
	Remove(names ...string)
	// Len returns the number of indexed documents.
	Len() int
	// Search ranks the candidates for q.
	Search(q Query) Result
}

// Mode names a ranker.
const (
	// ModeToolshelf is the default ranker, [NewBM25F].
	ModeToolshelf = "toolshelf"
	// ModePI is the reference ranker, [NewPI].
	ModePI = "pi"
)

// Modes returns the ranker names [New] accepts, the default first.
func Modes() []string { return []string{ModeToolshelf, ModePI} }

// New returns an empty ranker of the named mode. opts configures the
// toolshelf ranker and may be nil.
func New(mode string, opts *Options) (Ranker, error) {
	switch mode {
	case ModeToolshelf, "":
		return NewBM25F(opts)
	case ModePI:
		return NewPI(), nil
	}
	return nil, fmt.Errorf("unknown ranker %q: use toolshelf or pi", mode)
}
