package lexicon

import (
	"encoding/json"
	"slices"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// searchCall is one tool_search call of a transcript.
type searchCall struct {
	query  string
	prompt int // which user prompt it answered
	loaded []string
	// result is the position of its result, -1 until it is found.
	result int
	// called lists the tools it loaded that the model called after its
	// result, first called first; empty for a miss.
	called []string
}

// toolCall is one call of another tool, at a position of the transcript.
type toolCall struct {
	name string
	pos  int
}

// Pairs reads what a transcript's searches teach. A search is a miss
// when the model calls none of the tools it loaded (it may have loaded
// none), and a hit when it calls some: the first it calls is the hit's
// tool. Each miss with a [search.QueryKey], followed within the same
// user prompt by a hit with another key, gives a learned pair: the
// miss's query and the hit's tool. Each hit gives a used pair of its own
// query and each tool it loaded that was called: what the query meant
// among the near ties it loaded. Each pair is given once (by query key
// and tool), in the order the transcript teaches it. Calls inside
// codemode scripts are not read.
func Pairs(msgs []llm.Message) (learned, used []Pair) {
	var searches []*searchCall
	byID := map[string]*searchCall{}
	var calls []toolCall
	prompt, pos := 0, 0
	for i := range msgs {
		m := &msgs[i]
		pos++
		switch m.Role {
		case llm.RoleUser:
			prompt++
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls() {
				if c.Name != toolsearch.Name {
					calls = append(calls, toolCall{name: c.Name, pos: pos})
					continue
				}
				var a struct {
					Query string `json:"query"`
				}
				_ = json.Unmarshal(c.Arguments, &a) // a bad call is a miss without a query
				s := &searchCall{query: a.Query, prompt: prompt, result: -1}
				searches = append(searches, s)
				byID[c.ID] = s
			}
		case llm.RoleToolResult:
			s, ok := byID[m.ToolCallID]
			if !ok || m.ToolName != toolsearch.Name || s.result >= 0 {
				continue
			}
			s.result = pos
			var d toolsearch.Details
			if json.Unmarshal(m.Details, &d) == nil {
				s.loaded = d.Loaded
			}
		}
	}
	for _, s := range searches {
		if s.result < 0 {
			continue
		}
		for _, c := range calls {
			if c.pos > s.result && slices.Contains(s.loaded, c.name) && !slices.Contains(s.called, c.name) {
				s.called = append(s.called, c.name)
			}
		}
	}
	seenLearned, seenUsed := map[Pair]bool{}, map[Pair]bool{} // by query key and tool
	add := func(out []Pair, seen map[Pair]bool, query, tool string) []Pair {
		k := Pair{Query: search.QueryKey(query), Tool: tool}
		if k.Query == "" || seen[k] {
			return out
		}
		seen[k] = true
		return append(out, Pair{Query: query, Tool: tool})
	}
	for i, s := range searches {
		if len(s.called) > 0 {
			for _, t := range s.called {
				used = add(used, seenUsed, s.query, t)
			}
			continue
		}
		key := search.QueryKey(s.query)
		for _, h := range searches[i+1:] {
			if h.prompt != s.prompt {
				break
			}
			if len(h.called) > 0 {
				if search.QueryKey(h.query) != key {
					learned = add(learned, seenLearned, s.query, h.called[0])
				}
				break
			}
		}
	}
	return learned, used
}
