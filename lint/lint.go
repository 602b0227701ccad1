package lint

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
)

// Severity ranks findings. The zero value is not a severity.
type Severity int

// Severities, least to most severe.
const (
	// Info marks a token saving or a style point.
	Info Severity = iota + 1
	// Warning marks something that costs selection quality or many tokens.
	Warning
	// Error marks something that breaks how a tool is named or found.
	Error
)

var severityNames = [...]string{Info: "info", Warning: "warning", Error: "error"}

// String returns info, warning or error.
func (s Severity) String() string {
	if s < Info || s > Error {
		return fmt.Sprintf("Severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) {
	if s < Info || s > Error {
		return nil, fmt.Errorf("invalid severity %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity returns the severity named info, warning or error.
func ParseSeverity(name string) (Severity, error) {
	for s := Info; s <= Error; s++ {
		if name == severityNames[s] {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q: use info, warning or error", name)
}

// Rule ids.
const (
	RuleDescriptionLength = "description-length"
	RuleMissingBrief      = "missing-brief"
	RuleNoEnglish         = "no-english"
	RuleParamRestatesName = "param-restates-name"
	RuleExamples          = "examples"
	RuleEnumExplained     = "enum-explained"
	RuleNesting           = "nesting"
	RuleDefaultInProse    = "default-in-prose"
	RuleVerbPrefix        = "verb-prefix"
	RuleNearDuplicate     = "near-duplicate"
	RuleNameCollision     = "name-collision"
	RuleNameLength        = "name-length"
	RuleUnreachable       = "unreachable"
	RuleInvalidSchema     = "invalid-schema"
	RuleTooLarge          = "too-large"
	RuleSchemaRepaired    = "schema-repaired"
)

// Rule describes one check.
type Rule struct {
	// ID is the rule's stable name, used in findings and in
	// [Options.Disable].
	ID string `json:"id"`
	// Severity is the severity of the rule's findings. A rule may report
	// a worse or a milder case at another severity (default-in-prose
	// warns of a default the prose and the schema disagree on, and
	// missing-brief errs on an empty description); each finding carries
	// its own.
	Severity Severity `json:"severity"`
	// Summary says in one line what the rule checks.
	Summary string `json:"summary"`
}

// rules is the rule table, in report order: what providers refuse,
// descriptions, parameters, names, retrievability.
var rules = []Rule{
	{RuleInvalidSchema, Error, "the parameter schema is one providers accept: JSON Schema 2020-12, ECMA-262 patterns, local $refs that resolve and do not loop, an object root"},
	{RuleTooLarge, Error, "the definition fits toolshelf's caps on description and schema size, properties and nesting"},
	{RuleSchemaRepaired, Warning, "the parameter schema is written as JSON Schema 2020-12, the draft providers read, with nothing toolshelf must translate (draft-04's boolean exclusiveMinimum, definitions, array items…)"},
	{RuleDescriptionLength, Warning, "a description is at most three sentences and fits the token budget"},
	{RuleMissingBrief, Warning, "the first sentence starts with a verb that says what the tool does"},
	{RuleNoEnglish, Warning, "a description has English words for English queries to match"},
	{RuleParamRestatesName, Info, "a parameter description says more than the parameter's name"},
	{RuleExamples, Info, "schemas carry no examples"},
	{RuleEnumExplained, Info, "self-explanatory enum values are not explained or listed again in prose"},
	{RuleNesting, Info, "an object parameter whose properties could be top-level parameters is flattened"},
	{RuleDefaultInProse, Info, "a default lives in the schema's default keyword, not in the description"},
	{RuleVerbPrefix, Warning, "the tools of a server use one verb per action (get_, not get_ and fetch_)"},
	{RuleNearDuplicate, Warning, "the first sentences of a server's tools tell the tools apart"},
	{RuleNameCollision, Error, "model-facing names (mcp__server__tool) do not collide after sanitising"},
	{RuleNameLength, Warning, "model-facing names fit in 64 characters without being cut and hashed"},
	{RuleUnreachable, Warning, "each tool ranks in the top k for a query made from its name or description"},
}

// Rules returns the rules in report order.
func Rules() []Rule { return slices.Clone(rules) }

// Finding is one problem with one tool (or one server, when Tool is
// empty).
type Finding struct {
	// Rule is the id of the rule that found the problem.
	Rule string `json:"rule"`
	// Severity is how much the problem matters.
	Severity Severity `json:"severity"`
	// Server is the server's name.
	Server string `json:"server"`
	// Tool is the tool's name on its server.
	Tool string `json:"tool,omitempty"`
	// Path locates a parameter in the schema, as property names joined by
	// dots (options.filters.state); empty for the tool as a whole.
	Path string `json:"path,omitempty"`
	// Message names the problem.
	Message string `json:"message"`
	// Fix says what to change.
	Fix string `json:"fix"`
}

// RuleCount is the number of findings of one rule.
type RuleCount struct {
	// Rule is the rule's id.
	Rule string `json:"rule"`
	// Count is the number of findings.
	Count int `json:"count"`
}

// ServerSavings are the tokens [Slim] saves for one server's tools.
type ServerSavings struct {
	// Server is the server's name.
	Server string `json:"server"`
	// Tools is the number of tools whose schema Slim changes.
	Tools int `json:"tools"`
	// Before and After are the tokens of all of the server's tool
	// declarations before and after slimming.
	Before int `json:"before"`
	After  int `json:"after"`
}

// Report is the result of linting a pool of tools.
type Report struct {
	// Servers and Tools count what was linted.
	Servers int `json:"servers"`
	Tools   int `json:"tools"`
	// K is the rank a tool must reach to be reachable.
	K int `json:"k"`
	// Findings are sorted by server, tool, rule (in [Rules] order),
	// parameter path and message.
	Findings []Finding `json:"findings"`
	// Counts has the number of findings of every rule that ran, in
	// [Rules] order.
	Counts []RuleCount `json:"counts"`
	// Unreachable are the tools that rank below K for every query made
	// from them, sorted by server and tool; nil when the rule is
	// disabled.
	Unreachable []Unreachable `json:"unreachable"`
	// Slimmed are the tools whose schema [Slim] changes, sorted by server
	// and tool.
	Slimmed []Slimmed `json:"slimmed"`
	// Savings are the slimming savings per server with a changed tool,
	// sorted by server.
	Savings []ServerSavings `json:"savings"`
	// TokensBefore and TokensAfter are the tokens of every tool
	// declaration before and after slimming.
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
}

// Worst returns the severity of the most severe finding, 0 when there are
// none.
func (r *Report) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		w = max(w, f.Severity)
	}
	return w
}

// Options configures [Run]. The zero value uses every default.
type Options struct {
	// MaxSentences is the most sentences a description may have; 0 means
	// [DefaultMaxSentences].
	MaxSentences int
	// MaxDescriptionTokens is the most o200k tokens a description may
	// have; 0 means [DefaultMaxDescriptionTokens].
	MaxDescriptionTokens int
	// K is the rank a tool must reach for at least one of its queries; 0
	// means [DefaultK].
	K int
	// NearDuplicate is the Jaccard similarity of the terms of two tools'
	// first sentences at or above which they are near duplicates, above 0
	// and at most 1; 0 means [DefaultNearDuplicate].
	NearDuplicate float64
	// Disable lists rule ids not to run.
	Disable []string
	// Counter counts tokens; nil means [tokens.Default].
	Counter *tokens.Counter
}

// Defaults of [Options].
const (
	// DefaultMaxSentences is three: what the tool does, when to use it,
	// and its limits.
	DefaultMaxSentences = 3
	// DefaultMaxDescriptionTokens is 100 o200k tokens: three sentences of
	// about 25 words, with room for a product name or two. A description
	// is sent with every request that declares the tool; in the built-in
	// catalog the median is 18 tokens and the 90th percentile 114, so the
	// budget flags the long tail, not ordinary descriptions.
	DefaultMaxDescriptionTokens = 100
	// DefaultK is 5: a search loads the few best hits, and a tool that
	// does not make the first five for words of its own name or
	// description will rarely be loaded.
	DefaultK = 5
	// DefaultNearDuplicate is 0.8. In the built-in catalog it flags 66
	// pairs, such as list_incidents ("Get incidents from Datadog") and
	// get_incident ("Get an incident from Datadog"); 0.6 flags 505, most
	// of them pairs that differ in the one word that matters (put and
	// delete an object).
	DefaultNearDuplicate = 0.8
)

// entry is one tool being linted, with what several rules need.
type entry struct {
	server *catalog.Server
	e      *catalog.ListedTool
	tool   tool.Tool // as the shelf would hold it (model-facing name, namespace)
}

// linter holds a run's configuration and its findings.
type linter struct {
	opts     Options
	disabled map[string]bool
	counter  *tokens.Counter
	findings []Finding
}

func (l *linter) on(rule string) bool { return !l.disabled[rule] }

// add records a finding of rule at the rule's severity.
func (l *linter) add(rule string, en *entry, path, msg, fix string) {
	l.addSev(rule, ruleSeverity(rule), en, path, msg, fix)
}

func (l *linter) addSev(rule string, sev Severity, en *entry, path, msg, fix string) {
	f := Finding{Rule: rule, Severity: sev, Server: en.server.Name, Path: path, Message: msg, Fix: fix}
	if en.e != nil {
		f.Tool = en.e.Name
	}
	l.findings = append(l.findings, f)
}

func ruleSeverity(id string) Severity {
	for _, r := range rules {
		if r.ID == id {
			return r.Severity
		}
	}
	panic("lint: unknown rule " + id)
}

func ruleIndex(id string) int {
	return slices.IndexFunc(rules, func(r Rule) bool { return r.ID == id })
}

// Run lints the tools of servers as one pool: every rule on every tool,
// retrievability against the whole pool, and [Slim] on every schema. opts
// may be nil. Tools are named as a shelf loading these servers together
// would name them, so server names should be distinct: the tools of a
// second server of the same name collide with the first's. Run returns an
// error only for invalid options.
func Run(servers []*catalog.Server, opts *Options) (*Report, error) {
	l := &linter{disabled: map[string]bool{}}
	if opts != nil {
		l.opts = *opts
	}
	o := &l.opts
	if o.MaxSentences == 0 {
		o.MaxSentences = DefaultMaxSentences
	}
	if o.MaxDescriptionTokens == 0 {
		o.MaxDescriptionTokens = DefaultMaxDescriptionTokens
	}
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.NearDuplicate == 0 {
		o.NearDuplicate = DefaultNearDuplicate
	}
	switch {
	case o.MaxSentences < 0:
		return nil, fmt.Errorf("max sentences %d: want a positive number", o.MaxSentences)
	case o.MaxDescriptionTokens < 0:
		return nil, fmt.Errorf("max description tokens %d: want a positive number", o.MaxDescriptionTokens)
	case o.K < 0:
		return nil, fmt.Errorf("k %d: want a positive rank", o.K)
	case o.NearDuplicate < 0 || o.NearDuplicate > 1 || math.IsNaN(o.NearDuplicate):
		return nil, fmt.Errorf("near-duplicate threshold %v: want a number above 0 and at most 1", o.NearDuplicate)
	}
	for _, id := range o.Disable {
		if ruleIndex(id) < 0 {
			return nil, fmt.Errorf("unknown rule %q: the rules are %s", id, strings.Join(ruleIDs(), ", "))
		}
		l.disabled[id] = true
	}
	l.counter = o.Counter
	if l.counter == nil {
		c, err := tokens.Default()
		if err != nil {
			return nil, err
		}
		l.counter = c
	}

	pool := buildPool(servers)
	rep := &Report{Servers: len(servers), Tools: len(pool), K: o.K}
	rep.Tools += l.refused(servers)
	for _, en := range pool {
		l.repairs(en)
		l.description(en)
		l.schema(en)
	}
	l.names(pool)
	l.verbPrefixes(pool)
	l.nearDuplicates(pool)
	if l.on(RuleUnreachable) {
		un, err := l.reachability(pool)
		if err != nil {
			return nil, err
		}
		rep.Unreachable = un
		if un == nil {
			rep.Unreachable = []Unreachable{}
		}
	}
	l.slim(pool, rep)

	sortFindings(l.findings)
	rep.Findings = l.findings
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	count := map[string]int{}
	for _, f := range rep.Findings {
		count[f.Rule]++
	}
	for _, r := range rules {
		if l.on(r.ID) {
			rep.Counts = append(rep.Counts, RuleCount{Rule: r.ID, Count: count[r.ID]})
		}
	}
	return rep, nil
}

// refused reports the tools catalog.Parse refused (they are not in the
// pool: no provider would take them, so no other rule applies) and
// returns their number.
func (l *linter) refused(servers []*catalog.Server) int {
	n := 0
	for _, s := range servers {
		for i := range s.Refused {
			r := &s.Refused[i]
			n++
			en := &entry{server: s, e: &r.ListedTool}
			switch {
			case errors.Is(r.Err, tool.ErrTooLarge):
				if l.on(RuleTooLarge) {
					l.add(RuleTooLarge, en, "", r.Err.Error(),
						"bring the definition under the cap the message names (docs/authoring-tools.md lists the caps): toolshelf does not load a tool past one, since every request that declares it would fill the model's context")
				}
			case l.on(RuleInvalidSchema):
				l.add(RuleInvalidSchema, en, "", r.Err.Error(),
					"fix the schema as the message says: providers reject a request that declares it, so toolshelf does not load the tool")
			}
		}
	}
	return n
}

// repairs reports each change the translation into JSON Schema 2020-12
// makes to a tool's schema ([tool.RenderSchema]).
func (l *linter) repairs(en *entry) {
	if !l.on(RuleSchemaRepaired) {
		return
	}
	r, err := tool.RenderSchema(en.tool.Parameters)
	if err != nil {
		return // catalog.Parse refused it: a refused tool is not in the pool
	}
	for _, rp := range r.Repairs {
		fix := "write it as JSON Schema 2020-12 does: toolshelf sends providers the repaired form, but other clients send the schema as it is, and providers read it as 2020-12"
		switch rp.Keyword {
		case "$ref":
			fix = "declare the schema as 2020-12, where the keywords beside $ref apply, or remove them if they were not meant to: other clients and validators that follow the draft ignore them, providers do not"
		case "$schema":
			fix = `declare "$schema": "https://json-schema.org/draft/2020-12/schema", or one of the drafts 04, 06, 07 or 2019-09 the schema is written for`
		}
		l.add(RuleSchemaRepaired, en, pointerPath(rp.Path), fmt.Sprintf("%s (the schema is read as %s)", rp, r.Draft), fix)
	}
}

func ruleIDs() []string {
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = r.ID
	}
	return ids
}

// buildPool names every tool as the shelf would, with one Namer for the
// pool, so the model-facing names are the ones a runtime loading these
// catalogs together would use.
func buildPool(servers []*catalog.Server) []*entry {
	namer := tool.NewNamer()
	var pool []*entry
	for _, s := range servers {
		tools := s.AsTools(namer, tool.Deferred)
		for i := range s.Tools {
			pool = append(pool, &entry{server: s, e: &s.Tools[i], tool: tools[i]})
		}
	}
	return pool
}

func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			strings.Compare(a.Server, b.Server),
			strings.Compare(a.Tool, b.Tool),
			cmp.Compare(ruleIndex(a.Rule), ruleIndex(b.Rule)),
			strings.Compare(a.Path, b.Path),
			strings.Compare(a.Message, b.Message),
		)
	})
}

// slim runs [Slim] on every tool and adds up the savings.
func (l *linter) slim(pool []*entry, rep *Report) {
	per := map[string]*ServerSavings{}
	for _, en := range pool {
		s, err := slimTool(en.tool, l.counter)
		if err != nil {
			continue // a schema that is not JSON: the catalog would have refused it
		}
		rep.TokensBefore += s.Before
		rep.TokensAfter += s.After
		sv := per[en.server.Name]
		if sv == nil {
			sv = &ServerSavings{Server: en.server.Name}
			per[en.server.Name] = sv
		}
		sv.Before += s.Before
		sv.After += s.After
		if len(s.Changes) > 0 {
			sv.Tools++
			rep.Slimmed = append(rep.Slimmed, *s)
		}
	}
	for _, sv := range per {
		if sv.Tools > 0 {
			rep.Savings = append(rep.Savings, *sv)
		}
	}
	slices.SortFunc(rep.Savings, func(a, b ServerSavings) int { return strings.Compare(a.Server, b.Server) })
	slices.SortStableFunc(rep.Slimmed, func(a, b Slimmed) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Tool, b.Tool))
	})
	if rep.Slimmed == nil {
		rep.Slimmed = []Slimmed{}
	}
}

// listNames joins names with commas, at most limit of them, then "and N
// more".
func listNames(names []string, limit int) string {
	var b strings.Builder
	for i, n := range names {
		if i == limit {
			fmt.Fprintf(&b, " and %d more", len(names)-limit)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}
