package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/transcript"
)

// Plan is a transcript arranged for one request of a tool support class:
// the head (system text and top-level tools) and the conversation after
// it, with every later system message turned into what the class can say
// in place. Adapters translate a Plan into their wire format and add only
// what is theirs (placeholder tools, cache markers, call ids).
//
// Plans of consecutive requests of one session extend each other: for the
// changes and bridge classes System and Tools never change and Items only
// grow; for additions they do except at the first request after a removal
// or redefinition, which promotes the current set to Tools once; text and
// none rewrite Tools (none also System) whenever the tools change.
type Plan struct {
	// Class is the class rendered: the requested one, or the fallback the
	// transcript or the capabilities forced (see Build).
	Class llm.ToolSupport
	// System is the head's text.
	System string
	// Tools is the top-level tool list, in order.
	Tools []llm.Tool
	// Items are the conversation after the head, in transcript order.
	Items []Item
	// UpdatesAsUser reports that updates must travel as user text, because
	// the model takes no system text mid-conversation (bridge only).
	UpdatesAsUser bool
}

// Item is one message after the head: a conversation message or an update.
type Item struct {
	// Index is the message's position in the transcript, a stable seed for
	// identifiers derived from it.
	Index int
	// Message is a user, assistant or tool result message; nil for an
	// update. In bridge plans, assistant calls of tools the head does not
	// declare are already wrapped in call_tool.
	Message *llm.Message
	// Update is a later system message as the class renders it; nil for
	// a conversation message.
	Update *Update
}

// Update is a later system message as a class renders it in place. An
// update with nothing to say is left out of the plan.
type Update struct {
	// Text is what the model reads: the update's text and section
	// patches, and in bridge plans the loaded tools' definitions.
	Text string
	// Added are tools declared from here on: every addition for changes,
	// new ones after the last promotion for additions.
	Added []llm.Tool
	// Removed names tools withdrawn from here on (changes only); a name
	// removed and re-added in one message is a redefinition and appears
	// only in Added.
	Removed []string
}

// Build arranges a transcript for a request under the given capabilities.
// The class falls back when the transcript or the model cannot carry it:
// every class but bridge becomes none without mid-conversation text or
// when a legacy replace message follows the head; changes becomes text
// when the head declares no tools, because Anthropic refuses a request
// whose every tool is deferred.
//
// A tool call without a result (a session written before runs answered
// the calls a killed run left open) is given one saying it was
// interrupted ([transcript.CloseCalls]), since every API refuses a
// request that carries it. Every declaration's schema is planned as
// [tool.RenderSchema] renders it, in JSON Schema 2020-12, the draft every
// provider reads: the transcript keeps the schema as declared. A
// declaration that fails [tool.CheckDefinition] (a transcript saved
// before the check refused its tool, or edited by hand) is planned as
// [Refused] declares it: a provider would reject the whole request, and
// the transcript would keep declaring it on every request.
func Build(msgs []llm.Message, caps Capabilities) Plan {
	msgs = transcript.CloseCalls(sendable(msgs), interrupted)
	class := caps.Tools
	lateReplace := transcript.LateReplace(msgs)
	head, hasHead := transcript.Leading(msgs)
	switch {
	case lateReplace:
		class = llm.ToolsNone
	case class == llm.ToolsBridge:
	case !caps.MidConversationText:
		class = llm.ToolsNone
	case class == llm.ToolsChanges && len(head.ToolsAdded) == 0:
		class = llm.ToolsText
	case class != llm.ToolsChanges && class != llm.ToolsAdditions && class != llm.ToolsText:
		class = llm.ToolsNone
	}
	p := Plan{Class: class}
	if class == llm.ToolsNone {
		// The collapsed head: the replay of every system message.
		if h, ok := transcript.CurrentSystemMessage(msgs); ok {
			p.System = transcript.SystemText(&h)
			p.Tools = h.ToolsAdded
		}
		p.addMessages(msgs, nil)
		return p
	}
	rest := 0
	if hasHead {
		p.System = transcript.SystemText(&head)
		rest = 1
	}
	switch class {
	case llm.ToolsChanges:
		p.Tools = slices.Clone(head.ToolsAdded)
		p.addMessages(msgs[rest:], changesUpdate)
	case llm.ToolsText:
		p.Tools = transcript.CurrentTools(msgs)
		p.addMessages(msgs[rest:], textUpdate)
	case llm.ToolsAdditions:
		p.buildAdditions(msgs, rest)
	case llm.ToolsBridge:
		p.buildBridge(msgs, rest, head.ToolsAdded)
		p.UpdatesAsUser = !caps.MidConversationText
	}
	for i := range p.Items {
		p.Items[i].Index += rest
	}
	return p
}

// interrupted answers a call that has no result.
func interrupted(c llm.ToolCall) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
		Content: []llm.Part{llm.Text(transcript.InterruptedText)}}
}

// RefusedDescription is the description of a declaration [Refused]
// stands in for.
const RefusedDescription = "Unavailable: this tool's definition is one providers reject, so it was withdrawn. Do not call it."

// Refused returns what a plan declares instead of t when t fails
// [tool.CheckDefinition]: the same name (later removals, calls and
// results still refer to it), [RefusedDescription] and an object schema
// without properties. It depends on the name only, so the requests of a
// session stay byte-stable.
func Refused(t llm.Tool) llm.Tool {
	return llm.Tool{Name: t.Name, Description: RefusedDescription, Parameters: json.RawMessage(adapt.EmptySchema)}
}

// sendable returns msgs with every declaration in the form providers
// take: its schema as [tool.RenderSchema] renders it (2020-12, what older
// drafts write translated), and a declaration that fails the check
// replaced by its [Refused] stand-in. It returns msgs itself when nothing
// changes, and otherwise a copy (msgs is not modified).
func sendable(msgs []llm.Message) []llm.Message {
	var out []llm.Message
	for i := range msgs {
		var added []llm.Tool
		for j, t := range msgs[i].ToolsAdded {
			send := t
			if tool.CheckDefinition(t.Description, t.Parameters) != nil {
				send = Refused(t)
			} else if r, err := tool.RenderSchema(t.Parameters); err == nil && !bytes.Equal(r.Schema, t.Parameters) {
				send.Parameters = r.Schema
			} else {
				continue
			}
			if added == nil {
				added = slices.Clone(msgs[i].ToolsAdded)
			}
			added[j] = send
		}
		if added == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs)
		}
		out[i].ToolsAdded = added
	}
	if out == nil {
		return msgs
	}
	return out
}

// addMessages appends the conversation messages and, through render, the
// updates of msgs; a nil render drops updates.
func (p *Plan) addMessages(msgs []llm.Message, render func(i int, m *llm.Message) *Update) {
	for i := range msgs {
		m := &msgs[i]
		if m.Role != llm.RoleSystem {
			p.Items = append(p.Items, Item{Index: i, Message: m})
			continue
		}
		if render == nil {
			continue
		}
		if u := render(i, m); u != nil && (u.Text != "" || len(u.Added) > 0 || len(u.Removed) > 0) {
			p.Items = append(p.Items, Item{Index: i, Update: u})
		}
	}
}

func textUpdate(_ int, m *llm.Message) *Update {
	return &Update{Text: transcript.RenderUpdate(m)}
}

func changesUpdate(_ int, m *llm.Message) *Update {
	return &Update{Text: transcript.RenderUpdate(m), Added: slices.Clone(m.ToolsAdded), Removed: withdrawn(m)}
}

// withdrawn returns the names an update removes and does not re-add in the
// same message (that is a redefinition), each once, in order.
func withdrawn(m *llm.Message) []string {
	var out []string
	for _, r := range m.ToolsRemoved {
		if !slices.ContainsFunc(m.ToolsAdded, func(t llm.Tool) bool { return t.Name == r.Name }) &&
			!slices.Contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	return out
}

// buildAdditions renders the additions class with one promotion per
// removal: the last system message that removes an available tool or
// redefines one marks the promotion point; the tools available after it
// are the top-level list, and only additions after it are anchored in
// place. Until the next removal, later requests extend this one.
func (p *Plan) buildAdditions(msgs []llm.Message, rest int) {
	promoted, promotedTools := transcript.LastNonAdditive(msgs)
	if promoted < rest {
		promoted = -1 // the head itself is where the conversation starts
	}
	if promoted < 0 {
		if rest > 0 {
			p.Tools = slices.Clone(msgs[0].ToolsAdded)
		}
	} else {
		p.Tools = promotedTools
	}
	loaded := map[string]llm.Tool{}
	for _, t := range p.Tools {
		loaded[t.Name] = t
	}
	p.addMessages(msgs[rest:], func(i int, m *llm.Message) *Update {
		u := &Update{Text: transcript.RenderUpdate(m)}
		if i+rest <= promoted {
			return u
		}
		for _, t := range m.ToolsAdded {
			if old, ok := loaded[t.Name]; ok && old.Equal(t) {
				continue
			}
			loaded[t.Name] = t
			u.Added = append(u.Added, t)
		}
		return u
	})
}

// ValidName returns the pattern an API's tool names must match.
func ValidName(api API) *regexp.Regexp {
	switch api {
	case AnthropicMessages:
		return anthropicName
	case Gemini:
		return geminiName
	}
	return openAIName
}

var (
	anthropicName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
	openAIName    = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	// geminiName is the Gemini API's function name: a letter or
	// underscore first, then letters, digits, underscores, dots, colons
	// and dashes, 64 in all.
	geminiName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`)
)

// CheckNames reports the first tool the plan declares to the API (at the
// top level or added in place) whose name the API would refuse.
func (p *Plan) CheckNames(api API) error {
	re := ValidName(api)
	check := func(t llm.Tool) error {
		if re.MatchString(t.Name) {
			return nil
		}
		return fmt.Errorf("tool name %q cannot be sent to %s: names must match %s; rename the tool (catalog files can map names) or use the bridge class, which declares loaded tools as text",
			t.Name, api, re)
	}
	for _, t := range p.Tools {
		if err := check(t); err != nil {
			return err
		}
	}
	for _, e := range p.Items {
		if e.Update == nil {
			continue
		}
		for _, t := range e.Update.Added {
			if err := check(t); err != nil {
				return err
			}
		}
	}
	return nil
}
