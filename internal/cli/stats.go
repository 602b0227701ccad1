package cli

import (
	"cmp"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/tokens"
)

func newStatsCmd(e *env) *cobra.Command {
	var (
		fields   bool
		asJSON   bool
		svg      string
		catalogs []string
		top      int
	)
	cmd := &cobra.Command{
		Use:   "stats [flags] [FILE]",
		Short: "Show token trends and tool use from a metrics log, or where tool tokens go",
		Long: `stats reads a metrics log — the JSON Lines file run and chat append a record to after
every model request (--metrics; by default $XDG_STATE_HOME/toolshelf/metrics.jsonl, which
stats reads when no FILE is given) — and shows:

  - per day (UTC): requests; input tokens, which count every prompt token (cache reads,
    cache writes and the uncached rest); the part of the input that declared tools and its
    share; output tokens; tools declared per request;
  - per tool: how many requests declared it, how often the model called it, and the tokens
    spent declaring it (from the records, or estimated from --catalog for records without
    per-tool counts);
  - the tools declared but never called.

Lines that are not records are reported on stderr with their numbers; the rest is shown.
Tool-definition tokens are o200k counts of the declarations' JSON (estimates for Claude);
the other figures are the provider's.

With --fields, stats shows instead where the tokens of tool declarations go, per field
(name, description, parameter descriptions, enums, defaults, examples, the rest of the
schema), over the built-in catalog or the --catalog files.`,
		Example: `  toolshelf stats
  toolshelf stats --json ~/.local/state/toolshelf/metrics.jsonl
  toolshelf stats --svg tokens.svg metrics.jsonl
  toolshelf stats --fields
  toolshelf stats --fields --catalog ./my-servers`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("stats reads one metrics log, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if fields {
				if len(args) > 0 || svg != "" {
					return usagef("--fields describes catalogs, not a metrics log: drop the FILE and --svg")
				}
				return writeFieldStats(e, catalogs, asJSON)
			}
			path := ""
			if len(args) == 1 {
				path = args[0]
			} else {
				var err error
				if path, err = defaultMetricsPath(); err != nil {
					return err
				}
			}
			records, err := readMetrics(e, path)
			if err != nil {
				return err
			}
			var est map[string]int
			if len(catalogs) > 0 {
				if est, err = catalogTokens(e, catalogs); err != nil {
					return err
				}
			}
			st := summarize(records, est)
			if svg != "" {
				if err := writeStatsSVGFile(svg, st); err != nil {
					return err
				}
				printf(e.stderr, "wrote %s: input tokens per day, tool definitions marked (%s)\n", svg, plural(len(st.Days), "day"))
			}
			if asJSON {
				return writeJSON(e.stdout, st)
			}
			writeStatsText(e.stdout, st, top)
			return nil
		},
	}
	cmd.Flags().BoolVar(&fields, "fields", false, "show the tokens of tool declarations per field instead of reading a log")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&svg, "svg", "", "also write a bar chart of daily input tokens (cache reads and writes included), the tool-definition part marked, to this SVG file")
	cmd.Flags().StringArrayVar(&catalogs, "catalog", nil, "catalog file or folder (repeatable): with --fields, what to measure (default: the built-in catalog); otherwise, per-tool token estimates for records without them")
	cmd.Flags().IntVar(&top, "top", 20, "tools listed per table in text output (0: all)")
	return cmd
}

// readMetrics reads a metrics log, reporting bad lines on stderr.
func readMetrics(e *env, path string) ([]tokens.Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no metrics log %s: run or chat writes one (see --metrics), or name the file to read", path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the metrics log: %w", err)
	}
	defer f.Close()
	records, bad, err := tokens.ReadLog(f)
	const shown = 20
	for i, b := range bad {
		if i == shown {
			fmt.Fprintf(e.stderr, "toolshelf: warning: %s: %d more lines that are not records\n", path, len(bad)-shown)
			break
		}
		printf(e.stderr, "toolshelf: warning: %s: %v (line skipped)\n", path, b)
	}
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		if len(bad) > 0 {
			return nil, fmt.Errorf("the metrics log %s holds no valid records, only %d lines that are not records (above)", path, len(bad))
		}
		return nil, fmt.Errorf("the metrics log %s is empty: run or chat appends a record per model request", path)
	}
	return records, nil
}

// catalogTokens returns the tokens of every tool of the catalogs, by name.
func catalogTokens(e *env, paths []string) (map[string]int, error) {
	reg, err := loadShelf(e, paths)
	if err != nil {
		return nil, err
	}
	c, err := tokens.Default()
	if err != nil {
		return nil, err
	}
	m := map[string]int{}
	for _, t := range reg.Tools() {
		m[t.Name] = c.Tool(t.Declaration())
	}
	return m, nil
}

// stats is what `stats` reports about a metrics log.
type stats struct {
	Records   int         `json:"records"`
	Days      []dayStats  `json:"days"`
	Total     dayStats    `json:"total"`
	Tools     []toolStats `json:"tools"`
	NeverUsed []string    `json:"neverUsed"`
}

// dayStats sums the records of one day (UTC), or of the whole log.
type dayStats struct {
	Day      string `json:"day,omitempty"`
	Requests int    `json:"requests"`
	// Input is every prompt token: CacheRead, CacheWrite and Uncached,
	// the rest (what a record calls its input).
	Input      int `json:"input"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Uncached   int `json:"uncached"`
	Output     int `json:"output"`
	// ToolTokens is the part of Input that declared tools, ToolShare
	// that part's share of Input.
	ToolTokens int     `json:"toolTokens"`
	ToolShare  float64 `json:"toolShare"`
	// AvgTools is the tools declared per request.
	AvgTools float64 `json:"avgTools"`
	tools    int
}

func (d *dayStats) add(r tokens.Record) {
	d.Requests++
	d.Input += r.TotalInput()
	d.Uncached += r.Input
	d.Output += r.Output
	d.CacheRead += r.CacheRead
	d.CacheWrite += r.CacheWrite
	d.ToolTokens += r.ToolTokens
	d.tools += r.Tools
}

func (d *dayStats) finish() {
	if d.Input > 0 {
		d.ToolShare = float64(d.ToolTokens) / float64(d.Input)
	}
	if d.Requests > 0 {
		d.AvgTools = float64(d.tools) / float64(d.Requests)
	}
}

// toolStats is one tool's declarations and calls.
type toolStats struct {
	Name     string `json:"name"`
	Declared int    `json:"declared"`
	Calls    int    `json:"calls"`
	// Tokens is the tokens spent declaring the tool over the requests
	// whose count is known; Untracked counts the declarations whose count
	// is not (records without per-tool counts, tools missing from
	// --catalog).
	Tokens    int `json:"tokens"`
	Untracked int `json:"untracked,omitempty"`
}

// summarize aggregates records; est gives per-tool tokens for records
// without their own.
func summarize(records []tokens.Record, est map[string]int) stats {
	st := stats{Records: len(records), NeverUsed: []string{}}
	days := map[string]*dayStats{}
	tools := map[string]*toolStats{}
	get := func(name string) *toolStats {
		t := tools[name]
		if t == nil {
			t = &toolStats{Name: name}
			tools[name] = t
		}
		return t
	}
	for _, r := range records {
		day := r.Time.UTC().Format("2006-01-02")
		d := days[day]
		if d == nil {
			d = &dayStats{Day: day}
			days[day] = d
		}
		d.add(r)
		st.Total.add(r)
		for i, name := range r.Declared {
			t := get(name)
			t.Declared++
			if len(r.DeclaredTokens) == len(r.Declared) {
				t.Tokens += r.DeclaredTokens[i]
			} else if n, ok := est[name]; ok {
				t.Tokens += n
			} else {
				t.Untracked++
			}
		}
		for _, name := range r.Called {
			get(name).Calls++
		}
		// A codemode script's calls are calls of their tools too.
		for _, name := range r.Inner {
			get(name).Calls++
		}
	}
	for _, d := range days {
		d.finish()
		st.Days = append(st.Days, *d)
	}
	slices.SortFunc(st.Days, func(a, b dayStats) int { return strings.Compare(a.Day, b.Day) })
	st.Total.finish()
	for _, t := range tools {
		st.Tools = append(st.Tools, *t)
	}
	slices.SortFunc(st.Tools, func(a, b toolStats) int {
		return cmp.Or(cmp.Compare(b.Tokens, a.Tokens), cmp.Compare(b.Declared, a.Declared),
			cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Name, b.Name))
	})
	for _, t := range st.Tools {
		if t.Declared > 0 && t.Calls == 0 {
			st.NeverUsed = append(st.NeverUsed, t.Name)
		}
	}
	return st
}

// writeStatsText writes the three tables; top bounds the tool lists.
func writeStatsText(w io.Writer, st stats, top int) {
	fmt.Fprintf(w, "%s, %s to %s (UTC)\n\n", plural(st.Records, "request"), st.Days[0].Day, st.Days[len(st.Days)-1].Day)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "DAY\tREQUESTS\tINPUT\tCACHE READ\tCACHE WRITE\tUNCACHED\tTOOL TOKENS\tTOOL SHARE\tOUTPUT\tAVG TOOLS\t")
	row := func(d dayStats, label string) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%s\t%.1f\t\n", label, num(d.Requests), num(d.Input),
			num(d.CacheRead), num(d.CacheWrite), num(d.Uncached), num(d.ToolTokens), 100*d.ToolShare, num(d.Output), d.AvgTools)
	}
	for _, d := range st.Days {
		row(d, d.Day)
	}
	if len(st.Days) > 1 {
		row(st.Total, "total")
	}
	tw.Flush()
	fmt.Fprint(w, "INPUT is every prompt token: cache reads, cache writes and the uncached rest; TOOL TOKENS is the part\n"+
		"of it that declared tools, TOOL SHARE that part's share of INPUT.\n")

	if len(st.Tools) == 0 {
		fmt.Fprintln(w, "\nNo tools were declared or called.")
		return
	}
	fmt.Fprintf(w, "\nTools (%d declared or called)\n", len(st.Tools))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tDECLARED\tCALLS\tTOKENS")
	shown := st.Tools
	if top > 0 && len(shown) > top {
		shown = shown[:top]
	}
	for _, t := range shown {
		printf(tw, "%s\t%s\t%s\t%s\n", oneLine(t.Name, 0), num(t.Declared), num(t.Calls), toolTokensText(t))
	}
	tw.Flush()
	if n := len(st.Tools) - len(shown); n > 0 {
		fmt.Fprintf(w, "… and %d more (--top 0 lists all)\n", n)
	}

	if len(st.NeverUsed) == 0 {
		fmt.Fprintln(w, "\nEvery declared tool was called.")
		return
	}
	byName := map[string]toolStats{}
	spent := 0
	for _, t := range st.Tools {
		byName[t.Name] = t
	}
	for _, name := range st.NeverUsed {
		spent += byName[name].Tokens
	}
	fmt.Fprintf(w, "\nNever called (%s of %s declared tools, %s tokens of declarations)\n", num(len(st.NeverUsed)), num(countDeclared(st.Tools)), num(spent))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	names := st.NeverUsed
	if top > 0 && len(names) > top {
		names = names[:top]
	}
	for _, name := range names {
		t := byName[name]
		printf(tw, "%s\tdeclared %s\t%s tokens\n", oneLine(name, 0), plural(t.Declared, "time"), toolTokensText(t))
	}
	tw.Flush()
	if n := len(st.NeverUsed) - len(names); n > 0 {
		fmt.Fprintf(w, "… and %d more (--top 0 lists all)\n", n)
	}
}

// plural writes "1 request", "2 requests".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func countDeclared(ts []toolStats) int {
	n := 0
	for _, t := range ts {
		if t.Declared > 0 {
			n++
		}
	}
	return n
}

// toolTokensText shows a tool's tokens: "-" when none are known, a "+?"
// when some declarations are not counted.
func toolTokensText(t toolStats) string {
	switch {
	case t.Untracked == 0:
		return num(t.Tokens)
	case t.Untracked == t.Declared:
		return "-"
	}
	return num(t.Tokens) + "+?"
}

func writeStatsSVGFile(path string, st stats) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	if err := writeStatsSVG(f, st); err != nil {
		f.Close()
		return fmt.Errorf("--svg: %w", err)
	}
	return f.Close()
}

// writeStatsSVG draws one bar per day: all input tokens, with the part
// that was tool definitions in its own colour.
func writeStatsSVG(w io.Writer, st stats) error {
	const (
		left, top, plotH, plotW, bottom = 70, 60, 240, 720, 70
		toolColor, restColor            = "#c44e52", "#8da0cb"
	)
	n := len(st.Days)
	slot := float64(plotW) / float64(max(n, 1))
	barW := min(48, slot*0.8)
	maxIn := 1
	for _, d := range st.Days {
		maxIn = max(maxIn, d.Input)
	}
	// Label every k-th day so that labels do not overlap.
	every := max(1, int(60/slot)+1)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+plotW+20, top+plotH+bottom)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14">toolshelf: input tokens per day (cache reads and writes included), %d requests (tool definitions: %.1f%%)</text>`+"\n", st.Records, 100*st.Total.ToolShare)
	for i, l := range []struct{ name, color string }{{"tool definitions", toolColor}, {"rest of the input", restColor}} {
		fmt.Fprintf(&b, `<rect x="%d" y="32" width="10" height="10" fill="%s"/><text x="%d" y="41">%s</text>`+"\n", left+i*150, l.color, left+i*150+14, l.name)
	}
	base := top + plotH
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", left, base, left+plotW, base)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, top+4, tokens.Short(maxIn))
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">0</text>`+"\n", left-6, base+4)
	for i, d := range st.Days {
		x := float64(left) + float64(i)*slot + (slot-barW)/2
		in := d.Input
		h := float64(plotH) * float64(in) / float64(maxIn)
		th := float64(plotH) * float64(min(d.ToolTokens, in)) / float64(maxIn)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %d input tokens, %d requests</title></rect>`+"\n",
			x, float64(base)-h, barW, h-th, restColor, d.Day, in, d.Requests)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %d tool-definition tokens (%.1f%%)</title></rect>`+"\n",
			x, float64(base)-th, barW, th, toolColor, d.Day, d.ToolTokens, 100*d.ToolShare)
		if i%every == 0 {
			cx := x + barW/2
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="end" transform="rotate(-45 %.1f %d)">%s</text>`+"\n", cx, base+14, cx, base+14, html.EscapeString(d.Day))
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// fieldRow is one field of `stats --fields`.
type fieldRow struct {
	Field  string  `json:"field"`
	Tokens int     `json:"tokens"`
	Share  float64 `json:"share"`
}

// writeFieldStats prints where the tokens of the catalogs' declarations
// go, per field.
func writeFieldStats(e *env, catalogs []string, asJSON bool) error {
	reg, err := loadShelf(e, catalogs)
	if err != nil {
		return err
	}
	c, err := tokens.Default()
	if err != nil {
		return err
	}
	var sum tokens.Breakdown
	for _, t := range reg.Tools() {
		sum.Add(c.Breakdown(t.Declaration()))
	}
	rows := make([]fieldRow, 0, len(tokens.Fields()))
	for _, f := range tokens.Fields() {
		rows = append(rows, fieldRow{Field: f.String(), Tokens: sum.Get(f), Share: sum.Share(f)})
	}
	source := "the built-in catalog"
	if len(catalogs) > 0 {
		source = strings.Join(catalogs, ", ")
	}
	if asJSON {
		return writeJSON(e.stdout, struct {
			Source    string           `json:"source"`
			Tools     int              `json:"tools"`
			Total     int              `json:"total"`
			Fields    []fieldRow       `json:"fields"`
			Breakdown tokens.Breakdown `json:"breakdown"`
		}{source, reg.Len(), sum.Total(), rows, sum})
	}
	fmt.Fprintf(e.stdout, "%s tools of %s: %s tokens of declarations (o200k), %.0f per tool\n\n",
		num(reg.Len()), source, num(sum.Total()), float64(sum.Total())/float64(reg.Len()))
	labels := map[tokens.Field]string{
		tokens.FieldName: "tool name", tokens.FieldDescription: "tool description",
		tokens.FieldParamDescriptions: "parameter descriptions", tokens.FieldEnums: "enum and const values",
		tokens.FieldDefaults: "default values", tokens.FieldExamples: "examples",
		tokens.FieldSchema: "schema structure (rest)",
	}
	fmt.Fprintf(e.stdout, "%-24s %9s %7s\n", "FIELD", "TOKENS", "SHARE")
	for i, f := range tokens.Fields() {
		fmt.Fprintf(e.stdout, "%-24s %9s %6.1f%%\n", labels[f], num(rows[i].Tokens), 100*rows[i].Share)
	}
	fmt.Fprintf(e.stdout, "%-24s %9s %6.1f%%\n", "total", num(sum.Total()), 100.0)
	return nil
}
