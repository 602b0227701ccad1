package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/tool"
)

// Name is the codemode tool's name.
const Name = "codemode"

// Parameters is the codemode tool's JSON Schema: {code}.
const Parameters = `{"type":"object","properties":{` +
	`"code":{"type":"string","description":"JavaScript: the body of an async function. Use await, and return the result."}},` +
	`"required":["code"]}`

// Arguments returns the arguments of a codemode call that runs code: what
// a model (or the benchmark's oracle) sends.
func Arguments(code string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Code string `json:"code"`
	}{code})
	return b
}

// Details is the model-invisible part of a codemode result, kept in the
// transcript's tool result (llm.Message.Details): the calls the script
// made, so that a session shows them when it is resumed or read, and the
// metrics log counts them.
type Details struct {
	// Calls are the script's tool calls, in the order it made them.
	Calls []Call `json:"calls"`
	// Searches are the script's searchTools calls, in order.
	Searches []SearchCall `json:"searches,omitempty"`
	// Stored are the values the script stored (store), by key, as JSON;
	// only a script that succeeded has them. Replayed in order they give
	// the session's [Store].
	Stored map[string]json.RawMessage `json:"stored,omitempty"`
	// Logs counts the console lines the script wrote.
	Logs int `json:"logs,omitempty"`
	// Error is why the script failed, if it did.
	Error string `json:"error,omitempty"`
}

// ReadDetails returns the Details of a codemode tool result, and false
// when raw holds none.
func ReadDetails(raw json.RawMessage) (Details, bool) {
	var d Details
	if len(raw) == 0 || json.Unmarshal(raw, &d) != nil || d.Calls == nil {
		return Details{}, false
	}
	return d, true
}

// Tool returns the codemode tool bound to the Runner: model-only (a
// script cannot start a script), input {code}, the Runner's
// [Runner.Description]. A call reaches exactly the servers its code names
// (see [Reach]), so that a runtime waits only for those. Register it in
// the Runner's registry.
func (r *Runner) Tool() tool.Tool {
	return tool.Tool{
		Name:        Name,
		Description: r.desc,
		Parameters:  json.RawMessage(Parameters),
		Exposure:    tool.ModelOnly,
		Handler:     &handler{r: r},
		Reaches:     tool.Reach{Of: reachOf},
	}
}

// Is reports whether t is a codemode tool made by [Runner.Tool], not
// merely a tool of the same name.
func Is(t tool.Tool) bool {
	_, ok := t.Handler.(*handler)
	return ok && t.Name == Name
}

type handler struct{ r *Runner }

// Call runs the script of the arguments' code. A script's failure is an
// error result that says why; Call itself fails only when ctx is done.
func (h *handler) Call(ctx context.Context, raw json.RawMessage) (*tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	code, errText := ReadCode(raw)
	if errText != "" {
		return tool.ErrorResult(errText), nil
	}
	res := h.r.Run(ctx, code)
	if err := ctx.Err(); err != nil && res.Err != nil {
		return nil, err
	}
	return h.r.Result(ctx, res), nil
}

// Result is the codemode tool's result of a script: what the model sees
// (its text, cut to the script's output tokens, and its images) and the
// Details. The values a successful script stored are applied to the
// [Store] of ctx, if any.
func (r *Runner) Result(ctx context.Context, res *Result) *tool.Result {
	out := tool.TextResult(r.clip(res.Text(), res.outputTokens))
	for _, c := range res.Content {
		if c.MIMEType != "" {
			out.Content = append(out.Content, c)
		}
	}
	out.IsError = res.Err != nil
	d := Details{Calls: res.Calls, Searches: res.Searches, Logs: len(res.Logs)}
	if d.Calls == nil {
		d.Calls = []Call{}
	}
	if res.Err != nil {
		d.Error = res.Err.Error()
	} else if len(res.Stored) > 0 {
		d.Stored = res.Stored
		if st := StoreOf(ctx); st != nil {
			st.Apply(res.Stored)
		}
	}
	out.Details = d
	return out
}

// ReadCode returns the code of a codemode call's arguments, or the
// error text to answer when they hold none.
func ReadCode(raw json.RawMessage) (string, string) {
	var a struct {
		Code *string `json:"code"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Code == nil {
		return "", `codemode needs {"code": "<JavaScript>"}: the body of an async function, such as {"code": "const r = await tools.some_tool({}); return r;"}`
	}
	if strings.TrimSpace(*a.Code) == "" {
		return "", `the code is empty: write the body of an async function that calls tools and returns the answer, such as {"code": "const r = await tools.some_tool({}); return r;"}`
	}
	return *a.Code, ""
}

// mcpName matches the MCP names a script may contain: tools
// (mcp__server__tool) and namespaces (mcp__server).
var mcpName = regexp.MustCompile(`mcp__[A-Za-z0-9_]+`)

// discovery matches the globals whose results depend on every server's
// tools.
var discovery = regexp.MustCompile(`\b(searchTools|describeNamespace|describeTool)\b`)

// Reach returns what a script reaches, read from its code as the
// reference reads it: every tool on the shelf when it mentions
// searchTools, describeTool or describeNamespace (their results depend on
// every server), else the MCP tool and namespace names it contains, each
// once, in order.
func Reach(code string) tool.Reach {
	if discovery.MatchString(code) {
		return tool.Reach{All: true}
	}
	var names []string
	for _, n := range mcpName.FindAllString(code, -1) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return tool.Reach{Names: names}
}

// reachOf is the codemode tool's reach of one call.
func reachOf(args json.RawMessage) tool.Reach {
	code, errText := ReadCode(bytes.TrimSpace(args))
	if errText != "" {
		return tool.Reach{}
	}
	return Reach(code)
}
