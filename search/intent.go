package search

import (
	"slices"
	"strings"
)

// crossProductDemotion scales the scores of tools of a product the query
// names only as context, when it names another product as the place where
// the action happens ("post the Datadog alert to Slack") or marks this one
// as the source or subject ("open a GitHub issue for this Sentry error").
const crossProductDemotion = 0.5

// destinationPreps precede the product a request acts on: "to Slack",
// "into a Jira ticket", "in our Airtable base", "as a new Notion page".
// "using Brave", "via the Slack bot" name the product that does the work.
var destinationPreps = makeSet("to into in on onto inside within as using via through")

// contextPreps precede a product that is the source or subject of a
// request rather than where it acts: "from HubSpot", "for this Sentry
// error", "after the CircleCI build fails".
var contextPreps = makeSet("for from about after of regarding since")

// skippable words may stand between such a preposition and the product.
var skippable = makeSet("the a an our my your their his her its this that these those new some")

// cjkDestinationEnds end the CJK text before a product it acts on
// (同步到 Linear, 在 Notion 里, 用 Discord); cjkDestinationStarts begin
// the CJK text right after it (Slackに, 노션에); cjkContextEnds end the
// text before a product that is the source or subject (把 Sentry, 从 Jira).
var (
	cjkDestinationEnds   = []string{"到", "在", "进", "至", "往", "入", "给", "用", "通过", "借助"}
	cjkDestinationStarts = []string{"に", "へ", "で", "에", "로", "으로"}
	cjkContextEnds       = []string{"把", "从", "自", "于", "关于"}
)

// role is what a product mention is to the request.
type role int

const (
	roleNone        role = iota
	roleDestination      // the action happens there
	roleContext          // the source or subject of the action
)

// productOf returns the product term of a server: the analysed first part
// of its short name (github for github-ref, google for google-calendar).
func (a *analyzer) productOf(server string) string {
	parts := splitIdentifier(server)
	if len(parts) == 0 {
		return ""
	}
	t, _ := a.word(parts[0])
	return t
}

// productMentions returns the distinct products a query names, in order,
// and those it names only as context: when it names two or more products,
// either all but the last one marked as destination, or, without a
// destination, those marked as source or subject (provided some other
// product is not).
func (r *BM25F) productMentions(words []qword) (named, context []string) {
	var dests, contexts []string
	for i, w := range words {
		if w.cjk {
			continue
		}
		p, ok := r.an.word(w.text)
		if !ok || r.products[p] == 0 {
			continue
		}
		if !slices.Contains(named, p) {
			named = append(named, p)
		}
		switch roleOf(words, i) {
		case roleDestination:
			dests = append(dests, p)
		case roleContext:
			contexts = append(contexts, p)
		}
	}
	switch {
	case len(named) < 2:
		return named, nil
	case len(dests) > 0:
		dest := dests[len(dests)-1]
		return named, slices.DeleteFunc(slices.Clone(named), func(p string) bool { return p == dest })
	case len(contexts) == 0 || len(contexts) == len(named):
		return named, nil
	}
	return named, contexts
}

// roleOf tells what the product word at i is to the request, from the
// preposition before it (or, in Japanese and Korean, the particle after
// it).
func roleOf(words []qword, i int) role {
	if i+1 < len(words) && words[i+1].cjk {
		for _, s := range cjkDestinationStarts {
			if strings.HasPrefix(words[i+1].text, s) {
				return roleDestination
			}
		}
	}
	for j := i - 1; j >= 0; j-- {
		w := words[j]
		switch {
		case w.cjk:
			switch {
			case hasAnySuffix(w.text, cjkDestinationEnds):
				return roleDestination
			case hasAnySuffix(w.text, cjkContextEnds):
				return roleContext
			}
			return roleNone
		case w.handle || skippable[w.text]:
			continue
		case destinationPreps[w.text]:
			return roleDestination
		case contextPreps[w.text]:
			return roleContext
		}
		return roleNone
	}
	return roleNone
}

func hasAnySuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}
