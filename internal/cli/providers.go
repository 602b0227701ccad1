package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/adapter"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// capabilityFlags are the flags that choose a model's capabilities: the
// built-in table, rules from a file, and a class override.
type capabilityFlags struct {
	rulesFile string
	class     string
}

func (f *capabilityFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.rulesFile, "capabilities", "",
		"JSON file of capability rules applied after the built-in table (see 'toolshelf capabilities --help')")
	cmd.Flags().StringVar(&f.class, "class", "",
		"force a tool class: changes, additions, text, none or bridge (bridge works with every model)")
}

// table returns the built-in table followed by the file's rules.
func (f *capabilityFlags) table() (provider.Table, error) {
	t := provider.DefaultTable()
	if f.rulesFile == "" {
		return t, nil
	}
	b, err := os.ReadFile(f.rulesFile)
	if err != nil {
		return nil, fmt.Errorf("reading capability rules: %w", err)
	}
	rules, err := provider.ParseRules(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.rulesFile, err)
	}
	return t.With(rules...), nil
}

// lookup returns the capabilities of a model, with the class override
// applied and checked against the API.
func (f *capabilityFlags) lookup(api provider.API, model string) (provider.Capabilities, error) {
	t, err := f.table()
	if err != nil {
		return provider.Capabilities{}, err
	}
	c := t.Lookup(api, model)
	if f.class != "" {
		classes := []llm.ToolSupport{llm.ToolsChanges, llm.ToolsAdditions, llm.ToolsText, llm.ToolsNone, llm.ToolsBridge}
		if !slices.Contains(classes, llm.ToolSupport(f.class)) {
			return c, usagef("unknown --class %q: use changes, additions, text, none or bridge", f.class)
		}
		c.Tools = llm.ToolSupport(f.class)
		if c.Tools == llm.ToolsAdditions && c.Anchor == "" {
			c.Anchor = map[provider.API]provider.Anchor{
				provider.OpenAIResponses: provider.AnchorToolSearch,
				provider.OpenAIChat:      provider.AnchorSystemTools,
			}[api]
		}
	}
	if err := c.Check(api); err != nil {
		return c, usagef("%s %s: %v", api, model, err)
	}
	return c, nil
}

func newCapabilitiesCmd(e *env) *cobra.Command {
	var flags capabilityFlags
	var name string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "capabilities [model...]",
		Short: "Show which tool class each API and model gets",
		Long: `capabilities resolves the capability table. For each model it prints the tool class
the adapter renders and the flags behind it, on the API of --provider or else on the API the
model's name suggests (claude-*: Anthropic Messages; gpt-*, o1/o3/o4-*, codex-*: OpenAI Responses;
anything else: Chat Completions). Without models it prints the table's rules in order; every
matching rule applies, and later rules refine earlier ones.

Classes:
  changes    tools added, removed and redefined in place (Anthropic); the head never changes
  additions  tools added in place; a removal rewrites the tool list once (OpenAI Responses, Kimi)
  text       system text in place; the whole tool list is sent every time
  none       everything folds into the head; every change rewrites the prompt
  bridge     toolshelf's own, for any model: a fixed head with call_tool; loaded tools are
             described as text and called through call_tool

A rules file (--capabilities) is a JSON array of rules applied after the built-in ones; a rule's
api is the API id the table prints (` + apiList() + `):
  [{"api": "openai-chat", "model": "qwen*", "tools": "bridge"},
   {"api": "anthropic-messages", "model": "claude-sonnet-5*", "midConversationText": false}]
Fields: api, model (pattern, * matches anything), tools, midConversationText, anchor
(additional_tools, tool_search, system_tools), cacheControlOnTools, longCacheRetention,
developerRole, cacheBreakpoints, note.`,
		RunE: func(cmd *cobra.Command, models []string) error {
			info, err := lookupProvider(name)
			if err != nil {
				return err
			}
			table, err := flags.table()
			if err != nil {
				return err
			}
			if len(models) == 0 {
				if asJSON {
					return writeJSON(e.stdout, table)
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "API\tMODEL\tSETS\tNOTE")
				for _, r := range table {
					if info.API != "" && r.API != "" && r.API != info.API {
						continue
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", orAny(string(r.API)), orAny(r.Model), ruleSets(r), r.Note)
				}
				return tw.Flush()
			}
			type row struct {
				API   provider.API          `json:"api"`
				Model string                `json:"model"`
				Caps  provider.Capabilities `json:"capabilities"`
			}
			var rows []row
			for _, m := range models {
				a := info.APIFor(m)
				c, err := flags.lookup(a, m)
				if err != nil {
					return err
				}
				rows = append(rows, row{a, m, c})
			}
			if asJSON {
				return writeJSON(e.stdout, rows)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "API\tMODEL\tCLASS\tFLAGS")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.API, r.Model, r.Caps.Tools, capFlags(r.Caps))
			}
			return tw.Flush()
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVar(&name, "provider", "", "only the API of this provider: "+toolshelf.ProviderNames()+" (default: the API each model's name suggests)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// lookupProvider returns the provider of --provider; none (the empty
// name) is the emulator, which speaks the API each model's name
// suggests.
func lookupProvider(name string) (toolshelf.ProviderInfo, error) {
	if name == "" {
		name = toolshelf.Emulator
	}
	info, ok := toolshelf.LookupProvider(name)
	if !ok {
		return info, usagef("unknown --provider %q: use %s", name, toolshelf.ProviderNames())
	}
	return info, nil
}

// apiList lists the API ids of the capability table.
func apiList() string {
	names := make([]string, len(provider.APIs))
	for i, a := range provider.APIs {
		names[i] = string(a)
	}
	return orList(names)
}

func orAny(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

// ruleSets lists what a rule sets, as key=value pairs.
func ruleSets(r provider.Rule) string {
	var parts []string
	if r.Tools != "" {
		parts = append(parts, "tools="+string(r.Tools))
	}
	if r.Anchor != "" {
		parts = append(parts, "anchor="+string(r.Anchor))
	}
	for _, b := range []struct {
		name string
		v    *bool
	}{
		{"midConversationText", r.MidConversationText}, {"cacheControlOnTools", r.CacheControlOnTools},
		{"longCacheRetention", r.LongCacheRetention}, {"developerRole", r.DeveloperRole},
		{"cacheBreakpoints", r.CacheBreakpoints},
	} {
		if b.v != nil {
			parts = append(parts, fmt.Sprintf("%s=%v", b.name, *b.v))
		}
	}
	return strings.Join(parts, " ")
}

// capFlags lists the flags that are on.
func capFlags(c provider.Capabilities) string {
	var parts []string
	if c.MidConversationText {
		parts = append(parts, "midConversationText")
	}
	if c.Anchor != "" {
		parts = append(parts, "anchor="+string(c.Anchor))
	}
	if c.CacheControlOnTools {
		parts = append(parts, "cacheControlOnTools")
	}
	if c.LongCacheRetention {
		parts = append(parts, "longCacheRetention")
	}
	if c.DeveloperRole {
		parts = append(parts, "developerRole")
	}
	if c.CacheBreakpoints {
		parts = append(parts, "cacheBreakpoints")
	}
	return strings.Join(parts, " ")
}

// requestRenderer is an adapter that can show the request body it would
// send (each of the provider table's adapters can).
type requestRenderer interface {
	RequestBody(req *llm.Request) ([]byte, error)
}

func newRenderCmd(e *env) *cobra.Command {
	var flags capabilityFlags
	var name, model, dir, retention string
	cmd := &cobra.Command{
		Use:   "render --model MODEL ID|PATH|last",
		Short: "Print the request body a provider would get for a session",
		Long: `render replays a saved session's current branch and prints the JSON body the adapter of
--provider (by default the API the model's name suggests) would send for the next request, in the
tool class the capability table gives the model (or --class). Nothing is sent: render needs no
key and no network. Rendering the same session before and after a change shows what stays in
the provider's prompt cache.`,
		Args: exactlyOne("render needs a session: an id, a path or last"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if model == "" {
				return usagef("render needs --model, e.g. --model claude-opus-5-5")
			}
			info, err := lookupProvider(name)
			if err != nil {
				return err
			}
			a := info.APIFor(model)
			caps, err := flags.lookup(a, model)
			if err != nil {
				return err
			}
			if retention != "" && a != provider.AnthropicMessages {
				return usagef("--cache-retention applies to the Anthropic Messages API only (--provider %s, or a claude-* model)", toolshelf.Anthropic)
			}
			// The emulator's adapter is the API's own, and needs no key.
			m, err := adapter.New(toolshelf.Provider{Name: toolshelf.Emulator, API: a, Model: model,
				Capabilities: &caps, Retention: retention})
			if err != nil {
				return err
			}
			r, ok := m.(requestRenderer)
			if !ok {
				return fmt.Errorf("the %s adapter cannot show its request body", a)
			}
			s, err := openReadOnly(sessionDir(&dir), args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			body, err := r.RequestBody(&llm.Request{Messages: s.Messages()})
			if err != nil {
				return err
			}
			var out bytes.Buffer
			if err := json.Indent(&out, body, "", "  "); err != nil {
				return fmt.Errorf("the adapter produced invalid JSON: %w", err)
			}
			out.WriteByte('\n')
			_, err = e.stdout.Write(out.Bytes())
			return err
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVar(&model, "model", "", "model id (required)")
	cmd.Flags().StringVar(&name, "provider", "", "the provider whose adapter renders: "+toolshelf.ProviderNames()+" (default: the API the model's name suggests)")
	cmd.Flags().StringVar(&dir, "dir", "", "session directory (default: the XDG data directory)")
	cmd.Flags().StringVar(&retention, "cache-retention", "", "Anthropic cache lifetime: 5m (default), 1h or none")
	return cmd
}
