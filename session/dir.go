package session

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolshelf/toolshelf/llm"
)

// Fork starts a new session in dir from the session file at path: its
// header names path (made absolute) as parentSession and at as
// parentEntry, and it holds copies of the entries from the root to at
// (same ids, same lines), with the leaf at at. An empty at means the
// source's last entry. The source is read, never modified; a torn final
// line in it is ignored. The new header's cwd and mcpFile are opts.Cwd
// and opts.MCPFile, or the source's where they are empty.
//
// A source that is damaged further on (a [*FormatError]: a line that is
// not a valid entry) can still be forked at an entry before the damage,
// named explicitly; [FormatError.LastIntact] is the last such entry. This
// is how a damaged session is recovered.
func Fork(path, at, dir string, opts *Options) (*Session, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("forking session: %w", err)
	}
	src, err := parse(path, data)
	if err != nil {
		var fe *FormatError
		_, intact := src.indexOf(at)
		if !errors.As(err, &fe) || at == "" || !intact {
			return nil, fmt.Errorf("forking session: %w", err)
		}
	}
	if at == "" {
		at = src.leaf()
	} else if _, ok := src.index[at]; !ok {
		return nil, fmt.Errorf("forking session %s at %q: %w", path, at, ErrUnknownEntry)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("forking session: %w", err)
	}
	h := Header{Version: Version, ID: randomHex(8), Timestamp: opts.now(), Cwd: src.header.Cwd,
		MCPFile: src.header.MCPFile, ParentSession: abs, ParentEntry: at}
	if opts != nil && opts.Cwd != "" {
		h.Cwd = opts.Cwd
	}
	if opts != nil && opts.MCPFile != "" {
		h.MCPFile = opts.MCPFile
	}
	var body []byte
	for _, i := range src.branch(at) {
		body = append(append(body, src.entries[i].Raw...), '\n')
	}
	return create(dir, h, body, opts)
}

// Info describes a session file, as [List] finds it.
type Info struct {
	// Path is the file's path.
	Path string
	// Err is why the file could not be read (a [*FormatError] for a
	// damaged file). The other fields then describe what could be read:
	// the header's, or, when the header is damaged too, the id and time
	// in the file's name ([Create]'s naming) if it has them; Entries and
	// FirstUserText cover the entries before the damage.
	Err error
	// ID, Timestamp, Cwd, MCPFile, ParentSession and ParentEntry come
	// from the header.
	ID            string
	Timestamp     time.Time
	Cwd           string
	MCPFile       string
	ParentSession string
	ParentEntry   string
	// Entries counts the entries on every branch.
	Entries int
	// FirstUserText is the text of the first user message in the file,
	// white space collapsed and cut to 80 runes: a title for listings.
	FirstUserText string
}

// titleRunes is the most runes of Info.FirstUserText.
const titleRunes = 80

// List describes the sessions in dir (the files whose names end in
// ".jsonl"), newest first by header timestamp. A file that cannot be read
// is listed with its Err set, in its place when its time is known (from
// its header, else its name), after the others otherwise. A missing dir
// holds no sessions.
func List(dir string) ([]Info, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	var out []Info
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".jsonl") || de.IsDir() {
			continue
		}
		out = append(out, info(filepath.Join(dir, de.Name())))
	}
	slices.SortStableFunc(out, func(a, b Info) int {
		if a.Timestamp.IsZero() != b.Timestamp.IsZero() {
			if a.Timestamp.IsZero() {
				return 1
			}
			return -1
		}
		if c := b.Timestamp.Compare(a.Timestamp); c != 0 {
			return c
		}
		return cmp.Compare(b.Path, a.Path)
	})
	return out, nil
}

// info reads one session file for List.
func info(path string) Info {
	data, err := os.ReadFile(path)
	if err != nil {
		return Info{Path: path, Err: err}
	}
	p, err := parse(path, data)
	if p == nil {
		in := Info{Path: path, Err: err}
		in.ID, in.Timestamp = fromName(filepath.Base(path))
		return in
	}
	in := Info{Path: path, Err: err, ID: p.header.ID, Timestamp: p.header.Timestamp, Cwd: p.header.Cwd,
		MCPFile: p.header.MCPFile, ParentSession: p.header.ParentSession, ParentEntry: p.header.ParentEntry, Entries: len(p.entries)}
	for _, e := range p.entries {
		if e.Message != nil && e.Message.Role == llm.RoleUser {
			in.FirstUserText = title(llm.ContentText(e.Message.Content, " "))
			break
		}
	}
	return in
}

// nameLayout is the time in the names Create gives files.
const nameLayout = "20060102T150405Z"

// fromName returns the session id and creation time in a file name of
// Create's form, "20260102T150405Z_4f1c9a0b2d3e4f50.jsonl"; zero values
// for another name.
func fromName(name string) (id string, created time.Time) {
	stamp, rest, ok := strings.Cut(strings.TrimSuffix(name, ".jsonl"), "_")
	if !ok || len(rest) != 16 || strings.Trim(rest, "0123456789abcdef") != "" {
		return "", time.Time{}
	}
	t, err := time.Parse(nameLayout, stamp)
	if err != nil {
		return "", time.Time{}
	}
	return rest, t
}

// title collapses white space and cuts s to titleRunes runes, the last
// one an ellipsis when it was cut.
func title(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= titleRunes {
		return s
	}
	r := []rune(s)
	return string(r[:titleRunes-1]) + "…"
}

// Latest returns the path of the newest session in dir, for resuming the
// last session; [ErrNoSessions] when there is none. When the newest file
// cannot be read (or none can), the error says why (a [*FormatError] for
// a damaged file) and the path is still returned: an older session is
// never taken in its place, since continuing it would leave the newest
// conversation behind without a word.
func Latest(dir string) (string, error) {
	infos, err := List(dir)
	if err != nil {
		return "", err
	}
	if len(infos) == 0 {
		return "", fmt.Errorf("%s: %w", dir, ErrNoSessions)
	}
	if err := infos[0].Err; err != nil {
		return infos[0].Path, fmt.Errorf("the latest session cannot be read: %w", err)
	}
	return infos[0].Path, nil
}

// DefaultDir returns where sessions are kept by default:
// $XDG_DATA_HOME/toolshelf/sessions, or ~/.local/share/toolshelf/sessions
// when XDG_DATA_HOME is unset or not an absolute path.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "toolshelf", "sessions"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the session directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "toolshelf", "sessions"), nil
}
