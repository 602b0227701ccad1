package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/tool"
)

// ConfigError is one problem with an mcp.json file: where it is, what is
// wrong and how to fix it.
type ConfigError struct {
	// File is the configuration file.
	File string
	// Server is the server entry, "" for a problem with the whole file.
	Server string
	// Problem says what is wrong.
	Problem string
	// Fix says what to do about it.
	Fix string
}

// Error returns "file: server "name": problem; fix".
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Server != "" {
		fmt.Fprintf(&b, ": server %q", e.Server)
	}
	b.WriteString(": ")
	b.WriteString(e.Problem)
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

var serverNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// serverKeys are the keys a server entry may have.
var serverKeys = []string{
	"type", "command", "args", "env", "cwd", "url", "headers",
	"exposure", "toolExposure", "description", "enabled", "timeout", "alwaysLoad", "briefs", "oauth",
}

// ParseConfig decodes one mcp.json file. file names it in messages and in
// ServerConfig.File.
//
// The file is {"mcpServers": {"name": {...}, ...}} as Claude Desktop,
// Cursor and Claude Code write it; VS Code's {"servers": {...}} is accepted
// too. Server entries take the keys command, args, env and cwd (stdio), type
// ("stdio", "http" or "streamable-http"), url and headers (HTTP), and
// toolshelf's exposure, toolExposure, description, enabled, timeout (seconds),
// alwaysLoad, briefs (tool name → the one-line summary two-phase selection
// shows) and oauth (an HTTP server's sign-in, [OAuthConfig]). ${NAME},
// ${env:NAME} and ${NAME:-default} are replaced by environment variables in
// command, args, env values, cwd, url, header values and oauth's clientId and
// clientSecret; a leading ~ in cwd is the home folder.
//
// ParseConfig reports every problem it finds, each a [*ConfigError], joined.
// The returned Config is never nil: it holds the servers without problems.
func ParseConfig(file string, data []byte) (*Config, error) {
	cfg := &Config{Files: []string{file}}
	p := &parser{file: file, lookup: os.LookupEnv}
	cfg.Servers = p.parse(data)
	slices.SortFunc(cfg.Servers, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	return cfg, errors.Join(p.errs...)
}

// LoadConfig reads the named mcp.json files in order. A server of a later
// file replaces the server of the same name of an earlier one (a project
// file overrides the global one). A path that does not exist is an error
// naming it; so are two servers of different files whose names differ only
// in - and _. Like [ParseConfig] it reports every problem and returns the
// servers without problems.
func LoadConfig(paths ...string) (*Config, error) {
	cfg := &Config{}
	var errs []error
	byName := make(map[string]ServerConfig)
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			fix := "check the path"
			if errors.Is(err, os.ErrNotExist) {
				fix = "create the file or leave it out"
			}
			errs = append(errs, &ConfigError{File: path, Problem: "cannot read: " + unwrapPathError(err).Error(), Fix: fix})
			continue
		}
		c, err := ParseConfig(path, data)
		if err != nil {
			errs = append(errs, err)
		}
		cfg.Files = append(cfg.Files, path)
		for _, s := range c.Servers {
			byName[s.Name] = s
		}
	}
	for _, s := range byName {
		cfg.Servers = append(cfg.Servers, s)
	}
	slices.SortFunc(cfg.Servers, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	// Names that fold together across files: keep the first (by name).
	kept := cfg.Servers[:0]
	folded := make(map[string]ServerConfig)
	for _, s := range cfg.Servers {
		key := foldName(s.Name)
		if first, ok := folded[key]; ok {
			errs = append(errs, &ConfigError{File: s.File, Server: s.Name,
				Problem: fmt.Sprintf("conflicts with server %q of %s: both get the tool namespace %s", first.Name, first.File, tool.NamespaceName(s.Name)),
				Fix:     "rename one of them"})
			continue
		}
		folded[key] = s
		kept = append(kept, s)
	}
	cfg.Servers = kept
	return cfg, errors.Join(errs...)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// foldName is the form in which two server names collide: - and _ are the
// same character in tool names.
func foldName(name string) string { return strings.ReplaceAll(name, "-", "_") }

type parser struct {
	file   string
	lookup func(string) (string, bool)
	errs   []error
}

// base is the folder relative commands and working folders of the file
// are taken from: the file's own folder, or for a file in a .toolshelf
// folder (./.toolshelf/mcp.json) the project folder that holds it, made
// absolute.
func (p *parser) base() string {
	dir := filepath.Dir(p.file)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if filepath.Base(dir) == ".toolshelf" {
		dir = filepath.Dir(dir)
	}
	return dir
}

func (p *parser) fail(server, problem, fix string) {
	p.errs = append(p.errs, &ConfigError{File: p.file, Server: server, Problem: problem, Fix: fix})
}

func (p *parser) parse(data []byte) []ServerConfig {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	const shapeFix = `write {"mcpServers": {"name": {"command": ...}}}`
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		p.fail("", "not an mcp.json file: expected a JSON object", shapeFix)
		return nil
	}
	// The whole file is checked first: a decoder's syntax errors count
	// from the value it was decoding, and a file cut short is only an
	// unexpected EOF to it, where a check of the whole names the line and
	// column.
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		p.fail("", "invalid JSON: "+catalog.DescribeJSONError(data, err), "fix the syntax")
		return nil
	}
	keys, values, err := objectEntries(data)
	if err != nil {
		p.fail("", "invalid JSON: "+catalog.DescribeJSONError(data, err), "fix the syntax")
		return nil
	}
	var servers json.RawMessage
	serversKey := ""
	for i, k := range keys {
		switch k {
		case "mcpServers", "servers":
			if serversKey != "" {
				p.fail("", fmt.Sprintf("has both %q and %q", serversKey, k), `keep only "mcpServers"`)
				continue
			}
			serversKey, servers = k, values[i]
		case "$schema", "inputs":
			// VS Code's schema reference and input declarations: ${input:...}
			// variables are reported where they are used.
		default:
			p.fail("", fmt.Sprintf("unknown key %q", k), `remove it: the file holds only "mcpServers"`)
		}
	}
	if serversKey == "" {
		p.fail("", `no "mcpServers" object`, shapeFix)
		return nil
	}
	names, entries, err := objectEntries(servers)
	if err != nil || isNull(servers) {
		p.fail("", fmt.Sprintf("%q must be an object of servers", serversKey), shapeFix)
		return nil
	}
	var out []ServerConfig
	folded := make(map[string]string)
	seen := make(map[string]bool)
	for i, name := range names {
		if seen[name] {
			p.fail(name, "is defined twice", "keep one definition")
			continue
		}
		seen[name] = true
		if !serverNamePattern.MatchString(name) {
			p.fail(name, "invalid server name", "use only letters, digits, _ and - in the name")
			continue
		}
		if first, ok := folded[foldName(name)]; ok {
			p.fail(name, fmt.Sprintf("conflicts with server %q: both get the tool namespace %s", first, tool.NamespaceName(name)),
				"rename one of them")
			continue
		}
		folded[foldName(name)] = name
		if s, ok := p.server(name, entries[i]); ok {
			out = append(out, s)
		}
	}
	return out
}

// server decodes one server entry; ok is false when it has problems.
func (p *parser) server(name string, raw json.RawMessage) (s ServerConfig, ok bool) {
	before := len(p.errs)
	fail := func(problem, fix string) { p.fail(name, problem, fix) }
	keys, values, err := objectEntries(raw)
	if err != nil || isNull(raw) {
		fail("the entry must be an object", `write {"command": "...", "args": [...]} or {"url": "https://..."}`)
		return s, false
	}
	s = ServerConfig{Name: name, File: p.file, Exposure: tool.Deferred, Timeout: DefaultTimeout}
	fields := make(map[string]json.RawMessage, len(keys))
	for i, k := range keys {
		if !slices.Contains(serverKeys, k) {
			fix := "remove it; known keys are " + strings.Join(serverKeys, ", ")
			switch k {
			case "disabled":
				fix = `write "enabled": false instead`
			case "transport":
				fix = `write "type": "stdio" or "type": "http" instead`
			case "envFile":
				fix = `put the variables in "env" instead`
			}
			fail(fmt.Sprintf("unknown key %q", k), fix)
			continue
		}
		fields[k] = values[i]
	}
	str := func(key, fix string) string {
		v, ok := fields[key]
		if !ok || isNull(v) {
			return ""
		}
		var out string
		if json.Unmarshal(v, &out) != nil {
			fail(fmt.Sprintf("%q must be a string, not %s", key, jsonKind(v)), fix)
		}
		return out
	}
	boolean := func(key string, def bool) bool {
		v, ok := fields[key]
		if !ok || isNull(v) {
			return def
		}
		var out bool
		if json.Unmarshal(v, &out) != nil {
			fail(fmt.Sprintf("%q must be true or false, not %s", key, jsonKind(v)), fmt.Sprintf(`write "%s": true or "%s": false`, key, key))
			return def
		}
		return out
	}
	stringMap := func(key, fix string) map[string]string {
		v, ok := fields[key]
		if !ok || isNull(v) {
			return nil
		}
		var out map[string]string
		if json.Unmarshal(v, &out) != nil {
			fail(fmt.Sprintf("%q must be an object of strings", key), fix)
			return nil
		}
		return out
	}
	// expand replaces the variables of v, recording the values taken
	// from the environment.
	expand := func(key, v string) string {
		out, err := expandVars(v, func(name string) (string, bool) {
			val, ok := p.lookup(name)
			if ok {
				if s.Expanded == nil {
					s.Expanded = make(map[string]string)
				}
				s.Expanded[name] = val
			}
			return val, ok
		})
		if err != nil {
			fail(fmt.Sprintf("%s: %v", key, err), "set the environment variable or write the value")
		}
		return out
	}

	typ := str("type", `write "type": "stdio" or "type": "http"`)
	s.Command = str("command", `write the program to run, e.g. "command": "npx"`)
	if v, ok := fields["args"]; ok && !isNull(v) {
		if json.Unmarshal(v, &s.Args) != nil {
			fail(`"args" must be an array of strings`, `write "args": ["--flag", "value"]`)
		}
	}
	s.Env = stringMap("env", `write "env": {"NAME": "value"}`)
	s.Cwd = str("cwd", `write the working folder as a string`)
	s.URL = str("url", `write the server's address, e.g. "url": "https://example.com/mcp"`)
	s.Headers = stringMap("headers", `write "headers": {"Authorization": "Bearer ${TOKEN}"}`)
	s.Description = strings.TrimSpace(str("description", `write a one-line description`))
	s.Disabled = !boolean("enabled", true)
	s.AlwaysLoad = boolean("alwaysLoad", false)
	s.Briefs = stringMap("briefs", `write "briefs": {"tool_name": "Create an issue in a repository"}`)

	if v, ok := fields["exposure"]; ok && !isNull(v) {
		var e string
		if json.Unmarshal(v, &e) != nil {
			fail(`"exposure" must be a string`, exposureFix)
		} else if s.Exposure, err = parseExposure(e); err != nil {
			fail(fmt.Sprintf("exposure: %v", err), exposureFix)
		}
	}
	if v, ok := fields["toolExposure"]; ok && !isNull(v) {
		pats, vals, err := objectEntries(v)
		if err != nil {
			fail(`"toolExposure" must be an object of tool name or pattern → exposure`, `write "toolExposure": {"read_*": "direct"}`)
		}
		for i, pat := range pats {
			var e string
			if pat == "" {
				fail(`toolExposure has an empty tool name`, "remove it or name a tool")
				continue
			}
			if json.Unmarshal(vals[i], &e) != nil {
				fail(fmt.Sprintf("toolExposure %q must be a string", pat), exposureFix)
				continue
			}
			exp, err := parseExposure(e)
			if err != nil {
				fail(fmt.Sprintf("toolExposure %q: %v", pat, err), exposureFix)
				continue
			}
			s.ToolExposure = append(s.ToolExposure, ToolExposure{Pattern: pat, Exposure: exp})
		}
	}
	if v, ok := fields["timeout"]; ok && !isNull(v) {
		var secs float64
		switch {
		case json.Unmarshal(v, &secs) != nil:
			fail(fmt.Sprintf(`"timeout" must be a number of seconds, not %s`, jsonKind(v)), `write e.g. "timeout": 120`)
		case secs <= 0 || secs > 1e6:
			fail(fmt.Sprintf(`"timeout" must be a positive number of seconds, not %v`, secs), `write e.g. "timeout": 120, or leave it out for 60`)
		case time.Duration(secs*float64(time.Second)) <= 0:
			fail(fmt.Sprintf(`"timeout" must be at least a nanosecond, not %v seconds`, secs), `write e.g. "timeout": 120, or leave it out for 60`)
		default:
			s.Timeout = time.Duration(secs * float64(time.Second))
		}
	}

	switch typ {
	case "":
		switch {
		case s.URL != "" && s.Command != "":
			fail(`has both "command" and "url"`, `keep "command" for a local server or "url" for a remote one`)
		case s.URL != "":
			typ = "http"
		case s.Command != "":
			typ = "stdio"
		default:
			fail(`needs "command" (a local server) or "url" (a remote server)`, `add "command": "..." or "url": "https://..."`)
		}
	case "stdio":
	case "http", "streamable-http", "streamableHttp":
		typ = "http"
	case "sse":
		fail("the legacy SSE transport is not supported (MCP replaced it with streamable HTTP)",
			`set "type": "http" and the server's streamable HTTP endpoint as "url" (often ending in /mcp)`)
	default:
		fail(fmt.Sprintf("unknown type %q", typ), `write "type": "stdio" or "type": "http"`)
	}
	s.Type = typ
	switch typ {
	case "stdio":
		if s.Command == "" {
			fail(`a stdio server needs "command"`, `add "command": "..." with the program that runs the server`)
		}
		for _, k := range []string{"url", "headers", "oauth"} {
			if _, ok := fields[k]; ok {
				fail(fmt.Sprintf("%q is for HTTP servers, not stdio ones", k), fmt.Sprintf("remove %q or the stdio keys", k))
			}
		}
		if s.Command = expand("command", s.Command); s.Command == "" && len(p.errs) == before {
			fail(`"command" is empty once its variables are expanded`, "set the variable, or write the program to run")
		}
		for i, a := range s.Args {
			s.Args[i] = expand(fmt.Sprintf("args[%d]", i), a)
		}
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			s.Env[k] = expand(fmt.Sprintf("env %q", k), s.Env[k])
		}
		s.Cwd = expand("cwd", s.Cwd)
		if s.Cwd == "~" || strings.HasPrefix(s.Cwd, "~/") || strings.HasPrefix(s.Cwd, "~"+string(filepath.Separator)) {
			home, err := os.UserHomeDir()
			if err != nil {
				fail("cwd: cannot find the home folder: "+err.Error(), "write the full path")
			} else {
				s.Cwd = filepath.Join(home, s.Cwd[1:])
			}
		}
		// A relative path is the project's, wherever toolshelf runs:
		// "./bin/server" next to the servers file. A bare program name
		// is looked up in PATH.
		if s.Command != "" && !filepath.IsAbs(s.Command) && filepath.Base(s.Command) != s.Command {
			s.Command = filepath.Join(p.base(), s.Command)
		}
		if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
			s.Cwd = filepath.Join(p.base(), s.Cwd)
		}
	case "http":
		if s.URL == "" {
			fail(`an HTTP server needs "url"`, `add "url": "https://..." with the server's streamable HTTP endpoint`)
		}
		for _, k := range []string{"command", "args", "env", "cwd"} {
			if _, ok := fields[k]; ok {
				fail(fmt.Sprintf("%q is for stdio servers, not HTTP ones", k), fmt.Sprintf("remove %q or the HTTP keys", k))
			}
		}
		written := s.URL
		s.URL = expand("url", s.URL)
		for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
			s.Headers[k] = expand(fmt.Sprintf("header %q", k), s.Headers[k])
		}
		if v, ok := fields["oauth"]; ok && !isNull(v) {
			s.OAuth = p.oauth(name, v, expand)
		}
		if s.URL != "" && len(p.errs) == before {
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				// The message quotes the url as written: the expanded
				// one may carry a secret.
				what := fmt.Sprintf("url %q", written)
				if written != s.URL {
					what += " (with its variables replaced)"
				}
				fail(what+" is not an http or https address", `write "url": "https://host/path"`)
			}
		}
	}
	return s, len(p.errs) == before
}

const exposureFix = `use "deferred", "direct", "codemode" or "hidden"`

// parseExposure reads a configured exposure.
func parseExposure(s string) (tool.Exposure, error) {
	switch s {
	case "deferred":
		return tool.Deferred, nil
	case "direct":
		return tool.Direct, nil
	case "codemode", "codemode-deferred":
		return tool.Codemode, nil
	case "hidden":
		return tool.Hidden, nil
	}
	return "", fmt.Errorf("unknown exposure %q", s)
}
