package mcpclient

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/tool"
)

func TestParseConfigValid(t *testing.T) {
	t.Setenv("MCPCLIENT_TEST_TOKEN", "tok123")
	t.Setenv("MCPCLIENT_TEST_DIR", "/srv/data")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home folder")
	}
	stdio := func(name, command string, args ...string) ServerConfig {
		return ServerConfig{Name: name, File: "mcp.json", Type: "stdio", Command: command, Args: args,
			Exposure: tool.Deferred, Timeout: DefaultTimeout}
	}
	http := func(name, url string) ServerConfig {
		return ServerConfig{Name: name, File: "mcp.json", Type: "http", URL: url,
			Exposure: tool.Deferred, Timeout: DefaultTimeout}
	}
	for _, tc := range []struct {
		name string
		file string
		want []ServerConfig
	}{
		{
			name: "Claude Desktop",
			file: `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${MCPCLIENT_TEST_DIR}"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${MCPCLIENT_TEST_TOKEN}"}
    }
  }
}`,
			want: []ServerConfig{
				func() ServerConfig {
					s := stdio("filesystem", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/data")
					s.Expanded = map[string]string{"MCPCLIENT_TEST_DIR": "/srv/data"}
					return s
				}(),
				func() ServerConfig {
					s := stdio("github", "docker", "run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server")
					s.Env = map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "tok123"}
					s.Expanded = map[string]string{"MCPCLIENT_TEST_TOKEN": "tok123"}
					return s
				}(),
			},
		},
		{
			name: "Cursor remote server",
			file: "\ufeff" + `{"mcpServers": {"remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${env:MCPCLIENT_TEST_TOKEN}"}}}}`,
			want: []ServerConfig{func() ServerConfig {
				s := http("remote", "https://mcp.example.com/mcp")
				s.Headers = map[string]string{"Authorization": "Bearer tok123"}
				s.Expanded = map[string]string{"MCPCLIENT_TEST_TOKEN": "tok123"}
				return s
			}()},
		},
		{
			name: "VS Code",
			file: `{
  "inputs": [],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]},
    "api": {"type": "http", "url": "http://localhost:8080/mcp"}
  }
}`,
			want: []ServerConfig{http("api", "http://localhost:8080/mcp"), stdio("fetch", "uvx", "mcp-server-fetch")},
		},
		{
			name: "Claude Code streamable-http",
			file: `{"mcpServers": {"docs": {"type": "streamable-http", "url": "https://docs.example.com/mcp?x=${MISSING_OK:-1}"}}}`,
			want: []ServerConfig{http("docs", "https://docs.example.com/mcp?x=1")},
		},
		{
			name: "toolshelf keys",
			file: `{"mcpServers": {"tools": {
  "command": "./server",
  "cwd": "~/work",
  "exposure": "codemode-deferred",
  "toolExposure": {"write_*": "hidden", "read_file": "direct", "*": "deferred"},
  "description": "  My tools.  ",
  "enabled": false,
  "timeout": 2.5,
  "alwaysLoad": true,
  "briefs": {"read_file": "Read a file of the project"}
}, "nulls": {"command": "x", "args": null, "env": null, "exposure": null}}}`,
			want: []ServerConfig{
				stdio("nulls", "x"),
				{
					Name: "tools", File: "mcp.json", Type: "stdio", Command: filepath.Join(wd, "server"), Cwd: filepath.Join(home, "work"),
					Exposure: tool.Codemode,
					ToolExposure: []ToolExposure{
						{Pattern: "write_*", Exposure: tool.Hidden},
						{Pattern: "read_file", Exposure: tool.Direct},
						{Pattern: "*", Exposure: tool.Deferred},
					},
					Description: "My tools.", Disabled: true, Timeout: 2500 * time.Millisecond, AlwaysLoad: true,
					Briefs: map[string]string{"read_file": "Read a file of the project"},
				},
			},
		},
		{name: "empty", file: `{"mcpServers": {}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig("mcp.json", []byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, cfg.Servers); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if !cmp.Equal(cfg.Files, []string{"mcp.json"}) {
				t.Errorf("files = %v", cfg.Files)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Setenv("MCPCLIENT_TEST_TOKEN", "tok")
	os.Unsetenv("MCPCLIENT_TEST_UNSET")
	for _, tc := range []struct {
		name    string
		file    string
		server  string // the server the error names
		problem string // part of the message
		fix     string // part of the fix
	}{
		{"syntax", "{\n  \"mcpServers\": {,}\n}", "", "line 2 column", "fix the syntax"},
		{"not an object", `[1]`, "", "expected a JSON object", "mcpServers"},
		{"no servers", `{}`, "", `no "mcpServers"`, "mcpServers"},
		{"unknown top key", `{"mcpServers": {}, "globalShortcut": "x"}`, "", `unknown key "globalShortcut"`, "remove it"},
		{"servers not object", `{"mcpServers": []}`, "", "must be an object", "mcpServers"},
		{"both shapes", `{"mcpServers": {}, "servers": {}}`, "", `both "mcpServers" and "servers"`, "keep only"},
		{"bad name", `{"mcpServers": {"bad name": {"command": "x"}}}`, "bad name", "invalid server name", "letters, digits"},
		{"entry not object", `{"mcpServers": {"s": "npx"}}`, "s", "must be an object", `"command"`},
		{"sse", `{"mcpServers": {"s": {"type": "sse", "url": "https://x/sse"}}}`, "s",
			"the legacy SSE transport is not supported (MCP replaced it with streamable HTTP)", `"type": "http"`},
		{"unknown type", `{"mcpServers": {"s": {"type": "ws", "url": "https://x"}}}`, "s", `unknown type "ws"`, `"type": "stdio"`},
		{"disabled key", `{"mcpServers": {"s": {"command": "x", "disabled": true}}}`, "s", `unknown key "disabled"`, `"enabled": false`},
		{"unknown key", `{"mcpServers": {"s": {"command": "x", "autoApprove": []}}}`, "s", `unknown key "autoApprove"`, "known keys are"},
		{"nothing to run", `{"mcpServers": {"s": {"description": "x"}}}`, "s", `needs "command"`, `add "command"`},
		{"command and url", `{"mcpServers": {"s": {"command": "x", "url": "https://x"}}}`, "s", `both "command" and "url"`, "keep"},
		{"stdio without command", `{"mcpServers": {"s": {"type": "stdio"}}}`, "s", `needs "command"`, `add "command"`},
		{"http without url", `{"mcpServers": {"s": {"type": "http"}}}`, "s", `needs "url"`, `add "url"`},
		{"stdio headers", `{"mcpServers": {"s": {"command": "x", "headers": {}}}}`, "s", `"headers" is for HTTP servers`, `remove "headers"`},
		{"http env", `{"mcpServers": {"s": {"url": "https://x", "env": {}}}}`, "s", `"env" is for stdio servers`, `remove "env"`},
		{"bad url", `{"mcpServers": {"s": {"url": "ftp://x"}}}`, "s", "not an http or https address", "https://host"},
		{"unset variable", `{"mcpServers": {"s": {"command": "x", "env": {"K": "${MCPCLIENT_TEST_UNSET}"}}}}`, "s",
			"environment variable MCPCLIENT_TEST_UNSET is not set", "set the environment variable"},
		{"unset in url", `{"mcpServers": {"s": {"url": "https://x/${MCPCLIENT_TEST_UNSET}"}}}`, "s", "url: environment variable MCPCLIENT_TEST_UNSET", "set the environment variable"},
		{"unset in header", `{"mcpServers": {"s": {"url": "https://x", "headers": {"A": "${MCPCLIENT_TEST_UNSET}"}}}}`, "s", `header "A"`, "set the environment variable"},
		{"unset in args", `{"mcpServers": {"s": {"command": "x", "args": ["${MCPCLIENT_TEST_UNSET}"]}}}`, "s", "args[0]", "set the environment variable"},
		{"unset in cwd", `{"mcpServers": {"s": {"command": "x", "cwd": "${MCPCLIENT_TEST_UNSET}"}}}`, "s", "cwd: environment variable", "set the environment variable"},
		{"unset in command", `{"mcpServers": {"s": {"command": "${MCPCLIENT_TEST_UNSET}/bin/x"}}}`, "s", "command: environment variable", "set the environment variable"},
		{"input variable", `{"mcpServers": {"s": {"command": "x", "env": {"K": "${input:token}"}}}}`, "s", "${input:token} is not an environment variable reference", "set the environment variable"},
		{"unclosed variable", `{"mcpServers": {"s": {"command": "x", "args": ["${HOME"]}}}`, "s", "unclosed ${", "set the environment variable"},
		{"bad exposure", `{"mcpServers": {"s": {"command": "x", "exposure": "sometimes"}}}`, "s", `unknown exposure "sometimes"`, `"deferred", "direct"`},
		{"bad tool exposure", `{"mcpServers": {"s": {"command": "x", "toolExposure": {"a": "maybe"}}}}`, "s", `toolExposure "a"`, `"deferred", "direct"`},
		{"tool exposure array", `{"mcpServers": {"s": {"command": "x", "toolExposure": ["a"]}}}`, "s", `"toolExposure" must be an object`, `"read_*": "direct"`},
		{"timeout string", `{"mcpServers": {"s": {"command": "x", "timeout": "60"}}}`, "s", `"timeout" must be a number of seconds, not a string`, `"timeout": 120`},
		{"timeout negative", `{"mcpServers": {"s": {"command": "x", "timeout": -1}}}`, "s", "positive number", `"timeout": 120`},
		// Found by FuzzParseConfig: it was accepted as a timeout of 0, which fails every call at once.
		{"timeout under a nanosecond", `{"mcpServers": {"s": {"command": "x", "timeout": 1e-12}}}`, "s", "at least a nanosecond", `"timeout": 120`},
		// Found by FuzzParseConfig: a command that expands to nothing was accepted.
		{"command expands to nothing", `{"mcpServers": {"s": {"command": "${MCPCLIENT_TEST_UNSET:-}"}}}`, "s", `"command" is empty`, "set the variable"},
		{"enabled string", `{"mcpServers": {"s": {"command": "x", "enabled": "yes"}}}`, "s", `"enabled" must be true or false`, `"enabled": true`},
		{"args string", `{"mcpServers": {"s": {"command": "x", "args": "-y pkg"}}}`, "s", `"args" must be an array of strings`, `"args": [`},
		{"env numbers", `{"mcpServers": {"s": {"command": "x", "env": {"N": 1}}}}`, "s", `"env" must be an object of strings`, `"env": {`},
		{"briefs list", `{"mcpServers": {"s": {"command": "x", "briefs": ["Read"]}}}`, "s", `"briefs" must be an object of strings`, `"briefs": {"tool_name"`},
		{"command number", `{"mcpServers": {"s": {"command": 7}}}`, "s", `"command" must be a string, not a number`, `"command": "npx"`},
		{"duplicate", `{"mcpServers": {"s": {"command": "x"}, "s": {"command": "y"}}}`, "s", "defined twice", "keep one"},
		{"collision", `{"mcpServers": {"my-tools": {"command": "x"}, "my_tools": {"command": "y"}}}`, "my_tools",
			`conflicts with server "my-tools"`, "rename one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("dir/mcp.json", []byte(tc.file))
			if err == nil {
				t.Fatal("no error")
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			if ce.File != "dir/mcp.json" || ce.Server != tc.server {
				t.Errorf("error names file %q server %q, want dir/mcp.json and %q", ce.File, ce.Server, tc.server)
			}
			if !strings.Contains(ce.Problem, tc.problem) {
				t.Errorf("problem %q does not contain %q", ce.Problem, tc.problem)
			}
			if !strings.Contains(ce.Fix, tc.fix) {
				t.Errorf("fix %q does not contain %q", ce.Fix, tc.fix)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "dir/mcp.json: ") || (tc.server != "" && !strings.Contains(msg, `server "`+tc.server+`"`)) {
				t.Errorf("message %q does not name the file and server", msg)
			}
		})
	}
}

// TestRelativePathsAreTheProjects: a relative command (one with a path
// separator) and a relative cwd are taken from the servers file's folder,
// or from the project folder above a .toolshelf folder, whatever the
// working folder; a bare program name is left for PATH, and absolute
// paths as they are.
func TestRelativePathsAreTheProjects(t *testing.T) {
	t.Parallel()
	proj := filepath.Join(t.TempDir(), "proj")
	file := `{"mcpServers": {
  "local": {"command": "./bin/server", "args": ["./data"], "cwd": "work"},
  "up": {"command": "../tools/server"},
  "npx": {"command": "npx", "args": ["-y", "pkg"]},
  "abs": {"command": "/usr/local/bin/server", "cwd": "/srv"}
}}`
	for _, c := range []struct{ file, base string }{
		{filepath.Join(proj, "mcp.json"), proj},
		{filepath.Join(proj, ".toolshelf", "mcp.json"), proj},
		{filepath.Join(proj, "config", "mcp.json"), filepath.Join(proj, "config")},
	} {
		cfg, err := ParseConfig(c.file, []byte(file))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][2]string{}
		for _, s := range cfg.Servers {
			got[s.Name] = [2]string{s.Command, s.Cwd}
		}
		want := map[string][2]string{
			"local": {filepath.Join(c.base, "bin", "server"), filepath.Join(c.base, "work")},
			"up":    {filepath.Join(filepath.Dir(c.base), "tools", "server"), ""},
			"npx":   {"npx", ""},
			"abs":   {"/usr/local/bin/server", "/srv"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: commands and folders (-want +got):\n%s", c.file, diff)
		}
		if s, _ := cfg.Server("local"); !slices.Equal(s.Args, []string{"./data"}) {
			t.Errorf("%s: args %q: the server's own, left as written", c.file, s.Args)
		}
	}
}

// TestParseConfigSyntaxPosition: invalid JSON is reported at the line and
// column of the offending character, wherever it is in the file, and a
// file cut short at its last character (as catalog files are).
func TestParseConfigSyntaxPosition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, want string
	}{
		{"top level", "{\n  \"mcpServers\": {,}\n}", "line 2 column 18: invalid character ','"},
		{"in a server", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}\n", "line 2 column 24: invalid character '}'"},
		{"missing comma", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\" \"args\": []}\n}}", "line 2 column 24: invalid character '\"'"},
		{"cut short", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"}\n", "line 2 column 24: unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("mcp.json", []byte(tc.file))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			if want := "invalid JSON: " + tc.want; !strings.HasPrefix(ce.Problem, want) {
				t.Errorf("problem %q, want it to start with %q", ce.Problem, want)
			}
		})
	}
}

func TestParseConfigCollectsAllErrors(t *testing.T) {
	t.Parallel()
	file := `{"mcpServers": {
  "good": {"command": "x"},
  "one": {"type": "sse", "url": "https://x"},
  "two": {"command": "x", "exposure": "nope", "timeout": "1"},
  "also-good": {"url": "https://example.com/mcp"}
}}`
	cfg, err := ParseConfig("m.json", []byte(file))
	var problems []*ConfigError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *ConfigError", e)
		}
		problems = append(problems, ce)
	}
	var servers []string
	for _, p := range problems {
		servers = append(servers, p.Server)
	}
	if diff := cmp.Diff([]string{"one", "two", "two"}, servers); diff != "" {
		t.Errorf("problems by server (-want +got):\n%s\n%v", diff, err)
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"also-good", "good"}, names); diff != "" {
		t.Errorf("valid servers (-want +got):\n%s", diff)
	}
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	global := filepath.Join(dir, "global.json")
	project := filepath.Join(dir, "project.json")
	write := func(path, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(global, `{"mcpServers": {"shared": {"command": "global"}, "only-global": {"command": "g"}}}`)
	write(project, `{"mcpServers": {"shared": {"command": "project"}, "only-project": {"url": "https://p/mcp"}}}`)
	cfg, err := LoadConfig(global, project)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
		got[s.Name] = s.File
	}
	if diff := cmp.Diff([]string{"only-global", "only-project", "shared"}, names); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if s, _ := cfg.Server("shared"); s.Command != "project" || s.File != project {
		t.Errorf("shared = %+v, want the project's", s)
	}
	if !cmp.Equal(cfg.Files, []string{global, project}) {
		t.Errorf("files = %v", cfg.Files)
	}

	missing := filepath.Join(dir, "missing.json")
	cfg, err = LoadConfig(global, missing)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.File != missing || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
	if len(cfg.Servers) != 2 {
		t.Errorf("the readable file's servers were dropped: %v", cfg.Servers)
	}

	write(project, `{"mcpServers": {"only_global": {"command": "p"}}}`)
	cfg, err = LoadConfig(global, project)
	if err == nil || !strings.Contains(err.Error(), `conflicts with server "only-global"`) || !strings.Contains(err.Error(), global) {
		t.Errorf("folded names across files: %v", err)
	}
	if _, ok := cfg.Server("only_global"); ok {
		t.Errorf("the conflicting server was kept")
	}
}

func TestExposureFor(t *testing.T) {
	t.Parallel()
	s := ServerConfig{Exposure: tool.Deferred, ToolExposure: []ToolExposure{
		{Pattern: "read_*", Exposure: tool.Direct},
		{Pattern: "*_file", Exposure: tool.Hidden},
		{Pattern: "read_file", Exposure: tool.Codemode},
		{Pattern: "a*b*c", Exposure: tool.Hidden},
	}}
	for name, want := range map[string]tool.Exposure{
		"read_file":  tool.Codemode, // exact wins over earlier patterns
		"read_dir":   tool.Direct,
		"write_file": tool.Hidden,
		"abxc":       tool.Hidden,
		"abc":        tool.Hidden,
		"acb":        tool.Deferred,
		"other":      tool.Deferred,
	} {
		if got := s.ExposureFor(name); got != want {
			t.Errorf("ExposureFor(%q) = %s, want %s", name, got, want)
		}
	}
	if got := (ServerConfig{}).ExposureFor("x"); got != tool.Deferred {
		t.Errorf("zero config: %s", got)
	}
}

// TestParseConfigRecordsExpandedValues: the values taken from the
// environment are recorded (defaults written in the file are not), and a
// bad url made of a variable is quoted as written, not with its value.
func TestParseConfigRecordsExpandedValues(t *testing.T) {
	t.Setenv("MCPCLIENT_TEST_SECRET", "ftp://s3cr3t@host")
	t.Setenv("MCPCLIENT_TEST_TOKEN", "tok123")
	os.Unsetenv("MCPCLIENT_TEST_UNSET")
	cfg, err := ParseConfig("mcp.json", []byte(`{"mcpServers": {"s": {"command": "x", "args": ["--t=${MCPCLIENT_TEST_TOKEN}", "${MCPCLIENT_TEST_UNSET:-fallback}"],
		"env": {"K": "${env:MCPCLIENT_TEST_SECRET}"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"MCPCLIENT_TEST_TOKEN": "tok123", "MCPCLIENT_TEST_SECRET": "ftp://s3cr3t@host"}
	if diff := cmp.Diff(want, cfg.Servers[0].Expanded); diff != "" {
		t.Errorf("expanded (-want +got):\n%s", diff)
	}
	_, err = ParseConfig("mcp.json", []byte(`{"mcpServers": {"s": {"url": "${MCPCLIENT_TEST_SECRET}"}}}`))
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), `url "${MCPCLIENT_TEST_SECRET}" (with its variables replaced) is not an http`) {
		t.Errorf("error %v", err)
	}
}
