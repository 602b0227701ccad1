package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolshelf/toolshelf/internal/lexicon"
)

// lexiconOff is the --lexicon value of run and chat that neither reads
// nor learns aliases.
const lexiconOff = "off"

// lexiconPath is the lexicon --lexicon names, or the user's; "" for off.
func lexiconPath(flag string) (string, error) {
	switch flag {
	case lexiconOff:
		return "", nil
	case "":
		return lexicon.DefaultPath()
	}
	return flag, nil
}

func newLexiconCmd(e *env) *cobra.Command {
	var (
		file   string
		reset  bool
		asJSON bool
	)
	path := func() (string, error) {
		if file != "" {
			return file, nil
		}
		return lexicon.DefaultPath()
	}
	cmd := &cobra.Command{
		Use:   "lexicon [flags]",
		Short: "List, add or remove the search aliases learned from your sessions",
		Long: `When a session's tool_search finds nothing the model then calls, and a later search of the
same prompt loads a tool the model calls, run and chat learn the first query as an alias of
that tool; a search whose loaded tools the model calls is learned as an alias of each of them.
The next session's search for the query ranks its tools first, though never above a tool the
query names exactly, and loads them alone: the near ties you never called stay on the shelf.
Among a search's near ties, the tools an alias names (ones you have called) load first.
The aliases are yours alone: a private file in the state folder
($XDG_STATE_HOME/toolshelf/lexicon/aliases.json), at most 1,000 of them, each fading by half
every 30 days it is not used (one learned once is gone after 60 days). Queries match by their
words, whatever their case, order, plurals and filler. run and chat --lexicon off use none.

lexicon lists them, heaviest first: the query, its tool, its uses and when it was last used.
Aliases added by hand are pinned: they never fade.`,
		Example: `  toolshelf lexicon
  toolshelf lexicon add "post to the team" mcp__slack__send_message
  toolshelf lexicon remove "post to the team"
  toolshelf lexicon --reset`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			if reset {
				had, err := lexicon.Reset(p)
				if err != nil {
					return err
				}
				if had {
					printf(e.stdout, "Removed the learned aliases (%s).\n", p)
				} else {
					printf(e.stdout, "No learned aliases to remove (%s).\n", p)
				}
				return nil
			}
			l, err := lexicon.Open(p, time.Now())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, map[string]any{"path": p, "entries": append([]lexicon.Entry{}, l.Entries()...)})
			}
			writeLexicon(e, l)
			return nil
		},
	}
	cmd.PersistentFlags().StringVar(&file, "file", "", "the lexicon file (default: $XDG_STATE_HOME/toolshelf/lexicon/aliases.json)")
	cmd.Flags().BoolVar(&reset, "reset", false, "remove every learned alias (the file)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the aliases as JSON")
	cmd.AddCommand(&cobra.Command{
		Use:   "add QUERY TOOL",
		Short: "Add an alias by hand: a search for QUERY ranks TOOL first (pinned: it never fades)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("lexicon add takes a query and a tool name, got %d arguments: quote a query of several words", len(args))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			now := time.Now()
			if _, err := lexicon.Update(p, now, func(l *lexicon.Lexicon) error { return l.Add(args[0], args[1], now) }); err != nil {
				return err
			}
			printf(e.stdout, "Added %s → %s (pinned).\n", oneLine(args[0], 0), oneLine(args[1], 0))
			return nil
		},
	}, &cobra.Command{
		Use:   "remove QUERY",
		Short: "Remove the aliases of QUERY (any query of the same words)",
		Args:  exactlyOne("lexicon remove takes one query: quote a query of several words"),
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			n := 0
			if _, err := lexicon.Update(p, time.Now(), func(l *lexicon.Lexicon) error {
				n = l.Remove(args[0])
				if n == 0 {
					return fmt.Errorf("no alias of %s: toolshelf lexicon lists them", oneLine(args[0], 0))
				}
				return nil
			}); err != nil {
				return err
			}
			printf(e.stdout, "Removed %s of %s.\n", aliases(n), oneLine(args[0], 0))
			return nil
		},
	})
	return cmd
}

// writeLexicon prints the aliases as a table; what they hold came from
// models and users, so it is shown safe.
func writeLexicon(e *env, l *lexicon.Lexicon) {
	entries := l.Entries()
	if len(entries) == 0 {
		printf(e.stdout, "No learned aliases yet (%s).\n", l.Path())
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "QUERY\tTOOL\tUSES\tLAST USED\n")
	for _, en := range entries {
		uses := fmt.Sprint(en.Uses)
		if en.Pinned {
			uses += " (pinned)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", oneLine(en.Query, 0), oneLine(en.Tool, 0), uses, en.Last.UTC().Format(time.DateOnly))
	}
	_ = tw.Flush()
	printf(e.stdout, "%s in %s\n", aliases(len(entries)), l.Path())
}

// aliases returns "1 alias" or "n aliases".
func aliases(n int) string {
	if n == 1 {
		return "1 alias"
	}
	return fmt.Sprintf("%d aliases", n)
}
