package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tool"
)

// conformanceTools are the tool each client scenario of the official MCP
// conformance suite expects to be called, with its arguments; a scenario
// not named calls test-tool (the auth scenarios), and initialize calls
// none.
var conformanceTools = map[string]struct {
	name string
	args string
}{
	"initialize": {},
	"tools_call": {"add_numbers", `{"a": 5, "b": 3}`},
	"sse-retry":  {"test_reconnection", `{}`},
}

// conformanceMetadataURL is the client ID metadata document the suite's
// auth/basic-cimd scenario expects a client to send as its client id.
const conformanceMetadataURL = "https://conformance-test.local/client-metadata.json"

// newConformanceClientCmd returns the hidden command that the official MCP
// conformance suite runs as a client (conformance client --command
// "toolshelf mcp conformance-client"): it connects to the URL, the last
// argument, through toolshelf's own MCP client, signing in as the
// scenario ($MCP_CONFORMANCE_SCENARIO) asks, with the credentials of
// $MCP_CONFORMANCE_CONTEXT, and calls the scenario's tool. The sign-in's
// authorization URL is followed headlessly: the suite's authorization
// server approves at once and redirects to toolshelf's loopback listener.
func newConformanceClientCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "conformance-client URL",
		Short:  "Run toolshelf's MCP client for the conformance suite's client scenarios",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return conformanceClient(e, args[len(args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT"))
		},
	}
}

func conformanceClient(e *env, url, scenario, contextJSON string) error {
	var conf struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if contextJSON != "" {
		if err := json.Unmarshal([]byte(contextJSON), &conf); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return err
	}
	oc := &mcpclient.OAuthConfig{ClientID: conf.ClientID, ClientSecret: conf.ClientSecret, CallbackPort: port, ClientMetadataURL: conformanceMetadataURL}
	if strings.HasPrefix(scenario, "auth/client-credentials") {
		oc = &mcpclient.OAuthConfig{Grant: mcpclient.GrantClientCredentials, ClientID: conf.ClientID, ClientSecret: conf.ClientSecret}
	}
	tokens, err := os.MkdirTemp("", "toolshelf-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tokens)
	const name = "conformance"
	cfg := &mcpclient.Config{Servers: []mcpclient.ServerConfig{{Name: name, URL: url, OAuth: oc}}}
	reg := tool.NewRegistry()
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m, err := mcpclient.NewManager(cfg, reg, nil, mcpclient.Options{Logger: log, TokenDir: tokens + "/oauth",
		ClientName: "toolshelf", ClientVersion: version(), Authorize: followSignIn})
	if err != nil {
		return err
	}
	defer m.Close()
	m.Start(e.ctx)
	if err := m.WaitAll(e.ctx); err != nil {
		return err
	}
	st := m.Servers()[0]
	if st.State != mcpclient.Connected {
		return fmt.Errorf("the server is %s: %v", st.State, st.Err)
	}
	call, ok := conformanceTools[scenario]
	if !ok {
		call.name, call.args = "test-tool", `{}`
	}
	if call.name == "" {
		return nil
	}
	for _, t := range reg.Tools() {
		if t.Origin.Tool != call.name {
			continue
		}
		res, err := t.Handler.Call(e.ctx, json.RawMessage(call.args))
		if err != nil {
			return err
		}
		for _, c := range res.Content {
			printLine(e.stdout, c.Text)
		}
		if res.IsError {
			return fmt.Errorf("the call of %s failed", call.name)
		}
		return nil
	}
	return fmt.Errorf("the server lists no tool %s", call.name)
}

// followSignIn plays the person of a sign-in: it opens the authorization
// URL and follows its redirects, to the loopback listener.
func followSignIn(ctx context.Context, _, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New("the sign-in ended with " + resp.Status)
	}
	return nil
}

// freeLoopbackPort returns a loopback port that was free a moment ago, so
// that scenarios run side by side each have a redirect port of their own.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
