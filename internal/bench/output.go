package bench

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolshelf/toolshelf/tokens"
)

// WriteFiles writes report.json, report.md and report.svg into dir,
// creating it.
func (rep *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, fn func(io.Writer) error) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		return f.Close()
	}
	if err := write("report.json", rep.WriteJSON); err != nil {
		return err
	}
	if err := write("report.md", rep.WriteMarkdown); err != nil {
		return err
	}
	return write("report.svg", rep.WriteSVG)
}

// WriteJSON writes the report, per-task figures included.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// WriteMarkdown writes the totals as a Markdown table, thousands grouped
// with commas, and the notes.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "# toolshelf bench: profile %s\n\n%s; %d tasks; search loads %s.\n\n", rep.Profile, rep.Description, rep.Tasks, rep.Load)
	fmt.Fprintln(w, "| strategy | class | model | tasks | requests | input tokens | tool-definition tokens | of full | per request (multi-step) | cache read | cache write | uncached | preservation | misses | removals | loaded / needed | overhead | failed steps | selection requests | selection input |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rep.Runs {
		tasks, tool, share := rep.cells(r, " (projected)")
		selReq, selIn := selectionCells(r)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %.1f | %s | %s | %s |\n",
			r.Strategy, r.Class, r.Model, tasks, num(r.Total.Requests), num(r.Total.Input), tool, share, perRequest(r), num(r.Total.CacheRead),
			num(r.Total.CacheWrite), num(r.Total.Uncached), preservationCell(r), num(r.Total.Misses), num(r.Total.Removals),
			num(r.Total.Loaded), num(r.Total.Needed), r.Overhead(), num(r.Total.Failed), selReq, selIn)
	}
	if lengths := rep.lengthRuns(); len(lengths) > 0 {
		fmt.Fprintln(w, "\nBy task length (input: the task's own requests; selection input: select+lock's selection requests):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| strategy | class | multi-step tasks | requests | input tokens | selection input | failed steps | one-step tasks | requests | input tokens | selection input | failed steps |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range lengths {
			m, o := r.ByLength(true), r.ByLength(false)
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Strategy, r.Class,
				num(m.Tasks), num(m.Requests), num(m.Input), num(m.SelectInput), num(m.Failed),
				num(o.Tasks), num(o.Requests), num(o.Input), num(o.SelectInput), num(o.Failed))
		}
	}
	for _, note := range append(rep.notFitNotes(), rep.referenceNote(), rep.selectNote(), rep.codemodeNote()) {
		if note != "" {
			fmt.Fprintf(w, "\n%s\n", note)
		}
	}
	_, err := fmt.Fprintf(w, "\n`%s`\n", rep.Summary())
	return err
}

// WriteSVG writes a bar chart of what each run sent: its input tokens,
// split into cache read, cache write and uncached, then the input of its
// selection requests (select strategies), which cost tokens too. When the
// full strategy's bars are more than three times the longest other bar,
// they are cut at the chart's edge (marked, and labelled with their
// value) so that the others stay readable; a run none of whose tasks fit
// the context window is an outline that says so.
func (rep *Report) WriteSVG(w io.Writer) error {
	const (
		left, top, barH, gap, width, right = 220, 50, 22, 10, 560, 200
	)
	total := func(r *RunResult) int { return r.Total.Input + r.Total.SelectInput }
	maxAll, maxRest := 1, 0
	for _, r := range rep.Runs {
		maxAll = max(maxAll, total(r))
		if r.Strategy != Full {
			maxRest = max(maxRest, total(r))
		}
	}
	scale := maxAll
	if maxRest > 0 && maxAll > 3*maxRest {
		scale = maxRest
	}
	height := top + len(rep.Runs)*(barH+gap) + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+width+right, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14">toolshelf bench, profile %s: input tokens per run, selection requests included</text>`+"\n", html.EscapeString(rep.Profile))
	legend := []struct{ name, color string }{{"cache read", "#4c9f70"}, {"cache write", "#e0a030"}, {"uncached", "#c44e52"}, {"selection requests", "#8172b2"}}
	for i, l := range legend {
		fmt.Fprintf(&b, `<rect x="%d" y="30" width="10" height="10" fill="%s"/><text x="%d" y="39">%s</text>`+"\n", left+i*120, l.color, left+i*120+14, l.name)
	}
	for i, r := range rep.Runs {
		y := top + i*(barH+gap)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s / %s</text>`+"\n", left-8, y+barH/2+4, r.Strategy, r.Class)
		if r.Ran > 0 && r.NotFit == r.Ran {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999" stroke-dasharray="4 3"/>`+"\n", left, y, width, barH)
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">does not fit the context window: refused</text>`+"\n", left+8, y+barH/2+4)
			continue
		}
		x := float64(left)
		for j, v := range []int{r.Total.CacheRead, r.Total.CacheWrite, r.Total.Uncached, r.Total.SelectInput} {
			wd := float64(width) * float64(v) / float64(scale)
			wd = min(wd, float64(left+width)-x)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x, y, wd, barH, legend[j].color)
			x += wd
		}
		label := tokens.Short(total(r))
		if total(r) > scale {
			// The cut: a white gap across the bar near its end.
			fmt.Fprintf(&b, `<path d="M%d %d l6 %d M%d %d l6 %d" stroke="#fff" stroke-width="3"/>`+"\n",
				left+width-24, y+barH+2, -barH-4, left+width-16, y+barH+2, -barH-4)
			label += " (bar cut)"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", x+6, y+barH/2+4, label)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
