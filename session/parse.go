package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// parsed is the content of a session file.
type parsed struct {
	header  Header
	entries []Entry
	index   map[string]int // entry id → position in entries
	// end is the length of the well-formed part of the file: everything
	// but a torn final line.
	end int64
	// torn is the length of the torn final line that was dropped.
	torn int64
	// needNewline reports that the file ends with a complete entry that
	// has no newline.
	needNewline bool
}

// parse reads a session file's content; path names it in errors. A torn
// final line is left out (see [parsed.torn]); any other problem is a
// *FormatError, returned with what precedes the bad line when the header
// could be read (nil otherwise).
func parse(path string, data []byte) (*parsed, error) {
	p := &parsed{index: make(map[string]int)}
	lineNo := 0
	for off := 0; off < len(data); {
		lineNo++
		line, complete := data[off:], false
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, complete = line[:i], true
		}
		next := off + len(line)
		if complete {
			next++
		} else if !json.Valid(line) {
			// A crash in the middle of a write: drop the tail.
			p.torn = int64(len(line))
			break
		} else {
			p.needNewline = true
		}
		if err := p.line(lineNo, line); err != nil {
			fe := &FormatError{Path: path, Line: lineNo, Err: err, Intact: len(p.entries)}
			if lineNo == 1 {
				return nil, fe
			}
			fe.LastIntact = p.leaf()
			return p, fe
		}
		off = next
		p.end = int64(next)
	}
	if lineNo == 0 || (lineNo == 1 && p.torn > 0) {
		return nil, &FormatError{Path: path, Line: 1, Err: errors.New("no session header")}
	}
	return p, nil
}

// line reads line number n of the file.
func (p *parsed) line(n int, line []byte) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return errors.New("empty line")
	}
	if n == 1 {
		return p.header.UnmarshalJSON(line)
	}
	var e Entry
	if err := e.UnmarshalJSON(line); err != nil {
		return err
	}
	if _, dup := p.index[e.ID]; dup {
		return fmt.Errorf("duplicate entry id %q", e.ID)
	}
	if e.ParentID != "" {
		if _, ok := p.index[e.ParentID]; !ok {
			return fmt.Errorf("parentId %q: %w earlier in the file", e.ParentID, ErrUnknownEntry)
		}
	}
	if e.Type == TypeCompaction && e.FirstKeptID != "" && !p.isAncestor(e.FirstKeptID, e.ParentID) {
		return fmt.Errorf("firstKeptId %q is not an ancestor of the compaction", e.FirstKeptID)
	}
	p.index[e.ID] = len(p.entries)
	p.entries = append(p.entries, e)
	return nil
}

// indexOf returns the position of the entry id; p may be nil.
func (p *parsed) indexOf(id string) (int, bool) {
	if p == nil {
		return 0, false
	}
	i, ok := p.index[id]
	return i, ok
}

// isAncestor reports whether id is leaf or one of its ancestors.
func (p *parsed) isAncestor(id, leaf string) bool {
	for cur := leaf; cur != ""; cur = p.entries[p.index[cur]].ParentID {
		if cur == id {
			return true
		}
	}
	return false
}

// branch returns the positions of the entries from the root to leaf.
func (p *parsed) branch(leaf string) []int {
	var out []int
	for cur := leaf; cur != ""; {
		i := p.index[cur]
		out = append(out, i)
		cur = p.entries[i].ParentID
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// leaf returns the id of the last entry, "" when there is none.
func (p *parsed) leaf() string {
	if len(p.entries) == 0 {
		return ""
	}
	return p.entries[len(p.entries)-1].ID
}
