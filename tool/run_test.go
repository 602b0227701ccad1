package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/tool"
)

func handlerOf(f func(ctx context.Context, args json.RawMessage) (*tool.Result, error)) tool.Tool {
	return tool.Tool{Name: "t", Handler: tool.HandlerFunc(f)}
}

func TestRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("a panic is an error with its stack", func(t *testing.T) {
		res, err := tool.Run(ctx, handlerOf(func(context.Context, json.RawMessage) (*tool.Result, error) { panic("kaboom") }), nil)
		var p *tool.PanicError
		if !errors.As(err, &p) || res != nil || p.Tool != "t" || p.Value != "kaboom" || !strings.Contains(string(p.Stack), "tool_test.TestRun") {
			t.Fatalf("Run = %v, %v (%+v)", res, err, p)
		}
		if err.Error() != `tool "t" panicked: kaboom` {
			t.Errorf("error text %q", err)
		}
	})
	t.Run("nil is an empty result", func(t *testing.T) {
		res, err := tool.Run(ctx, handlerOf(func(context.Context, json.RawMessage) (*tool.Result, error) { return nil, nil }), nil)
		if err != nil || res == nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "" {
			t.Fatalf("Run = %+v, %v", res, err)
		}
	})
	t.Run("a failure after the context ended is a cancellation", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := tool.Run(cctx, handlerOf(func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) { return nil, ctx.Err() }), nil)
		if !errors.Is(err, tool.ErrCancelled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v", err)
		}
	})
	t.Run("a failure is the handler's", func(t *testing.T) {
		down := errors.New("backend down")
		_, err := tool.Run(ctx, handlerOf(func(context.Context, json.RawMessage) (*tool.Result, error) { return nil, down }), nil)
		if err != down {
			t.Fatalf("Run = %v", err)
		}
	})
	t.Run("no handler", func(t *testing.T) {
		if _, err := tool.Run(ctx, tool.Tool{Name: "stub"}, nil); err != tool.ErrNoHandler {
			t.Fatalf("Run = %v", err)
		}
	})
}

func TestCall(t *testing.T) {
	t.Parallel()
	var got []string
	tl := tool.Tool{Name: "t", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			got = append(got, string(args))
			return tool.TextResult("ok"), nil
		})}
	var v tool.Validator
	for _, args := range []string{"", "  ", ` {"n":1} `} {
		if res, err := v.Call(context.Background(), tl, json.RawMessage(args)); err != nil || res.Content[0].Text != "ok" {
			t.Errorf("Call(%q) = %+v, %v", args, res, err)
		}
	}
	if strings.Join(got, " ") != `{} {} {"n":1}` {
		t.Errorf("the handler got %q", got)
	}
	_, err := v.Call(context.Background(), tl, json.RawMessage(`{"n":"one"}`))
	var invalid *tool.ArgumentsError
	if !errors.As(err, &invalid) || !tool.RefusedArguments(err) || invalid.Problem != "at /n: got string, want integer" || len(got) != 3 {
		t.Errorf("Call with a string for an integer: %v (ran %d times)", err, len(got))
	}
	if tool.RefusedArguments(errors.New("backend down")) {
		t.Error("a handler's failure counts as refused arguments")
	}
}

// TestValidateByTheDeclaredDraft checks arguments against schemas as
// their drafts define them.
func TestValidateByTheDeclaredDraft(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, schema string
		valid        []string
		invalid      []string
	}{
		{"draft-04 exclusive bound", pdfSchema, []string{`{"page":1}`, `{"page":0.5}`}, []string{`{"page":0}`, `{"page":-1}`, `{}`}},
		{"draft-07 keyword beside $ref",
			`{` + draft07 + `"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","maxLength":1}}}`,
			[]string{`{"a":"x"}`}, []string{`{"a":"long"}`, `{"a":1}`}},
		{"draft-07 definitions", `{` + draft07 + `"type":"object","properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`,
			[]string{`{"a":"x"}`}, []string{`{"a":1}`}},
		{"draft-07 dependencies", `{` + draft07 + `"type":"object","dependencies":{"a":["b"],"c":{"required":["d"]}}}`,
			[]string{`{"a":1,"b":2}`, `{"c":1,"d":2}`, `{}`}, []string{`{"a":1}`, `{"c":1}`}},
		{"draft-07 array items", `{` + draft07 + `"type":"object","properties":{"p":{"items":[{"type":"string"}],"additionalItems":false}}}`,
			[]string{`{"p":["x"]}`}, []string{`{"p":[1]}`, `{"p":["x","y"]}`}},
		{"draft-07 asserts format", `{` + draft07 + `"type":"object","properties":{"e":{"type":"string","format":"email"}}}`,
			[]string{`{"e":"a@example.com"}`}, []string{`{"e":"nobody"}`}},
		{"2020-12 annotates format", `{"type":"object","properties":{"e":{"type":"string","format":"email"}}}`,
			[]string{`{"e":"a@example.com"}`, `{"e":"nobody"}`}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var v tool.Validator
			tl := tool.Tool{Name: "t", Parameters: json.RawMessage(tt.schema)}
			for _, args := range tt.valid {
				if err := v.Validate(context.Background(), tl, []byte(args)); err != nil {
					t.Errorf("%s refused: %v", args, err)
				}
			}
			for _, args := range tt.invalid {
				if err := v.Validate(context.Background(), tl, []byte(args)); !tool.RefusedArguments(err) {
					t.Errorf("%s accepted (%v)", args, err)
				}
			}
		})
	}
}

// TestDraft04SchemaRegisters: the PDF reader's tool registers, and the
// registry keeps its schema as declared.
func TestDraft04SchemaRegisters(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	if err := r.Register(tool.Tool{Name: "read_page", Parameters: json.RawMessage(pdfSchema)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Get("read_page"); string(got.Parameters) != pdfSchema {
		t.Errorf("registered %s", got.Parameters)
	}
}
