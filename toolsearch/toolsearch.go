package toolsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/toolshelf/toolshelf/internal/cut"
	"github.com/toolshelf/toolshelf/internal/reftext"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
)

// Name is the tool's name.
const Name = "tool_search"

// DefaultLimit is how many tools a search loads at most when the model does
// not say.
const DefaultLimit = 8

// Description is the tool's static description. It lists no tools and no
// servers, so it stays byte-identical while servers connect and tools come
// and go.
const Description = "# Tool discovery\n\n" +
	"Searches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\n" +
	"Some of the tools, such as tools of MCP servers, may not have been provided to you upfront, " +
	"and you should use this tool (`tool_search`) to search for the required tools. " +
	"For MCP tool discovery, always use `tool_search`."

// PromptSnippet is the one-line summary for a system prompt's tool list.
const PromptSnippet = "Search for tools that are not loaded yet and load the matches"

// Parameters is the tool's JSON Schema.
const Parameters = `{"type":"object","properties":{` +
	`"query":{"type":"string","description":"Search query for deferred tools."},` +
	`"limit":{"type":"number","description":"Maximum number of tools to return. Defaults to 8."}},` +
	`"required":["query"]}`

// NoMatches is the result text of a search that loads nothing.
const NoMatches = "No matching tools found."

// The bounds on what the model sends and gets back. A tool result stays
// in the transcript and is re-sent with every later request, so a search
// must not echo a huge query or list thousands of tools: the next request
// would overflow the context window and so would every one after it.
const (
	// MaxQueryBytes is the longest query accepted: 4 KiB, room for a
	// paragraph describing a task, or a select: of MaxSelect names of 64
	// characters and their separators (2,100 bytes).
	MaxQueryBytes = 4 << 10
	// MaxSelect is the most tools one select: query names: 32, four
	// times what a search loads by default (DefaultLoad). Loading is
	// additive, so more can be selected by a later call.
	MaxSelect = 32
	// MaxLimit is the largest limit honoured; a larger one is lowered to
	// it. With ReferenceLoad every hit up to the limit is loaded, and 32
	// tools is already more than a model chooses among well.
	MaxLimit = 32
	// MaxResultBytes bounds the result text: 8 KiB, about 2,000 tokens.
	// A default search lists at most 8 loaded tools and the other hits up
	// to its limit, one line each; the built-in catalog's 90th percentile
	// first line is 379 bytes, so a full default result is about 3.5 KB.
	// Lines past the bound are left out with a line saying how many (the
	// tools are loaded all the same: their definitions reach the model
	// with the next request).
	MaxResultBytes = 8 << 10
	// MaxBriefBytes bounds the first line of a description that a result
	// line shows: 512 bytes, cut at a rune with "…" (the built-in
	// catalog's 99th percentile is 680 bytes, its median 68).
	MaxBriefBytes = 512
)

// Searcher searches a registry's shelf with a ranker and loads the matches.
// It keeps the ranker's index in step with the registry: before each search
// it indexes the tools registered or re-registered since the last one, so
// the cost of following the registry is proportional to its changes. It is
// safe for concurrent use.
type Searcher struct {
	reg    *tool.Registry
	ranker search.Ranker

	mu  sync.Mutex // guards rev, indexed, policy, notes and aliases, and serialises index updates
	rev uint64
	// indexed maps each indexed tool to its namespace's name ("" for
	// none).
	indexed map[string]string
	policy  LoadPolicy
	notes   func(context.Context) []string // see SetNotes
	aliases Aliases                        // see SetAliases
}

// New returns a Searcher over reg's deferred and codemode tools, ranked by
// ranker (which should be empty: the Searcher fills it). FindAndLoad
// loads hits by DefaultLoad; SetLoadPolicy(ReferenceLoad) loads every hit,
// as the reference does.
func New(reg *tool.Registry, ranker search.Ranker) *Searcher {
	return &Searcher{reg: reg, ranker: ranker, indexed: make(map[string]string), policy: DefaultLoad}
}

// Ranker returns the ranker the Searcher uses.
func (s *Searcher) Ranker() search.Ranker { return s.ranker }

// Document returns the search document of a tool.
func Document(t tool.Tool) search.Document {
	d := search.Document{
		Name:        t.Name,
		Description: t.Description,
		Parameters:  t.Parameters,
	}
	if t.Origin.Tool != t.Name {
		d.OriginalName = t.Origin.Tool
	}
	if t.Namespace != nil {
		d.Namespace = search.Namespace{Name: t.Namespace.Name, Description: t.Namespace.Description,
			Instructions: t.Namespace.Instructions}
	}
	return d
}

// Sync brings the index up to date with the registry. Find calls it; call
// it directly to pay the indexing cost ahead of the first search.
func (s *Searcher) Sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed, rev := s.reg.ChangedSince(s.rev)
	s.rev = rev
	add := make([]search.Document, 0, len(changed))
	if len(s.indexed) == 0 && len(changed) > 0 {
		s.indexed = make(map[string]string, len(changed))
	}
	var remove []string
	for _, t := range changed {
		switch {
		case t.Exposure.Loadable():
			add = append(add, Document(t))
			ns := ""
			if t.Namespace != nil {
				ns = t.Namespace.Name
			}
			s.indexed[t.Name] = ns
		default:
			if _, ok := s.indexed[t.Name]; ok {
				remove = append(remove, t.Name)
				delete(s.indexed, t.Name)
			}
		}
	}
	if len(remove) > 0 {
		s.ranker.Remove(remove...)
	}
	if len(add) > 0 {
		s.ranker.Add(add...)
	}
}

// Outcome is what one search did.
type Outcome struct {
	// Hits are the ranked matches, best first.
	Hits []search.Hit
	// Loaded lists the tools the search activated.
	Loaded []string
	// Others lists the hits the load policy left on the shelf, best
	// first.
	Others []string
	// Hint explains an empty result, when the ranker can.
	Hint *search.Hint
	// Learned lists the tools learned aliases of the query ranked first
	// (after the tools the query names exactly), heaviest first; empty
	// when none did ([Searcher.SetAliases]). FindAndLoad loads these and
	// the exact hits only.
	Learned []string
}

// ErrEmptyQuery and ErrBadLimit report invalid arguments.
var (
	ErrEmptyQuery = errors.New("query must not be empty")
	ErrBadLimit   = errors.New("limit must be a positive integer")
)

// Find ranks the shelf's candidates (loadable tools that are not active)
// for query, without loading anything.
func (s *Searcher) Find(query string, limit int) (Outcome, error) {
	return s.FindIn(query, limit, Scope{})
}

// Scope says which indexed tools a search ranks: by default the shelf's,
// the loadable tools that are not active.
type Scope struct {
	// Active ranks the active (loaded) tools too: a codemode script may
	// call a tool whether or not the model has it declared.
	Active bool
	// Namespace, when set, ranks only the tools of the namespace of that
	// name (mcp__github).
	Namespace string
}

// FindIn ranks the indexed tools that scope admits for query, without
// loading anything: the same index and ranker as Find, whose statistics
// are computed over the admitted tools only.
func (s *Searcher) FindIn(query string, limit int, scope Scope) (Outcome, error) {
	if reftext.TrimJS(query) == "" {
		return Outcome{}, ErrEmptyQuery
	}
	if limit <= 0 {
		return Outcome{}, ErrBadLimit
	}
	s.Sync()
	var exclude []string
	s.mu.Lock()
	if scope.Namespace != "" {
		for name, ns := range s.indexed {
			if ns != scope.Namespace {
				exclude = append(exclude, name)
			}
		}
	}
	s.mu.Unlock()
	// The candidates' statistics are sums over what is excluded: a fixed
	// order keeps the scores the same from one search to the next.
	slices.Sort(exclude)
	if !scope.Active {
		for _, name := range s.reg.ActiveNames() {
			if ns, ok := s.indexedIn(name); ok && (scope.Namespace == "" || ns == scope.Namespace) {
				exclude = append(exclude, name)
			}
		}
	}
	res := s.ranker.Search(search.Query{Text: query, Limit: limit, Exclude: exclude})
	out := Outcome{Hits: res.Hits, Hint: res.Hint}
	s.mu.Lock()
	aliases := s.aliases
	s.mu.Unlock()
	if aliases != nil {
		s.applyAlias(aliases, query, limit, scope, exclude, &out)
	}
	return out, nil
}

// Aliases gives what a user's past sessions learned; package
// internal/lexicon keeps it. It must be safe for concurrent use.
type Aliases interface {
	// Lookup returns the tools learned for query, best first.
	Lookup(query string) []string
	// Called reports whether past sessions called the tool after a
	// search.
	Called(tool string) bool
}

// SetAliases makes later searches read learned aliases. The tools a's
// Lookup gives for a query that the search could rank (on the shelf, in
// the scope) are ranked first, at the best ranked hit's score, after
// the tools the query names exactly, which an alias never passes, and
// FindAndLoad loads those and the exact hits only: the user's sessions
// broke the near ties. Without an alias, the tools a's Called reports
// go first among the near ties the load policy chooses from. A query
// that names a loaded tool exactly gets no alias. nil (the default)
// reads none, as the reference does.
func (s *Searcher) SetAliases(a Aliases) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aliases = a
}

// applyAlias ranks the tools learned aliases of query name first, after
// the exact hits, within limit.
func (s *Searcher) applyAlias(a Aliases, query string, limit int, scope Scope, exclude []string, out *Outcome) {
	if len(out.Hits) == 0 && out.Hint != nil && len(out.Hint.Loaded) > 0 {
		return // the query names a loaded tool
	}
	exact := 0
	for exact < len(out.Hits) && out.Hits[exact].Exact {
		exact++
	}
	var names []string
	for _, t := range a.Lookup(query) {
		if exact+len(names) >= limit {
			break
		}
		ns, ok := s.indexedIn(t)
		if !ok || (scope.Namespace != "" && ns != scope.Namespace) || slices.Contains(exclude, t) ||
			slices.ContainsFunc(out.Hits[:exact], func(h search.Hit) bool { return h.Name == t }) {
			continue
		}
		names = append(names, t)
	}
	if len(names) == 0 {
		return
	}
	hits := slices.DeleteFunc(slices.Clone(out.Hits), func(h search.Hit) bool { return !h.Exact && slices.Contains(names, h.Name) })
	score := 1.0
	if exact < len(hits) {
		score = hits[exact].Score
	}
	learned := make([]search.Hit, len(names))
	for i, n := range names {
		learned[i] = search.Hit{Name: n, Score: score}
	}
	hits = slices.Insert(hits, exact, learned...)
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out.Hits, out.Hint, out.Learned = hits, nil, names
}

// indexedIn returns the namespace of an indexed tool.
func (s *Searcher) indexedIn(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns, ok := s.indexed[name]
	return ns, ok
}

// LoadPolicy decides how many of a search's hits are loaded. The zero
// policy loads every hit up to the limit, as the reference does.
type LoadPolicy struct {
	// Max bounds the ranked hits loaded per search; zero means no bound
	// beyond the search's limit. Exact hits (a tool named by the query or
	// by select:) always load.
	Max int
	// Relative loads a ranked hit only when its score is at least this
	// fraction of the best hit's score; zero loads every hit.
	Relative float64
}

// DefaultLoad is the policy a new Searcher uses: up to 4 ranked hits,
// each scoring at least 0.7 of the best. Measured with toolshelf bench
// (README, Benchmark) against the reference's policy with its ranker, it
// loads 6.1 instead of 16.4 tools per task on the embedded suite (no
// failed step instead of 4; tool tokens loaded 2.54 times those needed)
// and 5.0 instead of 12.3 on the public dev tasks (no failed step).
var DefaultLoad = LoadPolicy{Max: 4, Relative: 0.7}

// ReferenceLoad is the reference implementation's policy: every hit up to
// the search's limit.
var ReferenceLoad = LoadPolicy{}

// SetLoadPolicy sets how many hits later searches load.
func (s *Searcher) SetLoadPolicy(p LoadPolicy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.policy = p
}

// choose returns the hits the policy loads, best first, and the others.
// called, when set, reports the tools past sessions called: among the
// near ties (the ranked hits that pass Relative), those come first.
func (p LoadPolicy) choose(hits []search.Hit, called func(string) bool) (load, rest []search.Hit) {
	if len(hits) == 0 {
		return nil, nil
	}
	top := hits[0].Score
	var ranked []search.Hit
	for _, h := range hits {
		switch {
		case h.Exact:
			load = append(load, h)
		case p.Relative == 0 || len(ranked) == 0 || h.Score >= p.Relative*top:
			ranked = append(ranked, h)
		}
	}
	if called != nil {
		slices.SortStableFunc(ranked, func(a, b search.Hit) int { return boolFirst(called(a.Name), called(b.Name)) })
	}
	if p.Max > 0 && len(ranked) > p.Max {
		ranked = ranked[:p.Max]
	}
	load = append(load, ranked...)
	for _, h := range hits { // the others keep the ranker's order
		if !slices.ContainsFunc(load, func(l search.Hit) bool { return l.Name == h.Name }) {
			rest = append(rest, h)
		}
	}
	return load, rest
}

// boolFirst orders true before false.
func boolFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// FindAndLoad ranks the candidates for query, as Find does, and loads
// (activates) the hits the load policy chooses, additively, so the next
// request declares them. The other hits are returned in Outcome.Others.
// It is what the tool_search tool does.
func (s *Searcher) FindAndLoad(query string, limit int) (Outcome, error) {
	out, err := s.Find(query, limit)
	if err != nil || len(out.Hits) == 0 {
		return out, err
	}
	s.mu.Lock()
	policy, aliases := s.policy, s.aliases
	s.mu.Unlock()
	var load, rest []search.Hit
	switch {
	case len(out.Learned) > 0:
		for _, h := range out.Hits {
			if h.Exact || slices.Contains(out.Learned, h.Name) {
				load = append(load, h)
			} else {
				rest = append(rest, h)
			}
		}
	case aliases != nil:
		load, rest = policy.choose(out.Hits, aliases.Called)
	default:
		load, rest = policy.choose(out.Hits, nil)
	}
	for _, h := range rest {
		out.Others = append(out.Others, h.Name)
	}
	names := make([]string, len(load))
	for i, h := range load {
		names[i] = h.Name
	}
	s.reg.Activate(names...)
	// A tool withdrawn (re-registered as hidden) since the search is not
	// reported as loaded.
	for _, n := range names {
		if s.reg.IsActive(n) {
			out.Loaded = append(out.Loaded, n)
		}
	}
	return out, nil
}

// Details is the model-invisible part of a tool_search result.
type Details struct {
	// Loaded lists the tools the call loaded; empty, not null, when none.
	Loaded []string `json:"loaded"`
}

// Tool returns the tool_search tool, bound to this Searcher. Register it in
// the Searcher's registry. It is model-only and active once registered;
// set StartInactive on the returned value to keep it undeclared until
// something activates it by name (as the reference does, and as the
// toolshelf front door does while no server keeps tools on the shelf).
func (s *Searcher) Tool() tool.Tool {
	return tool.Tool{
		Name:        Name,
		Description: Description,
		Parameters:  json.RawMessage(Parameters),
		Exposure:    tool.ModelOnly,
		Handler:     &handler{s: s},
		// A search's results depend on every server's tools.
		Reaches: tool.Reach{All: true},
	}
}

// Is reports whether t is a tool_search tool made by [Searcher.Tool], not
// merely a tool of the same name.
func Is(t tool.Tool) bool {
	_, ok := t.Handler.(*handler)
	return ok && t.Name == Name
}

type handler struct{ s *Searcher }

type args struct {
	Query *string         `json:"query"`
	Limit json.RawMessage `json:"limit"`
}

// Call runs one search. Invalid arguments and empty results are reported
// to the model in the result text; Call itself fails only when ctx is done.
func (h *handler) Call(ctx context.Context, raw json.RawMessage) (*tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var a args
	if err := json.Unmarshal(raw, &a); err != nil {
		return tool.ErrorResult("arguments must be a JSON object with a string \"query\""), nil
	}
	// The reference checks the query before the limit.
	if a.Query == nil || reftext.TrimJS(*a.Query) == "" {
		return tool.ErrorResult(ErrEmptyQuery.Error()), nil
	}
	if err := checkQuery(*a.Query); err != nil {
		return tool.ErrorResult(err.Error()), nil
	}
	limit, err := parseLimit(a.Limit)
	if err != nil {
		return tool.ErrorResult(err.Error()), nil
	}
	out, err := h.s.FindAndLoad(*a.Query, limit)
	if err != nil {
		return tool.ErrorResult(err.Error()), nil
	}
	res := tool.TextResult(h.s.withNotes(ctx, ResultText(h.s.reg, out)))
	res.Details = Details{Loaded: append([]string{}, out.Loaded...)}
	return res, nil
}

// checkQuery refuses a query longer than MaxQueryBytes and a select: of
// more than MaxSelect names, without repeating the query.
func checkQuery(q string) error {
	if n := len(q); n > MaxQueryBytes {
		return fmt.Errorf("query is %d bytes long; at most %d are accepted: search with a few words that say what the tool does, or load tools by name with \"select:<name>,<name>\"",
			n, MaxQueryBytes)
	}
	q = strings.TrimSpace(q)
	if len(q) < len("select:") || !strings.EqualFold(q[:len("select:")], "select:") {
		return nil
	}
	n := 0
	for name := range strings.SplitSeq(q[len("select:"):], ",") {
		if strings.TrimSpace(name) != "" {
			n++
		}
	}
	if n > MaxSelect {
		return fmt.Errorf("select: names %d tools; at most %d can be loaded by one call: select the ones you need now (more can be selected later)", n, MaxSelect)
	}
	return nil
}

// parseLimit reads the optional limit: absent or null means DefaultLimit;
// anything but a positive integral number is an error. Limits above
// MaxLimit are lowered to it.
func parseLimit(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return DefaultLimit, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f <= 0 || f != math.Trunc(f) {
		return 0, ErrBadLimit
	}
	return int(min(f, MaxLimit)), nil
}

// ResultText renders an outcome for the model: "No matching tools found."
// (followed by the hint, if any), or "Loaded <n> tool(s). They are
// available from your next call:" (the reference's text for the model,
// kept word for word: "They" for one tool too) and one line per tool with
// the first line of its description (at most MaxBriefBytes of it), then
// the hits left on the shelf. The text is at most MaxResultBytes long: lines past it are
// left out, with a last line saying how many.
func ResultText(reg *tool.Registry, out Outcome) string {
	if len(out.Loaded) == 0 {
		text := NoMatches
		if hint := out.Hint.String(); hint != "" {
			text += "\n" + hint
		}
		return boundLines(strings.Split(text, "\n"))
	}
	plural := "s"
	if len(out.Loaded) == 1 {
		plural = ""
	}
	lines := []string{fmt.Sprintf("Loaded %d tool%s. They are available from your next call:", len(out.Loaded), plural)}
	for _, name := range out.Loaded {
		t, _ := reg.Get(name)
		lines = append(lines, fmt.Sprintf("- %s: %s", name, brief(t.Description)))
	}
	if len(out.Others) > 0 {
		lines = append(lines, "Also matched, not loaded (load one with tool_search \"select:<name>\"):")
		for _, name := range out.Others {
			t, _ := reg.Get(name)
			lines = append(lines, fmt.Sprintf("- %s: %s", name, brief(t.Description)))
		}
	}
	return boundLines(lines)
}

// brief is the first line of a description, cut to MaxBriefBytes.
func brief(desc string) string {
	s := FirstLine(desc)
	if len(s) <= MaxBriefBytes {
		return s
	}
	return s[:cut.Before(s, MaxBriefBytes)] + "…"
}

// omitted is the last line of a result cut to MaxResultBytes.
const omitted = "(… %d more bytes not shown: a result is limited to %d bytes.)"

// boundLines joins lines with newlines. A text longer than MaxResultBytes
// keeps the whole lines that fit (at least part of the first) and ends
// with a line saying how much was left out.
func boundLines(lines []string) string {
	text := strings.Join(lines, "\n")
	if len(text) <= MaxResultBytes {
		return text
	}
	budget := MaxResultBytes - len(fmt.Sprintf(omitted, len(text), MaxResultBytes)) - 1
	n := 0
	for i, l := range lines {
		end := n + len(l)
		if i > 0 {
			end++
		}
		if end > budget {
			break
		}
		n = end
	}
	if n == 0 {
		n = cut.Before(text, budget)
	}
	return text[:n] + "\n" + fmt.Sprintf(omitted, len(text)-n, MaxResultBytes)
}

// FirstLine returns the first line of the trimmed text.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSuffix(s[:i], "\r")
	}
	return s
}
