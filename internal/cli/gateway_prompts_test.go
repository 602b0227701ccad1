//go:build unix

package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sdkPrompts is what testdata/sdkprompts.mjs prints.
type sdkPrompts struct {
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	Prompts      []struct {
		Name      string `json:"name"`
		Arguments []struct {
			Name     string `json:"name"`
			Required bool   `json:"required"`
		} `json:"arguments"`
	} `json:"prompts"`
	Prompt struct {
		Messages []struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	} `json:"prompt"`
	Resources []struct {
		URI string `json:"uri"`
	} `json:"resources"`
	Read struct {
		Contents []struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"contents"`
	} `json:"read"`
	Templates []struct {
		URITemplate string `json:"uriTemplate"`
	} `json:"templates"`
	Completion struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	} `json:"completion"`
	Error string `json:"error"`
}

// TestSDKClientReadsUpstreamPrompts: the official TypeScript SDK's client,
// over streamable HTTP with a token, lists the prompts of the real
// everything server through the gateway, namespaced, gets one with its
// arguments passed through, lists and reads a resource under its
// toolshelf:// URI, lists the templates, and completes a prompt's
// argument through the upstream's completions.
func TestSDKClientReadsUpstreamPrompts(t *testing.T) {
	c := realClients(t)
	bin := realServerBin(t)
	mcpFile := writeMCPConfig(t, map[string]any{"everything": map[string]any{"command": filepath.Join(bin, "mcp-server-everything")}})
	const token = "sdk-prompts-token"
	base, stderr := startServeHTTP(t, "--mcp", mcpFile, "--metrics", "off", "--http", "127.0.0.1:0", "--token", token)
	script, err := filepath.Abs(filepath.Join("testdata", "sdkprompts.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := c.command(t, script, c.dir, base+"/mcp", token,
		"mcp__everything__args-prompt", `{"city":"Lisbon","state":"Estremadura"}`,
		"mcp__everything__completable-prompt", "department", "Eng")
	out, err := cmd.Output()
	var got sdkPrompts
	if jerr := json.Unmarshal(out, &got); jerr != nil || err != nil || got.Error != "" {
		t.Fatalf("the SDK client: %v, %v, %q; the gateway's log:\n%s", err, jerr, out, stderr)
	}
	for _, cap := range []string{"prompts", "resources", "completions"} {
		if _, ok := got.Capabilities[cap]; !ok {
			t.Errorf("capabilities %v: no %s", got.Capabilities, cap)
		}
	}
	var names []string
	for _, p := range got.Prompts {
		names = append(names, p.Name)
		if p.Name == "mcp__everything__args-prompt" && (len(p.Arguments) != 2 || p.Arguments[0].Name != "city" || !p.Arguments[0].Required) {
			t.Errorf("args-prompt's arguments: %+v", p.Arguments)
		}
	}
	if !slices.Contains(names, "mcp__everything__args-prompt") || !slices.Contains(names, "mcp__everything__completable-prompt") {
		t.Errorf("prompts %v: want the everything server's, namespaced", names)
	}
	if len(got.Prompt.Messages) != 1 || got.Prompt.Messages[0].Content.Text != "What's weather in Lisbon, Estremadura?" {
		t.Errorf("args-prompt: %+v, want the upstream's text with both arguments", got.Prompt)
	}
	if len(got.Resources) == 0 || !strings.HasPrefix(got.Resources[0].URI, "toolshelf://everything/demo://") {
		t.Fatalf("resources %+v: want the everything server's under toolshelf://everything/", got.Resources)
	}
	if len(got.Read.Contents) != 1 || got.Read.Contents[0].URI != got.Resources[0].URI || got.Read.Contents[0].Text == "" {
		t.Errorf("reading %s: %+v", got.Resources[0].URI, got.Read.Contents)
	}
	if len(got.Templates) == 0 || !strings.HasPrefix(got.Templates[0].URITemplate, "toolshelf://everything/demo://") {
		t.Errorf("templates %+v: want the everything server's under toolshelf://everything/", got.Templates)
	}
	if v := got.Completion.Completion.Values; !slices.Equal(v, []string{"Engineering"}) {
		t.Errorf("completion of department from Eng: %v, want [Engineering]", v)
	}
}
