package codemode

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolshelf/toolshelf/internal/cut"
)

// optionsPrefix starts a script's optional first line, as the
// reference's scripts write it:
//
//	// @options: {"max_output_tokens": 2000, "timeout_ms": 5000}
const optionsPrefix = "// @options:"

// MaxOutputTokens is the most a script's @options may raise its output
// to (max_output_tokens).
const MaxOutputTokens = 100_000

// options reads the script's @options line, if it has one, into the
// script's limits: max_output_tokens sets Limits.OutputTokens (up to
// MaxOutputTokens), timeout_ms lowers Limits.Timeout (a script cannot
// raise it past the runtime's). The line stays in the code (it is a
// comment). warn says what was not taken as asked.
func (s *script) options(code string) (string, string, error) {
	first, _, _ := strings.Cut(strings.TrimLeft(code, " \t\r\n"), "\n")
	first = strings.TrimSpace(first)
	if !strings.HasPrefix(first, optionsPrefix) {
		return code, "", nil
	}
	var o struct {
		MaxOutputTokens *float64 `json:"max_output_tokens"`
		TimeoutMS       *float64 `json:"timeout_ms"`
	}
	body := strings.TrimSpace(strings.TrimPrefix(first, optionsPrefix))
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return "", "", fmt.Errorf(`the script's first line %q is not valid options: %v; write it as // @options: {"max_output_tokens": 2000, "timeout_ms": 5000}`,
			clipName(first), err)
	}
	var warn []string
	if n := o.MaxOutputTokens; n != nil {
		if *n <= 0 || *n != float64(int64(*n)) {
			return "", "", fmt.Errorf("@options max_output_tokens is %v: use a positive whole number of tokens", *n)
		}
		s.limits.OutputTokens = int(min(*n, MaxOutputTokens))
		if *n > MaxOutputTokens {
			warn = append(warn, fmt.Sprintf("max_output_tokens %v is over the most a script may ask for; it runs with %d", *n, MaxOutputTokens))
		}
	}
	if ms := o.TimeoutMS; ms != nil {
		if *ms <= 0 || *ms != float64(int64(*ms)) {
			return "", "", fmt.Errorf("@options timeout_ms is %v: use a positive whole number of milliseconds", *ms)
		}
		d := time.Duration(min(*ms, float64(s.limits.Timeout/time.Millisecond)+1)) * time.Millisecond
		if d > s.limits.Timeout {
			warn = append(warn, fmt.Sprintf("timeout_ms %v is over this runtime's time limit; it runs with %v", *ms, s.limits.Timeout))
		} else {
			s.limits.Timeout = d
		}
	}
	s.res.outputTokens = s.limits.OutputTokens
	return code, strings.Join(warn, "; "), nil
}

// clip cuts text to at most n tokens of the Runner's count, marking the
// cut; the head is kept.
func (r *Runner) clip(text string, n int) string {
	if n <= 0 || len(text) <= n || r.count(text) <= n {
		return text
	}
	// Bytes per token is about four: start there and shrink until the
	// head fits.
	end := min(len(text), 4*n)
	for end > 0 && r.count(text[:cut.Before(text, end)]) > n {
		end = end * 9 / 10
	}
	end = cut.Before(text, end)
	return text[:end] + fmt.Sprintf("\n… (the output was cut at %d tokens of about %d; return less, or raise it with a first line // @options: {\"max_output_tokens\": N})",
		n, r.count(text))
}
