package openai

import (
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
)

// How schemas pass through the SDK: the SDK declares a tool's parameters
// as map[string]any, which would be written with sorted keys, and an
// extra field set with SetExtraFields goes through encoding/json with HTML
// escaping. Instead each tool object is written here, the declaration's
// schema embedded as the bytes the transcript holds (compacted, key order
// and characters kept), and handed to the SDK with param.Override, which
// makes the param struct marshal as exactly those bytes.

// responsesFunction is a Responses function tool on the wire.
type responsesFunction struct {
	Type         string          `json:"type"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Parameters   json.RawMessage `json:"parameters"`
	Strict       bool            `json:"strict"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
}

// responsesTool converts a declaration into a Responses function tool;
// deferred marks it defer_loading, as a tool_search_output carries it.
func responsesTool(t llm.Tool, deferred bool) *responses.FunctionToolParam {
	f := param.Override[responses.FunctionToolParam](adapt.JSON(responsesFunction{
		Type: "function", Name: t.Name, Description: t.Description, Parameters: adapt.CompactSchema(t), DeferLoading: deferred,
	}))
	return &f
}

// responsesTools converts declarations into tools for the top-level field
// or an additional_tools item.
func responsesTools(ts []llm.Tool) []responses.ToolUnionParam {
	var out []responses.ToolUnionParam
	for _, t := range ts {
		out = append(out, responses.ToolUnionParam{OfFunction: responsesTool(t, false)})
	}
	return out
}

// chatFunction is a Chat Completions function tool on the wire.
type chatFunction struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// chatToolJSON writes a declaration as a Chat Completions function tool.
func chatToolJSON(t llm.Tool) json.RawMessage {
	f := chatFunction{Type: "function"}
	f.Function.Name, f.Function.Description, f.Function.Parameters = t.Name, t.Description, adapt.CompactSchema(t)
	return adapt.JSON(f)
}

// chatTools converts declarations into the top-level tools field.
func chatTools(ts []llm.Tool) []openai.ChatCompletionToolUnionParam {
	var out []openai.ChatCompletionToolUnionParam
	for _, t := range ts {
		f := param.Override[openai.ChatCompletionFunctionToolParam](chatToolJSON(t))
		out = append(out, openai.ChatCompletionToolUnionParam{OfFunction: &f})
	}
	return out
}
