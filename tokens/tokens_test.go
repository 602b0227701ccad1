package tokens

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
)

func TestCount(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]int{
		"":            0,
		"hello world": 2,
		" hello":      1,
	} {
		if got := c.Count(s); got != want {
			t.Errorf("Count(%q) = %d, want %d", s, got, want)
		}
	}
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	first := c.Count(long)
	if first < 300 || first > 500 {
		t.Errorf("Count(40 sentences) = %d, want about 400", first)
	}
	if again := c.Count(long); again != first {
		t.Errorf("memoized count %d differs from %d", again, first)
	}
}

func TestCountConcurrent(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("concurrent counting of the same long text ", 20)
	want := c.Count(text)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := c.Count(text); got != want {
					t.Errorf("got %d, want %d", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestTool(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	tool := llm.Tool{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	if got, want := c.Tool(tool), c.CountBytes(tool.Canonical()); got != want || got < 10 {
		t.Errorf("Tool = %d, want %d (> 10)", got, want)
	}
}
