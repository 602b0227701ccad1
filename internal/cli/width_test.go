package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// TestHelpFitsTheWidth walks every command's --help and fails on a line
// over 120 columns: help printed where stdout is not a terminal (a pipe, a
// file, a 120-column window) must not wrap.
func TestHelpFitsTheWidth(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command, path []string)
	var paths [][]string
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(newRoot(&env{}), nil)
	if len(paths) < 10 {
		t.Fatalf("only %d commands found", len(paths))
	}
	for _, path := range paths {
		code, out, errOut := run(t, append(path, "--help")...)
		if code != 0 || out == "" {
			t.Errorf("toolshelf %s --help: exit %d: %s", strings.Join(path, " "), code, errOut)
			continue
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > maxWidth {
				t.Errorf("toolshelf %s --help, line %d: %d columns, over %d:\n%s", strings.Join(path, " "), i+1, n, maxWidth, line)
			}
		}
	}
}

// TestSearchFitsTheWidth: search's hits fit the width, their descriptions
// cut to the room left: 120 columns where stdout is not a terminal, and a
// narrower terminal's width (here 100 and 80 columns).
func TestSearchFitsTheWidth(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "search", "--limit", "20", "read a file")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	longest := 0
	for _, line := range strings.Split(out, "\n") {
		longest = max(longest, utf8.RuneCountInString(line))
	}
	if longest > maxWidth || longest < 100 {
		t.Errorf("search's longest line is %d columns; want the descriptions cut at %d, not before 100:\n%s", longest, maxWidth, out)
	}
	reg, err := loadShelf(&env{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ranker, err := (&rankerFlags{ranker: search.ModeToolshelf}).newRanker(search.ModeToolshelf)
	if err != nil {
		t.Fatal(err)
	}
	found, err := toolsearch.New(reg, ranker).Find("read a file", 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{100, 80} {
		var b strings.Builder
		writeSearchText(&env{stdout: &b}, reg, found, width)
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 20 {
			t.Fatalf("%d columns: %d lines, want 20:\n%s", width, len(lines), b.String())
		}
		for _, line := range lines {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("%d columns: a line of %d: %s", width, n, line)
			}
		}
		if !strings.Contains(b.String(), "…\n") {
			t.Errorf("%d columns: no description was cut:\n%s", width, b.String())
		}
	}
}
