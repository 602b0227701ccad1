package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

func newSessionsCmd(e *env) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show and fork saved sessions",
		Long: `Sessions are append-only JSON Lines files, one per conversation, in the session
directory ($XDG_DATA_HOME/toolshelf/sessions, by default ~/.local/share/toolshelf/sessions).
A session is named by its id (or a unique prefix of it), its file path, or "last".`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&dir, "dir", "", "session directory (default: the XDG data directory); --session-dir, as run and chat call it, works too")
	cmd.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "session-dir" {
			name = "dir"
		}
		return pflag.NormalizedName(name)
	})
	resolveDir := sessionDir(&dir)
	cmd.AddCommand(newSessionsListCmd(e, resolveDir), newSessionsShowCmd(e, resolveDir), newSessionsForkCmd(e, resolveDir))
	return cmd
}

func newSessionsListCmd(e *env, resolveDir func() (string, error)) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sessions, newest first",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := resolveDir()
			if err != nil {
				return err
			}
			infos, err := session.List(dir)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					infos = nil
				} else {
					return err
				}
			}
			if asJSON {
				type row struct {
					ID            string    `json:"id,omitempty"`
					Path          string    `json:"path"`
					Timestamp     time.Time `json:"timestamp,omitzero"`
					Entries       int       `json:"entries"`
					ParentSession string    `json:"parentSession,omitempty"`
					Title         string    `json:"title,omitempty"`
					Error         string    `json:"error,omitempty"`
				}
				rows := make([]row, 0, len(infos))
				for _, in := range infos {
					r := row{ID: in.ID, Path: in.Path, Timestamp: in.Timestamp, Entries: in.Entries,
						ParentSession: in.ParentSession, Title: in.FirstUserText}
					if in.Err != nil {
						r.Error = in.Err.Error()
					}
					rows = append(rows, r)
				}
				return writeJSON(e.stdout, rows)
			}
			if len(infos) == 0 {
				fmt.Fprintf(e.stdout, "No sessions in %s.\n", dir)
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTARTED\tENTRIES\tFIRST MESSAGE")
			for _, in := range infos {
				if in.Err != nil {
					printf(tw, "?\t\t\t%s: %s\n", in.Path, oneLine(in.Err.Error(), 0))
					continue
				}
				title := oneLine(in.FirstUserText, 0)
				if in.ParentSession != "" {
					title = "(fork) " + title
				}
				printf(tw, "%s\t%s\t%d\t%s\n", oneLine(in.ID, 0), in.Timestamp.Local().Format("2006-01-02 15:04"), in.Entries, title)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

// locate resolves the session directory and a session name in it.
func locate(resolveDir func() (string, error), name string) (dir, path string, err error) {
	if dir, err = resolveDir(); err != nil {
		return "", "", err
	}
	path, err = findSession(dir, name)
	return dir, path, err
}

// openReadOnly finds a session by name and opens it without writing.
func openReadOnly(resolveDir func() (string, error), name string) (*session.Session, error) {
	_, path, err := locate(resolveDir, name)
	if err != nil {
		return nil, err
	}
	s, err := session.Open(path, &session.Options{ReadOnly: true})
	if err != nil {
		return nil, explainSessionError(err)
	}
	return s, nil
}

// sessionDir returns the resolver of the session directory: dir when
// set, else the default.
func sessionDir(dir *string) func() (string, error) {
	return func() (string, error) {
		if *dir != "" {
			return *dir, nil
		}
		return session.DefaultDir()
	}
}

// findSession resolves a session name: "last", a path, or an id or unique
// id prefix in dir.
func findSession(dir, name string) (string, error) {
	if name == "last" {
		p, err := session.Latest(dir)
		switch {
		case errors.Is(err, session.ErrNoSessions):
			return "", fmt.Errorf("no sessions in %s yet", dir)
		case err != nil:
			return "", explainSessionError(err)
		}
		return p, nil
	}
	if strings.ContainsRune(name, os.PathSeparator) || strings.HasSuffix(name, ".jsonl") {
		if _, err := os.Stat(name); err != nil {
			return "", fmt.Errorf("session %s: %w", name, err)
		}
		return name, nil
	}
	infos, err := session.List(dir)
	if err != nil {
		return "", err
	}
	var matches []session.Info
	for _, in := range infos {
		if in.ID != "" && strings.HasPrefix(in.ID, name) {
			matches = append(matches, in)
		}
	}
	switch len(matches) {
	case 0:
		return "", usagef("no session %q in %s: run 'toolshelf sessions list' for the ids", name, dir)
	case 1:
		if err := matches[0].Err; err != nil {
			return "", explainSessionError(err)
		}
		return matches[0].Path, nil
	}
	return "", usagef("%q names %d sessions; give more of the id", name, len(matches))
}

func newSessionsShowCmd(e *env, resolveDir func() (string, error)) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID|PATH|last",
		Short: "Show a session's conversation (the current branch)",
		Args:  exactlyOne("show needs a session: an id, a path or last"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openReadOnly(resolveDir, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			if asJSON {
				return writeJSON(e.stdout, struct {
					Header  session.Header  `json:"header"`
					Branch  []session.Entry `json:"branch"`
					Context []llm.Message   `json:"context"`
				}{s.Header(), s.Branch(), s.Messages()})
			}
			h := s.Header()
			printf(e.stdout, "session %s  started %s  %s\n", h.ID, h.Timestamp.Local().Format(time.DateTime), s.Path())
			if h.ParentSession != "" {
				printf(e.stdout, "forked from %s at %s\n", h.ParentSession, h.ParentEntry)
			}
			for _, en := range s.Branch() {
				writeEntry(e.stdout, en)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the header, the branch's entries and the model's context as JSON")
	return cmd
}

func newSessionsForkCmd(e *env, resolveDir func() (string, error)) *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "fork ID|PATH|last",
		Short: "Copy a session's branch into a new session",
		Long: `Fork creates a new session holding the conversation of an existing one up to an
entry (by default its last), with a reference to where it came from; the original
is not changed. It prints the new session's path.`,
		Args: exactlyOne("fork needs a session: an id, a path or last"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, path, err := locate(resolveDir, args[0])
			if err != nil {
				return err
			}
			if at == "" {
				s, err := session.Open(path, &session.Options{ReadOnly: true})
				if err != nil {
					return explainSessionError(err)
				}
				at = s.Leaf()
				s.Close()
			}
			forked, err := session.Fork(path, at, dir, nil)
			if err != nil {
				return explainSessionError(err)
			}
			defer forked.Close()
			printLine(e.stdout, forked.Path())
			return nil
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "entry id to fork at (default: the session's last entry)")
	return cmd
}

// writeEntry prints one entry of a session for people.
func writeEntry(w io.Writer, en session.Entry) {
	prefix := fmt.Sprintf("[%s] ", en.ID)
	switch {
	case en.Type == session.TypeCompaction:
		printf(w, "%scompaction: %s\n", prefix, oneLine(en.Summary, 100))
	case en.Message != nil:
		m := en.Message
		switch m.Role {
		case llm.RoleSystem:
			var parts []string
			if t := llm.ContentText(m.Content, " "); t != "" {
				parts = append(parts, oneLine(t, 80))
			}
			for _, sec := range m.Sections {
				if sec.Text == nil {
					parts = append(parts, "-section "+sec.Name)
				} else {
					parts = append(parts, "section "+sec.Name)
				}
			}
			for _, t := range m.ToolsAdded {
				parts = append(parts, "+"+t.Name)
			}
			for _, r := range m.ToolsRemoved {
				parts = append(parts, "-"+r.Name)
			}
			printf(w, "%ssystem: %s\n", prefix, strings.Join(parts, " "))
		case llm.RoleToolResult:
			status := ""
			if m.IsError {
				status = " (error)"
			}
			printf(w, "%s← %s%s: %s\n", prefix, m.ToolName, status, oneLine(llm.ContentText(m.Content, " "), 100))
			if m.ToolName == codemode.Name {
				writeScriptCalls(w, prefix, m.Details)
			}
		case llm.RoleAssistant:
			if t := llm.ContentText(m.Content, " "); t != "" {
				printf(w, "%sassistant: %s\n", prefix, oneLine(t, 100))
			}
			for _, c := range m.ToolCalls() {
				printf(w, "%s→ %s %s\n", prefix, c.Name, oneLine(string(c.Arguments), 80))
			}
			if m.ErrorMessage != "" {
				printf(w, "%s(%s: %s)\n", prefix, m.StopReason, oneLine(m.ErrorMessage, 80))
			}
		default:
			printf(w, "%s%s: %s\n", prefix, m.Role, oneLine(llm.ContentText(m.Content, " "), 100))
		}
	default:
		printf(w, "%s(%s entry)\n", prefix, en.Type)
	}
}

// maxShownCalls bounds the lines a codemode result's calls take.
const maxShownCalls = 20

// writeScriptCalls prints the tool calls a codemode script made, which its
// result's details keep.
func writeScriptCalls(w io.Writer, prefix string, details json.RawMessage) {
	d, ok := codemode.ReadDetails(details)
	if !ok {
		return
	}
	indent := strings.Repeat(" ", len(prefix))
	for i, c := range d.Calls {
		if i == maxShownCalls {
			printf(w, "%s  … %d more calls\n", indent, len(d.Calls)-i)
			break
		}
		status := ""
		if c.IsError {
			status = " (error)"
		}
		printf(w, "%s  ↳ %s %s%s: %s\n", indent, oneLine(c.Tool, 64), oneLine(string(c.Arguments), 60), status, oneLine(c.Result, 60))
	}
}

// oneLine collapses white space, cuts s to n runes (n <= 0: no cut) and
// makes it safe to print.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if n > 0 {
		s = truncate(s, n)
	}
	return show(s)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// exactlyOne accepts one positional argument, or fails with msg.
func exactlyOne(msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("%s", msg)
		}
		return nil
	}
}

// explainSessionError adds to an error about a session file what the user
// can do: recover the intact part of a damaged file with a fork, or leave
// a session another process holds to it (or continue in a fork).
func explainSessionError(err error) error {
	var fe *session.FormatError
	var le *session.LockedError
	switch {
	case errors.As(err, &fe) && fe.Line == 1:
		return fmt.Errorf("%w\nThe file's header is damaged, so nothing in it can be recovered; move it out of the session directory to use the others", err)
	case errors.As(err, &fe) && fe.Intact == 0:
		return fmt.Errorf("%w\nThe session's first entry is damaged, so nothing in it can be recovered; move the file out of the session directory to use the others", err)
	case errors.As(err, &fe):
		intact := fmt.Sprintf("The %d entries before line %d are intact", fe.Intact, fe.Line)
		if fe.Intact == 1 {
			intact = fmt.Sprintf("The entry before line %d is intact", fe.Line)
		}
		return fmt.Errorf("%w\n%s: recover them in a new session with\n  toolshelf sessions fork %s --at %s\nand resume the session it prints, or move the damaged file out of the session directory",
			err, intact, shellQuote(fe.Path), fe.LastIntact)
	case errors.As(err, &le):
		return fmt.Errorf("%w (with run or chat: --resume … --fork)", err)
	}
	return err
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:+@%,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
