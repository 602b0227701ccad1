package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/tool"
)

func TestRedactorReplacesEveryForm(t *testing.T) {
	t.Parallel()
	r := newRedactor(map[string]string{
		"TOKEN":  "tok en/+\"x",
		"PREFIX": "tok en", // contained in TOKEN: TOKEN's value is replaced whole
		"SHORT":  "abc",    // under MinRedacted: left alone
	})
	for _, tc := range []struct{ in, want string }{
		{`raw: tok en/+"x`, `raw: ${TOKEN}`},
		{`query: ?k=tok+en%2F%2B%22x`, `query: ?k=${TOKEN}`},
		{`path: /tok%20en%2F+%22x`, `path: /${TOKEN}`},
		{`quoted: "tok en/+\"x"`, `quoted: "${TOKEN}"`},
		{`only the prefix: tok en.`, `only the prefix: ${PREFIX}.`},
		{`short: abc abcd`, `short: abc abcd`},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if newRedactor(map[string]string{"SHORT": "abc"}) != nil || newRedactor(nil) != nil {
		t.Errorf("a redactor with nothing to redact is not nil")
	}
	var none *redactor
	if none.String("tok en") != "tok en" || none.Err(errClosed) != errClosed {
		t.Errorf("a nil redactor changed something")
	}
}

func TestRedactorErrorKeepsItsChain(t *testing.T) {
	t.Parallel()
	r := newRedactor(map[string]string{"TOKEN": "s3cr3t"})
	err := r.Err(fmt.Errorf("dial s3cr3t.example: %w", errClosed))
	if err.Error() != "dial ${TOKEN}.example: the MCP client was closed" || !errors.Is(err, errClosed) {
		t.Errorf("Err = %q (is errClosed: %v)", err, errors.Is(err, errClosed))
	}
	if plain := errors.New("nothing to hide"); r.Err(plain) != plain {
		t.Errorf("an error without the value was wrapped")
	}
}

// TestRedactorResult: every result is redacted, successful or not: its
// text, and its structured content's strings (keys too), while numbers and
// the JSON structure stay as they were.
func TestRedactorResult(t *testing.T) {
	t.Parallel()
	r := newRedactor(map[string]string{"TOKEN": "s3cr3t", "PORT": "8080"})
	res := tool.ErrorResult("failed at s3cr3t")
	r.Result(res)
	ok := &tool.Result{Content: []tool.Content{{Text: "data s3cr3t"}},
		Structured: json.RawMessage(`{"s3cr3t":["a s3cr3t <b>",8080,true,null],"port":8080}`)}
	r.Result(ok)
	if res.Content[0].Text != "failed at ${TOKEN}" || ok.Content[0].Text != "data ${TOKEN}" {
		t.Errorf("error result %q, successful result %q", res.Content[0].Text, ok.Content[0].Text)
	}
	var got, want any
	if err := json.Unmarshal(ok.Structured, &got); err != nil {
		t.Fatalf("structured content %s: %v", ok.Structured, err)
	}
	_ = json.Unmarshal([]byte(`{"${TOKEN}":["a ${TOKEN} <b>",8080,true,null],"port":8080}`), &want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("structured content (-want +got):\n%s", diff)
	}
	bad := &tool.Result{Structured: json.RawMessage(`{"s3cr3t"`)}
	r.Result(bad)
	if string(bad.Structured) != `{"${TOKEN}"` {
		t.Errorf("structured content that does not parse: %s", bad.Structured)
	}
	var none *redactor
	none.Result(ok)
	r.Result(nil)
}

func TestRedactHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := newRedactor(map[string]string{"TOKEN": "s3cr3t"})
	log := slog.New(&redactHandler{next: slog.NewTextHandler(&buf, nil), r: r}).With("url", "https://x/?k=s3cr3t")
	log.WithGroup("g").Warn("failed with s3cr3t", "error", fmt.Errorf("bad s3cr3t"), "line", "s3cr3t on stderr",
		"list", []string{"a", "s3cr3t"}, slog.Group("in", "v", "s3cr3t"), "n", 7)
	got := buf.String()
	if strings.Contains(got, "s3cr3t") || strings.Count(got, "${TOKEN}") != 6 || !strings.Contains(got, "g.n=7") {
		t.Errorf("log line %q", got)
	}
}

// TestExpandedValuesAreRedacted: a server whose configuration took values
// from the environment never shows them: not in its status, its log, or
// the error results of calls.
func TestExpandedValuesAreRedacted(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-token"
	cfg := memServer("s")
	cfg.Args = []string{"--token", secret}
	cfg.Expanded = map[string]string{"TOKEN": secret}
	f := newFixture(t, cfg)
	f.m.transport = func(s *server) (transport, error) {
		return transport{}, fmt.Errorf("exec %s --token %s: %w", s.cfg.Command, secret, errClosed)
	}
	f.m.Start(f.ctx())
	f.waitAll()
	st := f.status("s")
	if st.State != Failed || strings.Contains(st.Err.Error(), secret) || !strings.Contains(st.Err.Error(), "--token ${TOKEN}") || !errors.Is(st.Err, errClosed) {
		t.Errorf("status %s: %v", st.State, st.Err)
	}
	res, err := f.m.call(context.Background(), f.m.byName["s"], "echo", nil)
	if err != nil || !res.IsError || strings.Contains(text(res), secret) || !strings.Contains(text(res), "${TOKEN}") {
		t.Errorf("call result %q, %v", text(res), err)
	}
	if log := f.log.String(); strings.Contains(log, secret) || !strings.Contains(log, "${TOKEN}") {
		t.Errorf("log:\n%s", log)
	}
	if got := f.m.Redact("printed " + secret); got != "printed ${TOKEN}" {
		t.Errorf("Redact = %q", got)
	}
}

// TestRedactorKeepsTheUsersFolders: the values of HOME and the other
// variables that name the user's folders are not redacted, so a path a
// tool returns under ${HOME} stays one the model can pass back; a secret
// beside them still is.
func TestRedactorKeepsTheUsersFolders(t *testing.T) {
	r := newRedactor(map[string]string{"HOME": "/home/someone", "XDG_STATE_HOME": "/home/someone/.local/state", "API_KEY": "sk-not-a-path"})
	got := r.String("listed /home/someone/notes.txt and /home/someone/.local/state/x with sk-not-a-path")
	if want := "listed /home/someone/notes.txt and /home/someone/.local/state/x with ${API_KEY}"; got != want {
		t.Errorf("redacted %q, want %q", got, want)
	}
}
