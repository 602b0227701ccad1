package lint_test

import (
	"testing"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/lint"
)

// TestCorpus lints the built-in catalog: real servers break most rules, and
// the report holds together.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("lints the whole corpus; go test without -short runs it")
	}
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	// K 2 rather than the default 5 keeps unreachable tools in the
	// report however the ranker is tuned: at 5, only a couple of the 1,564
	// tools miss today.
	rep, err := lint.Run(servers, &lint.Options{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Servers != len(servers) || rep.Tools < 1000 || rep.K != 2 {
		t.Errorf("report covers %d servers and %d tools with k %d", rep.Servers, rep.Tools, rep.K)
	}
	count := map[string]int{}
	for _, c := range rep.Counts {
		count[c.Rule] = c.Count
	}
	for _, rule := range []string{lint.RuleDescriptionLength, lint.RuleMissingBrief, lint.RuleParamRestatesName,
		lint.RuleExamples, lint.RuleEnumExplained, lint.RuleNesting, lint.RuleDefaultInProse, lint.RuleVerbPrefix,
		lint.RuleNearDuplicate, lint.RuleUnreachable} {
		if count[rule] == 0 {
			t.Errorf("no %s findings in the built-in catalog", rule)
		}
	}
	if len(rep.Unreachable) == 0 || len(rep.Unreachable) != count[lint.RuleUnreachable] {
		t.Errorf("%d unreachable tools, %d unreachable findings", len(rep.Unreachable), count[lint.RuleUnreachable])
	}
	for _, u := range rep.Unreachable {
		if u.BestRank != 0 && u.BestRank <= rep.K || len(u.Queries) == 0 || u.BestQuery == "" || len(u.Outranked) == 0 {
			t.Errorf("unreachable %+v", u)
		}
	}
	for _, f := range rep.Findings {
		if f.Server == "" || f.Tool == "" || f.Message == "" || f.Fix == "" || f.Severity < lint.Info || f.Severity > lint.Error {
			t.Errorf("incomplete finding %+v", f)
			break
		}
	}
	if rep.TokensAfter >= rep.TokensBefore || len(rep.Slimmed) == 0 || len(rep.Savings) == 0 {
		t.Errorf("slimming saves nothing: %d -> %d tokens, %d tools", rep.TokensBefore, rep.TokensAfter, len(rep.Slimmed))
	}
}

// BenchmarkRunCorpus lints the whole built-in catalog, retrievability
// (about 3,000 searches) included.
func BenchmarkRunCorpus(b *testing.B) {
	servers, err := builtin.Servers()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := lint.Run(servers, nil)
		if err != nil || rep.Tools == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkReachability runs only the retrievability rule over the
// built-in catalog.
func BenchmarkReachability(b *testing.B) {
	servers, err := builtin.Servers()
	if err != nil {
		b.Fatal(err)
	}
	var disable []string
	for _, r := range lint.Rules() {
		if r.ID != lint.RuleUnreachable {
			disable = append(disable, r.ID)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lint.Run(servers, &lint.Options{Disable: disable}); err != nil {
			b.Fatal(err)
		}
	}
}
