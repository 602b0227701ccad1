package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolshelf/toolshelf/tool"
)

// fuzzEnv is the environment the fuzz targets expand variables from: a
// value that is empty, and one that looks like a reference (values are
// never expanded again).
var fuzzEnv = map[string]string{
	"HOME":  "/home/fuzz",
	"TOKEN": "s3cr3t",
	"EMPTY": "",
	"REF":   "${TOKEN}",
	"_x1":   "a}b",
}

func fuzzLookup(name string) (string, bool) {
	v, ok := fuzzEnv[name]
	return v, ok
}

// referenceRef is a ${...} reference as the documentation describes it:
// everything up to the first closing brace.
var referenceRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// referenceExpand is expandVars written from its documentation, with a
// regular expression: each ${NAME}, ${env:NAME} or ${NAME:-default} is
// replaced by the variable's value (or the default); a reference whose
// name is not an environment variable name, or to a variable that is not
// set and has no default, is an error and expands to nothing; an
// unclosed ${ is an error and stays as written. It returns how many
// problems there were.
func referenceExpand(s string, lookup func(string) (string, bool)) (string, int) {
	var b strings.Builder
	problems, last := 0, 0
	for _, m := range referenceRef.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:m[0]])
		last = m[1]
		name, def, hasDef := strings.Cut(s[m[2]:m[3]], ":-")
		name = strings.TrimPrefix(name, "env:")
		if !envNamePattern.MatchString(name) {
			problems++
			continue
		}
		if v, ok := lookup(name); ok {
			b.WriteString(v)
		} else if hasDef {
			b.WriteString(def)
		} else {
			problems++
		}
	}
	rest := s[last:]
	if strings.Contains(rest, "${") {
		problems++
	}
	b.WriteString(rest)
	return b.String(), problems
}

// FuzzExpandVars compares ${VAR} expansion with the reference written
// from its documentation: the same text, an error exactly when the
// reference finds a problem, one "; "-separated message per problem, and
// the text unchanged when it holds no "${".
func FuzzExpandVars(f *testing.F) {
	for _, s := range []string{
		"", "plain", "$HOME", "${HOME}", "${env:HOME}/x", "${MISSING}", "${MISSING:-dflt}", "${HOME:-dflt}",
		"${EMPTY}|${EMPTY:-d}", "${REF}", "${_x1}", "a${TOKEN}b${TOKEN}c", "${", "x${HOME", "${}", "${env:}",
		"${1A}", "${A B}", "${:-x}", "${env:env:HOME}", "${A:-b:-c}", "${A:-${B}}", "${${HOME}}", "}}${HOME}}{",
		"Bearer ${env:TOKEN}", "https://h/mcp?key=${TOKEN}&x=${MISSING:-1}", "${HOME}${", "\xff${HOME}\xfe",
		"${ HOME }", "${HOME\x00}", strings.Repeat("${HOME}", 200), strings.Repeat("${", 200),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := expandVars(s, fuzzLookup)
		want, problems := referenceExpand(s, fuzzLookup)
		if got != want {
			t.Fatalf("expandVars(%q) = %q, want %q", s, got, want)
		}
		if (err != nil) != (problems > 0) {
			t.Fatalf("expandVars(%q): error %v, want %d problems", s, err, problems)
		}
		if err != nil && strings.Count(err.Error(), "; ")+1 < problems {
			t.Fatalf("expandVars(%q): error %q reports fewer than %d problems", s, err, problems)
		}
		if !strings.Contains(s, "${") && (got != s || err != nil) {
			t.Fatalf("expandVars(%q) = %q, %v: text without ${ changed", s, got, err)
		}
	})
}

// encodeConfig writes servers back as an mcp.json file, in the form
// ParseConfig reads: toolExposure in order (repeated patterns included),
// the timeout in seconds.
func encodeConfig(t *testing.T, servers []ServerConfig) []byte {
	t.Helper()
	js := func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatalf("encoding %v: %v", v, err)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i, s := range servers {
		if i > 0 {
			b.WriteString(",")
		}
		fields := []string{`"type":` + js(s.Type)}
		add := func(key string, v any) { fields = append(fields, js(key)+":"+js(v)) }
		switch s.Type {
		case "stdio":
			add("command", s.Command)
			if s.Args != nil {
				add("args", s.Args)
			}
			if s.Env != nil {
				add("env", s.Env)
			}
			add("cwd", s.Cwd)
		case "http":
			add("url", s.URL)
			if s.Headers != nil {
				add("headers", s.Headers)
			}
		}
		add("exposure", s.Exposure)
		if s.ToolExposure != nil {
			var te []string
			for _, e := range s.ToolExposure {
				te = append(te, js(e.Pattern)+":"+js(e.Exposure))
			}
			fields = append(fields, `"toolExposure":{`+strings.Join(te, ",")+"}")
		}
		add("description", s.Description)
		add("enabled", !s.Disabled)
		add("alwaysLoad", s.AlwaysLoad)
		fields = append(fields, `"timeout":`+strconv.FormatFloat(s.Timeout.Seconds(), 'g', -1, 64))
		if s.Briefs != nil {
			add("briefs", s.Briefs)
		}
		b.WriteString(js(s.Name) + ":{" + strings.Join(fields, ",") + "}")
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// hasReference reports whether any value of a server that ParseConfig
// expands still holds "${" (a default such as ${A:-${B}} leaves one):
// written back, it would be expanded again.
func hasReference(s ServerConfig) bool {
	vals := append([]string{s.Command, s.Cwd, s.URL}, s.Args...)
	vals = slices.AppendSeq(vals, maps.Values(s.Env))
	vals = slices.AppendSeq(vals, maps.Values(s.Headers))
	return slices.ContainsFunc(vals, func(v string) bool { return strings.Contains(v, "${") })
}

// isHTTPURL reports whether s is an http or https address with a host.
func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

var validExposures = []tool.Exposure{tool.Deferred, tool.Direct, tool.Codemode, tool.Hidden}

// FuzzParseConfig parses arbitrary mcp.json files, expanding variables
// from a fixed environment. It must not panic. Every problem is a
// *ConfigError naming the file, what is wrong and how to fix it. The
// servers it returns are sorted, validly and distinctly named (also with -
// and _ folded together), and complete: a command for stdio, an http or
// https address for HTTP, known exposures, a positive timeout, the values
// of the variables they expanded (for redaction). Written back as an
// mcp.json file, they parse to themselves without problems.
func FuzzParseConfig(f *testing.F) {
	if data, err := os.ReadFile("../examples/mcp.json"); err == nil {
		f.Add(data)
	} else {
		f.Fatal(err)
	}
	for _, s := range []string{
		``, `[]`, `{}`, "\ufeff{\"mcpServers\":{}}", `{"servers":{}}`, `{"mcpServers":{},"servers":{}}`, `{"mcpServers":null}`,
		`{"mcpServers":{"a":{"command":"npx","args":["-y","pkg","${HOME}/x"],"env":{"K":"${TOKEN}","L":"${MISSING:-d}"},"cwd":"~/w"}}}`,
		`{"mcpServers":{"r":{"url":"https://h.example/mcp?k=${TOKEN}","headers":{"Authorization":"Bearer ${env:TOKEN}"},"type":"streamable-http"}}}`,
		`{"mcpServers":{"a-b":{"command":"x"},"a_b":{"command":"y"},"a-b":{"command":"z"}}}`,
		`{"mcpServers":{"s":{"command":"x","exposure":"direct","toolExposure":{"read_*":"deferred","*":"hidden","read_*":"codemode","":"direct","w":5},"timeout":0.5,"enabled":false,"alwaysLoad":true,"briefs":{"t":"Do t"}}}}`,
		`{"mcpServers":{"s":{"command":"x","timeout":1e-12},"t":{"command":"x","timeout":-1},"u":{"command":"x","timeout":"60"},"v":{"command":"x","timeout":1e7}}}`,
		`{"mcpServers":{"s":{"type":"sse","url":"https://x/sse"},"t":{"url":"ftp://x"},"u":{"url":"https://"},"v":{"url":"${MISSING}"},"w":{"type":"stdio","url":"https://x"}}}`,
		`{"mcpServers":{"s":{"command":"x","disabled":true,"transport":"stdio","envFile":".env","autoApprove":[]}}}`,
		`{"mcpServers":{"s":{"command":["x"],"args":"x","env":[],"enabled":"yes","description":5}}}`,
		`{"mcpServers":{"bad name":{"command":"x"},"":{"command":"x"},"ü":{"command":"x"}}}`,
		`{"$schema":"x","inputs":[],"mcpServers":{"s":{"command":"${A:-${B}}","args":["${"]}}}`,
		`{"mcpServers":{"s":{"command":"x"}}} trailing`,
		"{\n  \"mcpServers\": {,}\n}",
	} {
		f.Add([]byte(s))
	}
	const file = "mcp.json"
	// Values written back are literal: nothing is expanded the second time.
	opts := []cmp.Option{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(ServerConfig{}, "Expanded"), cmp.Comparer(func(a, b time.Duration) bool {
		d := a - b // the timeout goes through a float of seconds
		return d >= -1 && d <= 1
	})}
	parse := func(data []byte) ([]ServerConfig, []error) {
		p := &parser{file: file, lookup: fuzzLookup}
		servers := p.parse(data)
		slices.SortFunc(servers, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
		return servers, p.errs
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, errs := parse(data)
		for _, err := range errs {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != file || ce.Problem == "" || ce.Fix == "" {
				t.Fatalf("problem %q (%#v) does not name the file, the problem and the fix", err, err)
			}
		}
		folded := map[string]bool{}
		for i, s := range servers {
			if i > 0 && servers[i-1].Name >= s.Name {
				t.Fatalf("servers out of order: %q before %q", servers[i-1].Name, s.Name)
			}
			if !serverNamePattern.MatchString(s.Name) || folded[foldName(s.Name)] || s.File != file {
				t.Fatalf("server %q: invalid or repeated name, or file %q", s.Name, s.File)
			}
			folded[foldName(s.Name)] = true
			switch {
			case s.Type == "stdio" && s.Command == "":
				t.Fatalf("server %q: stdio without a command", s.Name)
			case s.Type == "http" && !isHTTPURL(s.URL):
				t.Fatalf("server %q: http with url %q", s.Name, s.URL)
			case s.Type != "stdio" && s.Type != "http":
				t.Fatalf("server %q: type %q", s.Name, s.Type)
			}
			if s.Timeout <= 0 {
				t.Fatalf("server %q: timeout %v", s.Name, s.Timeout)
			}
			if !slices.Contains(validExposures, s.Exposure) {
				t.Fatalf("server %q: exposure %q", s.Name, s.Exposure)
			}
			for name, v := range s.Expanded {
				if want, ok := fuzzEnv[name]; !ok || v != want {
					t.Fatalf("server %q: expanded %s as %q, but the environment has %q (%v)", s.Name, name, v, want, ok)
				}
			}
			for _, te := range s.ToolExposure {
				if te.Pattern == "" || !slices.Contains(validExposures, te.Exposure) {
					t.Fatalf("server %q: tool exposure %+v", s.Name, te)
				}
			}
		}

		servers = slices.DeleteFunc(servers, hasReference)
		written := encodeConfig(t, servers)
		again, errs := parse(written)
		if len(errs) > 0 {
			t.Fatalf("the parsed servers written back have problems: %v\n%s", errors.Join(errs...), written)
		}
		if diff := cmp.Diff(servers, again, opts...); diff != "" {
			t.Fatalf("the parsed servers written back read differently (-first +second):\n%s\n%s", diff, written)
		}
	})
}
