package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/internal/standin"
	"github.com/toolshelf/toolshelf/tool"
)

// passedBytes bounds what a script passes from one step's result to the
// next step's call: the first line of the result, cut to this length.
const passedBytes = 160

// codemodeScript returns the oracle's script for a task (the codemode
// strategy), as a model that knows the task's tools would write it: for
// each step, searchTools with the step's queries in order until one
// returns the step's tool (a step whose queries never do is given up, as
// the search strategy's oracle gives it up), then a call of the tool with
// arguments that satisfy its schema (standin.ExampleArguments), the
// previous step's result passed along in its prose arguments; a call
// that fails is noted and the script goes on. It returns a line per step:
// the first line of the step's result, or why the step has none.
func codemodeScript(steps []Step, tools []tool.Tool) string {
	var b strings.Builder
	b.WriteString(`async function find(name, ...queries) {
  for (const q of queries) if ((await searchTools(q)).some(t => t.name === name)) return true;
  return false;
}
const first = r => (typeof r === "string" ? r : JSON.stringify(r)).split("\n")[0].slice(0, ` + fmt.Sprint(passedBytes) + `);
const lines = [];
let previous = "";
`)
	for i, st := range steps {
		t := tools[i]
		name, _ := json.Marshal(t.Name)
		queries := make([]string, len(st.Queries))
		for j, q := range st.Queries {
			b, _ := json.Marshal(q)
			queries[j] = string(b)
		}
		fmt.Fprintf(&b, "if (await find(%s, %s)) {\n", name, strings.Join(queries, ", "))
		fmt.Fprintf(&b, "  try {\n    previous = first(await %s(%s));\n    lines.push(%s + \": \" + previous);\n",
			scriptFunction(t.Name), scriptArguments(t.Parameters, i > 0), name)
		fmt.Fprintf(&b, "  } catch (e) {\n    lines.push(%s + \" failed: \" + e.message);\n  }\n", name)
		fmt.Fprintf(&b, "} else lines.push(%s + \": not found\");\n", name)
	}
	b.WriteString(`return lines.join("\n");`)
	return b.String()
}

// scriptFunction is how a script names a tool's function: tools.<name>
// when the name is an identifier, else tools["<name>"].
func scriptFunction(name string) string {
	if codemode.Identifier(name) == name {
		return "tools." + name
	}
	b, _ := json.Marshal(name)
	return "tools[" + string(b) + "]"
}

// scriptArguments writes a call's arguments as a JavaScript object
// literal: standin.ExampleArguments of the schema, with, when pass is
// set, each prose argument (see prose) set to the previous step's result
// instead.
func scriptArguments(schema json.RawMessage, pass bool) string {
	var args map[string]json.RawMessage
	if json.Unmarshal(standin.ExampleArguments(schema), &args) != nil || len(args) == 0 {
		return "{}"
	}
	free := map[string]bool{}
	if pass {
		free = prose(schema)
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		key, _ := json.Marshal(k)
		v := string(args[k])
		if free[k] {
			v = "previous"
		}
		parts[i] = string(key) + ": " + v
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// proseWords are the words of an argument's name that say it takes text
// a person reads, where a script puts what an earlier call returned.
var proseWords = []string{"body", "comment", "content", "description", "message", "note", "query", "summary", "text", "title"}

// prose returns the top-level properties of a schema that take any string
// (no enum, const, default, format, pattern or length bounds) and whose
// name has one of proseWords as a word (snake_case, kebab-case or
// camelCase).
func prose(schema json.RawMessage) map[string]bool {
	var s struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	out := map[string]bool{}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	for name, p := range s.Properties {
		if string(p["type"]) != `"string"` || !slices.ContainsFunc(nameWords(name), func(w string) bool { return slices.Contains(proseWords, w) }) {
			continue
		}
		constrained := false
		for _, k := range []string{"enum", "const", "default", "format", "pattern", "minLength", "maxLength", "$ref", "anyOf", "oneOf", "allOf"} {
			if _, ok := p[k]; ok {
				constrained = true
			}
		}
		if !constrained {
			out[name] = true
		}
	}
	return out
}

// nameWords splits a name into lower-case words at _, - and where an
// upper-case letter follows a lower-case letter or a digit.
func nameWords(name string) []string {
	var words []string
	var w strings.Builder
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-':
			words, prevLower = appendWord(words, &w), false
			continue
		case unicode.IsUpper(r) && prevLower:
			words = appendWord(words, &w)
		}
		w.WriteRune(unicode.ToLower(r))
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	return appendWord(words, &w)
}

func appendWord(words []string, w *strings.Builder) []string {
	if w.Len() > 0 {
		words = append(words, w.String())
		w.Reset()
	}
	return words
}
