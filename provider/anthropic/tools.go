package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
)

// PlaceholderToolName is the deferred tool declared in every request of the
// changes class. It is never added, so the model never sees it; declaring
// it from the first request puts the scaffolding Anthropic renders for
// deferred tools into the cached prefix, so the first real tool change
// does not invalidate the cache.
const PlaceholderToolName = "__toolshelf_deferred_placeholder__"

// placeholderDescription and placeholderSchema complete the placeholder.
const (
	placeholderDescription = "Reserved placeholder. Never available. Never call this."
	placeholderSchema      = `{"type":"object","properties":{},"required":[]}`
)

// toolParam converts a declaration. The schema is passed through as raw
// JSON (param.Override), so its keys keep their order and no field the SDK
// does not model is lost; the SDK's encoder only compacts it.
func toolParam(t llm.Tool) (*sdk.BetaToolParam, error) {
	schema, err := inputSchema(t)
	if err != nil {
		return nil, err
	}
	p := &sdk.BetaToolParam{
		Name:        t.Name,
		InputSchema: param.Override[sdk.BetaToolInputSchemaParam](schema),
	}
	if t.Description != "" {
		p.Description = param.NewOpt(t.Description)
	}
	return p, nil
}

// inputSchema returns a declaration's parameters as the input_schema to
// send: the declared bytes, or an empty object schema when there are none.
func inputSchema(t llm.Tool) (json.RawMessage, error) {
	raw := bytes.TrimSpace(t.Parameters)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(adapt.EmptySchema), nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("anthropic: tool %q: its parameters are not valid JSON: fix the tool's JSON Schema", t.Name)
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("anthropic: tool %q: its parameters are not a JSON object: declare a JSON Schema object such as %s", t.Name, adapt.EmptySchema)
	}
	return json.RawMessage(raw), nil
}

// placeholderTool returns the changes class's deferred placeholder.
func placeholderTool() *sdk.BetaToolParam {
	return &sdk.BetaToolParam{
		Name:         PlaceholderToolName,
		Description:  param.NewOpt(placeholderDescription),
		InputSchema:  param.Override[sdk.BetaToolInputSchemaParam](json.RawMessage(placeholderSchema)),
		DeferLoading: param.NewOpt(true),
	}
}
