package selection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tool"
)

// The first line of each selection request; a model stand-in recognises
// the requests by it.
const (
	ToolRequest  = "Select the tools for this task."
	GroupRequest = "Select the tool groups for this task."
)

// Instructions is the head of the selection conversation. It never
// changes: the catalog reaches the model as an appended section update.
const Instructions = "You choose the tools an assistant will need for a task. The catalog lists the tools " +
	"available, one per line as `name: what it does` (tools marked [new] were added recently), or tool groups " +
	"as `group (N tools): what they are for`. Reply with the names you choose and nothing else: exactly as the " +
	"catalog writes them, separated by commas, on one line. Choose every tool (or group) the task needs, and no " +
	"other. If none fits, reply NONE."

// The sections of the selection conversation.
const (
	catalogSection = "tool_catalog"
	groupsSection  = "tool_groups"
)

// Fallback is a step of the ladder taken when a selection chooses nothing.
type Fallback string

// The fallback steps.
const (
	// FallbackAsk asks the user what the task needs (interactive use
	// only) and selects again with the answer.
	FallbackAsk Fallback = "ask"
	// FallbackGroups selects again, groups first, when the first attempt
	// offered the whole catalog.
	FallbackGroups Fallback = "groups"
	// FallbackSearch gives up selecting: the caller declares tool_search
	// so the model can load tools itself.
	FallbackSearch Fallback = "search"
	// FallbackFull declares every tool of the pool.
	FallbackFull Fallback = "full"
)

// DefaultFallbacks is the ladder unless configured: ask (when there is
// someone to ask), groups, then tool_search.
var DefaultFallbacks = []Fallback{FallbackAsk, FallbackGroups, FallbackSearch}

// ParseFallbacks reads a comma-separated ladder such as "groups,full".
func ParseFallbacks(s string) ([]Fallback, error) {
	var out []Fallback
	for _, f := range strings.Split(s, ",") {
		switch fb := Fallback(strings.TrimSpace(f)); fb {
		case FallbackAsk, FallbackGroups, FallbackSearch, FallbackFull:
			out = append(out, fb)
		case "":
		default:
			return nil, fmt.Errorf("unknown fallback %q: use ask, groups, search or full, comma-separated", f)
		}
	}
	return out, nil
}

// Config configures a Selector.
type Config struct {
	// Model answers the selection requests. Required.
	Model llm.Model
	// ModelID names the model, for the cache key.
	ModelID string
	// Tools is the registry; its pool is the tools that can be loaded
	// (deferred or codemode) other than tool_search. Required.
	Tools *tool.Registry
	// Catalog adjusts the catalog (brief overrides, measured uses, the
	// group threshold). Its Known field is managed by the Selector.
	Catalog CatalogOptions
	// Fallbacks is the ladder when nothing is selected; nil means
	// DefaultFallbacks.
	Fallbacks []Fallback
	// Ask, when set, asks the user a question and returns the answer
	// (interactive use). Without it FallbackAsk is skipped.
	Ask func(ctx context.Context, question string) (string, error)
	// Cache, when set, is the pattern cache.
	Cache *Cache
	// SystemPrompt is the agent's system prompt, part of the cache key.
	SystemPrompt string
	// MaxTokens bounds each selection answer (default 300).
	MaxTokens int
	// Now is the clock for message timestamps (time.Now when nil).
	Now func() time.Time
}

// Result is one selection.
type Result struct {
	// Names are the tools to declare.
	Names []string
	// Groups are the groups chosen on the way, if the catalog was
	// grouped.
	Groups []string
	// Source says where the names come from: "model", "cache", or the
	// fallback that decided ("ask", "groups", "search", "full"); "none"
	// when the ladder ended without tools.
	Source string
	// Search reports that the caller should declare tool_search (the
	// search fallback, or names the model gave that the catalog lacks).
	Search bool
	// Unknown are names the model gave that are not in the catalog.
	Unknown []string
	// Requests counts the selection requests sent; Usage sums their
	// usage.
	Requests int
	Usage    llm.Usage
	// Catalog is the catalog selected from.
	Catalog *Catalog
}

// Selector runs two-phase selection for one agent: its selection
// conversation grows append-only, so its prefix stays cached. It is not
// safe for concurrent use.
type Selector struct {
	cfg      Config
	messages []llm.Message
	sections map[string]string
	known    map[string]bool
}

// New returns a Selector.
func New(cfg Config) (*Selector, error) {
	if cfg.Model == nil || cfg.Tools == nil {
		return nil, errors.New("selection: Config.Model and Config.Tools are required")
	}
	if cfg.Fallbacks == nil {
		cfg.Fallbacks = DefaultFallbacks
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 300
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Selector{cfg: cfg, sections: map[string]string{}}, nil
}

// Messages returns the selection conversation so far.
func (s *Selector) Messages() []llm.Message { return slices.Clone(s.messages) }

// Pool returns the tools selection chooses from, in registration order.
func (s *Selector) Pool() []tool.Tool {
	var out []tool.Tool
	for _, t := range s.cfg.Tools.Tools() {
		// Discovery tools (tool_search reaches the whole shelf) are not
		// picks.
		if t.Exposure.Loadable() && !t.Reaches.All {
			out = append(out, t)
		}
	}
	return out
}

// Catalog returns the current catalog of the pool.
func (s *Selector) Catalog() *Catalog {
	opts := s.cfg.Catalog
	opts.Known = s.known
	return NewCatalog(s.Pool(), opts)
}

// Select chooses the tools for a task. Errors are the model's (a failed
// request) or ctx's; a selection that chooses nothing is not an error but
// goes down the fallback ladder.
func (s *Selector) Select(ctx context.Context, task string) (*Result, error) {
	cat := s.Catalog()
	s.known = map[string]bool{}
	for _, e := range cat.Choices {
		s.known[e.Name] = true
	}
	res := &Result{Catalog: cat}
	if len(cat.Choices) == 0 {
		res.Source, res.Search = "none", true
		return res, nil
	}
	key := Key{Features: Features(task), Pool: cat.Hash(), Model: s.cfg.ModelID, System: HashText(s.cfg.SystemPrompt)}
	if s.cfg.Cache != nil {
		if names, groups, ok := s.cfg.Cache.Get(key); ok {
			res.Names, res.Groups, res.Source = names, groups, "cache"
			return res, nil
		}
	}
	grouped := cat.Grouped
	if err := s.attempt(ctx, res, task, grouped); err != nil {
		return res, err
	}
	res.Source = "model"
	for _, f := range s.cfg.Fallbacks {
		if len(res.Names) > 0 {
			break
		}
		switch f {
		case FallbackAsk:
			if s.cfg.Ask == nil {
				continue
			}
			answer, err := s.cfg.Ask(ctx, "No tool seemed to fit the request. What should be done, with which service or data?")
			if err != nil {
				return res, err
			}
			if strings.TrimSpace(answer) == "" {
				continue
			}
			task = task + "\n" + answer
			if err := s.attempt(ctx, res, task, grouped); err != nil {
				return res, err
			}
			res.Source = "ask"
		case FallbackGroups:
			if grouped || len(cat.Groups) < 2 {
				continue
			}
			grouped = true
			if err := s.attempt(ctx, res, task, true); err != nil {
				return res, err
			}
			res.Source = "groups"
		case FallbackSearch:
			res.Source, res.Search = "search", true
			return res, nil
		case FallbackFull:
			res.Names, res.Source = cat.names(nil), "full"
			return res, nil
		}
	}
	if len(res.Names) == 0 {
		res.Source = "none"
		return res, nil
	}
	// Names the catalog lacks: the model wanted something else too;
	// tool_search lets it find it.
	res.Search = len(res.Unknown) > 0
	if s.cfg.Cache != nil && (res.Source == "model" || res.Source == "groups") {
		s.cfg.Cache.Put(key, res.Names, res.Groups)
	}
	return res, nil
}

// attempt runs one selection (groups first when grouped) and puts its
// outcome in res.
func (s *Selector) attempt(ctx context.Context, res *Result, task string, grouped bool) error {
	cat := res.Catalog
	res.Names, res.Groups, res.Unknown = nil, nil, nil
	if !grouped {
		s.setSection(catalogSection, cat.Text(nil))
		answer, err := s.ask(ctx, res, ToolRequest+"\n\nTask: "+task)
		if err != nil {
			return err
		}
		p := Parse(answer, NewResolver(cat.names(nil)))
		res.Names, res.Unknown = p.Names, p.Unknown
		return nil
	}
	s.setSection(groupsSection, cat.GroupText())
	answer, err := s.ask(ctx, res, GroupRequest+"\n\nTask: "+task)
	if err != nil {
		return err
	}
	g := Parse(answer, NewResolver(cat.groupNames()))
	if len(g.Names) == 0 {
		return nil
	}
	res.Groups = g.Names
	answer, err = s.ask(ctx, res, ToolRequest+"\n\nThe tools of the groups you chose:\n"+cat.Text(g.Names)+"\nTask: "+task)
	if err != nil {
		return err
	}
	p := Parse(answer, NewResolver(cat.names(g.Names)))
	res.Names, res.Unknown = p.Names, p.Unknown
	return nil
}

// setSection appends a section update when the section's text changed.
func (s *Selector) setSection(name, text string) {
	if old, ok := s.sections[name]; ok && old == text {
		return
	}
	s.sections[name] = text
	s.head()
	s.messages = append(s.messages, llm.Message{Role: llm.RoleSystem, Sections: llm.Sections{llm.Set(name, text)},
		Timestamp: s.cfg.Now().UnixMilli()})
}

// head starts the conversation with the instructions.
func (s *Selector) head() {
	if len(s.messages) == 0 {
		s.messages = append(s.messages, llm.Message{Role: llm.RoleSystem,
			Content: []llm.Part{{Type: llm.PartText, Text: Instructions}}, Timestamp: s.cfg.Now().UnixMilli()})
	}
}

// ask sends one selection request and returns the answer's text.
func (s *Selector) ask(ctx context.Context, res *Result, text string) (string, error) {
	s.head()
	s.messages = append(s.messages, llm.UserText(text, s.cfg.Now().UnixMilli()))
	res.Requests++
	var answer *llm.Message
	for ev, err := range s.cfg.Model.Stream(ctx, &llm.Request{Messages: slices.Clone(s.messages), MaxTokens: s.cfg.MaxTokens}) {
		if err != nil {
			s.messages = s.messages[:len(s.messages)-1]
			return "", fmt.Errorf("selection request: %w", err)
		}
		if ev.Type == llm.EventDone {
			answer = ev.Message
		}
	}
	if answer == nil {
		s.messages = s.messages[:len(s.messages)-1]
		return "", errors.New("selection request: the stream ended without an answer")
	}
	if answer.Usage != nil {
		res.Usage.Add(*answer.Usage)
	}
	s.messages = append(s.messages, *answer)
	return llm.ContentText(answer.Content, "\n"), nil
}
