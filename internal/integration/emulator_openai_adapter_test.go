package integration

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/provider/openai"
)

// oaiAdapter returns toolshelf's Responses or Chat adapter on the
// emulator; zero caps mean the default table's.
func oaiAdapter(t *testing.T, api provider.API, baseURL, model string, caps provider.Capabilities) llm.Model {
	t.Helper()
	retries := 0
	cfg := openai.Config{APIKey: "test", BaseURL: baseURL + "/v1", Model: model, Capabilities: caps, MaxRetries: &retries}
	var (
		m   llm.Model
		err error
	)
	if api == provider.OpenAIResponses {
		m, err = openai.NewResponses(cfg)
	} else {
		m, err = openai.NewChat(cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// oaiRun streams one request and returns the event types (text deltas
// merged into one entry) and the final message.
func oaiRun(t *testing.T, m llm.Model, msgs []llm.Message) ([]llm.EventType, []llm.Event, *llm.Message) {
	t.Helper()
	var (
		types  []llm.EventType
		events []llm.Event
		done   *llm.Message
	)
	for ev, err := range m.Stream(t.Context(), &llm.Request{Messages: msgs}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		events = append(events, ev)
		if n := len(types); n == 0 || types[n-1] != ev.Type || ev.Type != llm.EventTextDelta {
			types = append(types, ev.Type)
		}
		if ev.Type == llm.EventDone {
			done = ev.Message
		}
	}
	if done == nil {
		t.Fatal("no done event")
	}
	return types, events, done
}

var oaiWeatherTool = llm.Tool{Name: "get_weather", Description: "Weather of a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

func oaiHead(prompt string, tools ...llm.Tool) llm.Message {
	return llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text(prompt)}, ToolsAdded: tools}
}

func TestOpenAIAdaptersEndToEnd(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		api   provider.API
		model string
		// exact: breakpoint caching reads the whole earlier prompt;
		// otherwise reads round down to 128-token steps.
		exact bool
	}{
		{"responses gpt-5.6-sol", provider.OpenAIResponses, "gpt-5.6-sol", true},
		{"responses gpt-5.2", provider.OpenAIResponses, "gpt-5.2", false},
		{"chat gpt-5.6-sol", provider.OpenAIChat, "gpt-5.6-sol", true},
		{"chat gpt-5.2", provider.OpenAIChat, "gpt-5.2", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var (
				mu      sync.Mutex
				records []emulator.Record
			)
			// record returns the server's record of request i, which it
			// makes once the answer is written.
			record := func(i int) emulator.Record {
				for range 200 {
					mu.Lock()
					n := len(records)
					mu.Unlock()
					if n > i {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(records) <= i {
					t.Fatalf("no record of request %d", i+1)
				}
				return records[i]
			}
			text := "It is sunny in Paris, 21 degrees, with a light breeze from the west."
			ts := oaiServer(t, emulator.Config{Now: oaiFixedClock,
				Observe: func(r emulator.Record) { mu.Lock(); records = append(records, r); mu.Unlock() },
				Responder: emulator.NewScripted(
					emulator.Reply{Calls: []emulator.Call{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
					emulator.Reply{Text: text},
				)})
			m := oaiAdapter(t, c.api, ts.URL, c.model, provider.Capabilities{})
			msgs := []llm.Message{oaiHead(oaiLongText(300), oaiWeatherTool), llm.UserText("What is the weather in Paris?", 1)}

			// A tool call.
			types, events, msg := oaiRun(t, m, msgs)
			if want := []llm.EventType{llm.EventStart, llm.EventToolCall, llm.EventDone}; !slices.Equal(types, want) {
				t.Fatalf("events %v, want %v", types, want)
			}
			call := events[1].ToolCall
			if call.ID != "call_emu_1_0" || call.Name != "get_weather" || string(call.Arguments) != `{"city":"Paris"}` {
				t.Errorf("tool call %+v", call)
			}
			if msg.StopReason != llm.StopToolUse || msg.Usage == nil || msg.Usage.CacheRead != 0 {
				t.Fatalf("first answer: stop %q, usage %+v", msg.StopReason, msg.Usage)
			}
			first := record(0)
			if msg.Usage.TotalInput() != first.Input || first.Input < 1500 {
				t.Errorf("first usage %+v, the server counted %d input tokens", msg.Usage, first.Input)
			}
			if c.exact && msg.Usage.CacheWrite != first.Input {
				t.Errorf("first request wrote %d tokens, want the whole prompt (%d)", msg.Usage.CacheWrite, first.Input)
			}

			// The result, then a text answer on the same prefix.
			msgs = append(msgs, *msg, llm.Message{Role: llm.RoleToolResult, ToolCallID: call.ID, ToolName: call.Name,
				Content: []llm.Part{llm.Text("Sunny, 21 °C.")}})
			types, events, msg = oaiRun(t, m, msgs)
			if want := []llm.EventType{llm.EventStart, llm.EventTextDelta, llm.EventDone}; !slices.Equal(types, want) {
				t.Fatalf("events %v, want %v", types, want)
			}
			var got strings.Builder
			deltas := 0
			for _, ev := range events {
				if ev.Type == llm.EventTextDelta {
					got.WriteString(ev.Delta)
					deltas++
				}
			}
			if got.String() != text || llm.ContentText(msg.Content, "") != text || deltas < 2 {
				t.Errorf("text %q in %d deltas, message %q; want %q", got.String(), deltas, llm.ContentText(msg.Content, ""), text)
			}
			if msg.StopReason != llm.StopEnd {
				t.Errorf("stop %q", msg.StopReason)
			}
			want := first.Input
			if !c.exact {
				want = 1024 + (first.Input-1024)/128*128
			}
			if msg.Usage.CacheRead != want || msg.Usage.CacheRead == 0 {
				t.Errorf("second request read %d cached tokens, want %d (first prompt %d)", msg.Usage.CacheRead, want, first.Input)
			}
			if second := record(1); msg.Usage.TotalInput() != second.Input || second.CacheRead != want {
				t.Errorf("second usage %+v, server record %+v", msg.Usage, second)
			}
		})
	}
}

func TestOpenAIAdapterToolAdditions(t *testing.T) {
	t.Parallel()
	sol := provider.DefaultTable().Lookup(provider.OpenAIResponses, "gpt-5.6-sol")
	additional := sol
	additional.Anchor = provider.AnchorAdditionalTools
	cases := []struct {
		name  string
		api   provider.API
		model string
		caps  provider.Capabilities
	}{
		{"responses tool_search_output", provider.OpenAIResponses, "gpt-5.6-sol", sol},
		{"responses additional_tools", provider.OpenAIResponses, "gpt-5.6-sol", additional},
		{"chat system tools", provider.OpenAIChat, "kimi-k2.5", provider.Capabilities{}},
	}
	lateTool := llm.Tool{Name: "late_tool", Description: "Late tool.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var (
				mu    sync.Mutex
				tools [][]string
				turns [][]emulator.Turn
			)
			ts := oaiServer(t, emulator.Config{Responder: emulator.ResponderFunc(func(_ context.Context, ex *emulator.Exchange) (*emulator.Reply, error) {
				names := make([]string, len(ex.Tools))
				for i, d := range ex.Tools {
					names[i] = d.Name
				}
				mu.Lock()
				tools, turns = append(tools, names), append(turns, ex.Turns)
				mu.Unlock()
				return &emulator.Reply{Text: "ok"}, nil
			})})
			m := oaiAdapter(t, c.api, ts.URL, c.model, c.caps)
			msgs := []llm.Message{
				oaiHead("base prompt", oaiWeatherTool),
				llm.UserText("hello", 1),
				{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("updated guidance")}, ToolsAdded: []llm.Tool{lateTool}, Timestamp: 2},
			}
			oaiRun(t, m, msgs)
			mu.Lock()
			defer mu.Unlock()
			if want := []string{"get_weather", "late_tool"}; len(tools) != 1 || !slices.Equal(tools[0], want) {
				t.Errorf("tools at the end %v, want %v", tools, want)
			}
			last := turns[0][len(turns[0])-1]
			if last.Role != "system" || last.Text != "updated guidance" {
				t.Errorf("last turn %+v", last)
			}
		})
	}
}
