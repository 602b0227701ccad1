package emulator_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/emulator"
)

// TestClientAnswersInProcess: the server's client gets the answers a
// network client would, streamed or not, errors included, and the server
// records each request, without a listener.
func TestClientAnswersInProcess(t *testing.T) {
	var records []emulator.Record
	srv, err := emulator.New(emulator.Config{Observe: func(r emulator.Record) { records = append(records, r) }})
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Client()
	post := func(ctx context.Context, url, key, body string) (*http.Response, string, error) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b), nil
	}
	const chat = `{"model":"llama3.3","messages":[{"role":"user","content":"hello there"}]}`

	resp, body, err := post(t.Context(), "http://emulator.invalid/v1/chat/completions", "k", chat)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, "echo: hello there") {
		t.Errorf("answer: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}

	stream := strings.Replace(chat, `{"model"`, `{"stream":true,"model"`, 1)
	resp, body, err = post(t.Context(), "http://emulator.invalid/v1/chat/completions", "k", stream)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || !strings.Contains(body, "echo: hello there") || !strings.HasSuffix(strings.TrimSpace(body), "data: [DONE]") {
		t.Errorf("stream: %q\n%s", resp.Header.Get("Content-Type"), body)
	}

	if resp, body, _ = post(t.Context(), "http://emulator.invalid/v1/chat/completions", "", chat); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "No API key provided") {
		t.Errorf("without a key: %d %s", resp.StatusCode, body)
	}
	if resp, _, _ = post(t.Context(), "http://emulator.invalid/v2/other", "k", chat); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown path: %d", resp.StatusCode)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := post(ctx, "http://emulator.invalid/v1/chat/completions", "k", chat); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled request: %v", err)
	}

	if len(records) != 3 || records[0].Status != http.StatusOK || !records[1].Stream || records[2].Status != http.StatusUnauthorized {
		t.Errorf("records: %+v", records)
	}
}
