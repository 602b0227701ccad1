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

// WriteMarkdown writes the totals as a Markdown table.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "# toolshelf bench: profile %s\n\n%s; %d tasks; search loads %s.\n\n", rep.Profile, rep.Description, rep.Tasks, rep.Load)
	fmt.Fprintln(w, "| strategy | class | model | tasks | requests | input tokens | tool-definition tokens | of full | per request (multi-step) | cache read | cache write | uncached | preservation | misses | removals | loaded / needed | overhead | failed steps | selection requests | selection input |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rep.Runs {
		tasks, tool, share := rep.cells(r, " (projected)")
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %d | %s | %s | %s | %d | %d | %d | %.3f | %d | %d | %d / %d | %.1f | %d | %d | %d |\n",
			r.Strategy, r.Class, r.Model, tasks, r.Total.Requests, r.Total.Input, tool, share, perRequest(r), r.Total.CacheRead,
			r.Total.CacheWrite, r.Total.Uncached, r.Preservation(), r.Total.Misses, r.Total.Removals,
			r.Total.Loaded, r.Total.Needed, r.Overhead(), r.Total.Failed, r.Total.SelectRequests, r.Total.SelectInput)
	}
	if lengths := rep.lengthRuns(); len(lengths) > 0 {
		fmt.Fprintln(w, "\nBy task length (input: the task's own requests; selection input: select+lock's selection requests):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| strategy | class | multi-step tasks | requests | input tokens | selection input | failed steps | one-step tasks | requests | input tokens | selection input | failed steps |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range lengths {
			m, o := r.ByLength(true), r.ByLength(false)
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", r.Strategy, r.Class,
				m.Tasks, m.Requests, m.Input, m.SelectInput, m.Failed, o.Tasks, o.Requests, o.Input, o.SelectInput, o.Failed)
		}
	}
	for _, note := range []string{rep.referenceNote(), rep.selectNote(), rep.codemodeNote()} {
		if note != "" {
			fmt.Fprintf(w, "\n%s\n", note)
		}
	}
	_, err := fmt.Fprintf(w, "\n`%s`\n", rep.Summary())
	return err
}

// WriteSVG writes a bar chart of each run's input tokens, split into cache
// read, cache write and uncached.
func (rep *Report) WriteSVG(w io.Writer) error {
	const (
		left, top, barH, gap, width = 220, 50, 22, 10, 560
	)
	maxIn := 1
	for _, r := range rep.Runs {
		maxIn = max(maxIn, r.Total.Input)
	}
	height := top + len(rep.Runs)*(barH+gap) + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+width+120, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14">toolshelf bench, profile %s: input tokens per run</text>`+"\n", html.EscapeString(rep.Profile))
	legend := []struct{ name, color string }{{"cache read", "#4c9f70"}, {"cache write", "#e0a030"}, {"uncached", "#c44e52"}}
	for i, l := range legend {
		fmt.Fprintf(&b, `<rect x="%d" y="30" width="10" height="10" fill="%s"/><text x="%d" y="39">%s</text>`+"\n", left+i*110, l.color, left+i*110+14, l.name)
	}
	for i, r := range rep.Runs {
		y := top + i*(barH+gap)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s / %s</text>`+"\n", left-8, y+barH/2+4, r.Strategy, r.Class)
		x := float64(left)
		for j, v := range []int{r.Total.CacheRead, r.Total.CacheWrite, r.Total.Uncached} {
			wd := float64(width) * float64(v) / float64(maxIn)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x, y, wd, barH, legend[j].color)
			x += wd
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", x+6, y+barH/2+4, tokens.Short(r.Total.Input))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
