package mcpclient

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/tool"
)

// DefaultTimeout is how long connecting, listing the tools and a tool call
// may each take when the configuration sets no timeout.
const DefaultTimeout = 60 * time.Second

// Config is a parsed mcp.json: the MCP servers to connect to.
type Config struct {
	// Servers are the valid servers, sorted by name.
	Servers []ServerConfig
	// Files are the files the configuration was read from, in order.
	Files []string
}

// Server returns the configuration of the server named name.
func (c *Config) Server(name string) (ServerConfig, bool) {
	if c == nil {
		return ServerConfig{}, false
	}
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return ServerConfig{}, false
}

// ServerConfig is one entry of an mcp.json file's "mcpServers" object.
type ServerConfig struct {
	// Name is the server's key in "mcpServers", matching ^[A-Za-z0-9_-]+$.
	Name string
	// File is the configuration file that defines the server.
	File string
	// Type is the transport: "stdio" (a local command), "http" (the
	// streamable HTTP transport), "memory" (Server, in this process) or
	// "transport" (Transport, the caller's). Empty means the one the other
	// fields imply: Server, Transport, Command or URL, whichever is set.
	Type string
	// Command, Args, Env and Cwd start a stdio server. Env is added to the
	// environment of this process; Cwd is the working directory ("" for
	// the current one).
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// URL and Headers reach a streamable HTTP server.
	URL     string
	Headers map[string]string
	// Server is an MCP server in this process, connected to in memory: each
	// connection (and reconnection) is a new session of it. For programs
	// and tests that serve their own tools without a process or a socket.
	Server *mcp.Server
	// Transport is the caller's own transport to the server. The Manager
	// calls its Connect for every connection, so a transport that can
	// connect only once (one end of an in-memory pair) does not reconnect.
	Transport mcp.Transport
	// Exposure is how the server's tools reach the model: [tool.Deferred]
	// (the default, loaded by tool_search), [tool.Direct], [tool.Codemode]
	// or [tool.Hidden].
	Exposure tool.Exposure
	// ToolExposure overrides Exposure for some tools, in file order: an
	// exact tool name wins, else the first matching * pattern.
	ToolExposure []ToolExposure
	// Description says what the server is for, in a line; it is shown in
	// the mcp_servers section and indexed for search.
	Description string
	// Disabled marks a server that is configured but not used ("enabled":
	// false in a servers file). The zero value is an enabled server.
	Disabled bool
	// Timeout bounds connecting (the initialize request), each tool
	// listing and each tool call (default [DefaultTimeout]); a progress
	// notification from the server restarts a call's, up to [ProgressCap]
	// times the timeout in all.
	Timeout time.Duration
	// Briefs gives tools (by the server's tool name) the one-line summary
	// two-phase selection shows instead of one derived from the
	// description.
	Briefs map[string]string
	// AlwaysLoad makes the server's tools active from the start, declared
	// in the head as if direct, while they keep their exposure (and so stay
	// searchable).
	AlwaysLoad bool
	// OAuth configures MCP authorization for an HTTP server ("oauth" in a
	// servers file). Nil means the defaults: a server that answers 401
	// with a Bearer challenge is signed in to by discovery, with dynamic
	// client registration. See [OAuthConfig].
	OAuth *OAuthConfig
	// Expanded maps each environment variable expanded into the
	// configuration (${NAME} in command, args, env, cwd, url, headers or
	// oauth's clientId and clientSecret) to
	// its value. The Manager redacts these values, replacing each by
	// ${NAME}, in every error, tool result (successful or not) and log
	// line about the server; see [MinRedacted].
	Expanded map[string]string
}

// Transport types of [ServerConfig.Type].
const (
	TypeStdio     = "stdio"
	TypeHTTP      = "http"
	TypeMemory    = "memory"
	TypeTransport = "transport"
)

// Check reports what is wrong with a server configuration built in a
// program (a servers file is checked as it is read, by [LoadConfig]): the
// name, exactly one way to reach the server, a Type that agrees with it,
// known exposures. It returns the configuration with Type filled in.
func (s ServerConfig) Check() (ServerConfig, error) {
	bad := func(format string, args ...any) (ServerConfig, error) {
		return s, fmt.Errorf("MCP server %q: %s", s.Name, fmt.Sprintf(format, args...))
	}
	if !serverNamePattern.MatchString(s.Name) {
		return s, fmt.Errorf("MCP server %q: the name must be letters, digits, _ and - (it becomes the tools' mcp__<name>__ prefix)", s.Name)
	}
	var ways []string
	for _, w := range []struct {
		set bool
		typ string
	}{{s.Server != nil, TypeMemory}, {s.Transport != nil, TypeTransport}, {s.Command != "", TypeStdio}, {s.URL != "", TypeHTTP}} {
		if w.set {
			ways = append(ways, w.typ)
		}
	}
	switch {
	case len(ways) == 0:
		return bad("nothing to connect to: set Command (a stdio server), URL (streamable HTTP), Server (an *mcp.Server in this process) or Transport")
	case len(ways) > 1:
		return bad("%s are all set; set exactly one of Command, URL, Server and Transport", strings.Join(ways, " and "))
	case s.Type == "":
		s.Type = ways[0]
	case s.Type != ways[0]:
		return bad("type %q does not match what is set (%s); leave Type empty or set it to %q", s.Type, ways[0], ways[0])
	}
	if s.Type == TypeHTTP {
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url %q is not an http or https URL", s.URL)
		}
	}
	if s.OAuth != nil {
		if s.Type != TypeHTTP {
			return bad("OAuth is for HTTP servers; remove it or set URL")
		}
		if err := s.OAuth.check(); err != nil {
			return bad("oauth: %v", err)
		}
	}
	if s.Exposure != "" {
		if _, err := tool.ParseExposure(string(s.Exposure)); err != nil {
			return bad("%v", err)
		}
	}
	for _, te := range s.ToolExposure {
		if _, err := tool.ParseExposure(string(te.Exposure)); err != nil {
			return bad("toolExposure %q: %v", te.Pattern, err)
		}
	}
	return s, nil
}

// ToolExposure is one entry of a server's "toolExposure" object.
type ToolExposure struct {
	// Pattern is a tool name as the server lists it, or a pattern in which
	// * matches any run of characters.
	Pattern string
	// Exposure is the exposure of the matching tools.
	Exposure tool.Exposure
}

// ExposureFor returns the exposure of the server's tool named name (as the
// server lists it): the ToolExposure entry naming it exactly, else the first
// entry whose pattern matches, else the server's Exposure.
func (s ServerConfig) ExposureFor(name string) tool.Exposure {
	for _, te := range s.ToolExposure {
		if te.Pattern == name {
			return te.Exposure
		}
	}
	for _, te := range s.ToolExposure {
		if strings.Contains(te.Pattern, "*") && tool.MatchPattern(te.Pattern, name) {
			return te.Exposure
		}
	}
	if s.Exposure == "" {
		return tool.Deferred
	}
	return s.Exposure
}

// exposures returns every exposure the server's tools may have by
// configuration: the server's (unless a "*" entry overrides it for every
// tool) and those of its ToolExposure entries.
func (s ServerConfig) exposures() []tool.Exposure {
	var out []tool.Exposure
	if !slices.ContainsFunc(s.ToolExposure, func(te ToolExposure) bool { return te.Pattern == "*" }) {
		base := s.Exposure
		if base == "" {
			base = tool.Deferred
		}
		out = append(out, base)
	}
	for _, te := range s.ToolExposure {
		out = append(out, te.Exposure)
	}
	return out
}

// hasExposure reports whether any of the server's configured exposures is
// one of want.
func (s ServerConfig) hasExposure(want ...tool.Exposure) bool {
	for _, e := range s.exposures() {
		if slices.Contains(want, e) {
			return true
		}
	}
	return false
}
