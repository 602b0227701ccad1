package tokens

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Record is the accounting of one model request, one line of a metrics
// log (JSON Lines). Token counts are the provider's, as the answer's usage
// reports them ([llm.Usage]); ToolTokens and DeclaredTokens are o200k
// counts of the declarations ([Counter.Tool]).
type Record struct {
	// Time is when the answer ended, written in RFC 3339, UTC.
	Time time.Time `json:"time"`
	// Session is the session id, if the conversation is saved.
	Session string `json:"session,omitempty"`
	// Servers is the absolute path of the servers file the conversation
	// ran with, if any: tool sets differ from one file to another.
	Servers string `json:"servers,omitempty"`
	// API and Model name the provider API and the model.
	API   string `json:"api,omitempty"`
	Model string `json:"model,omitempty"`
	// Strategy is how tools were offered (full, search, select…) and
	// Class the tool class the adapter rendered (changes, additions…),
	// where known.
	Strategy string `json:"strategy,omitempty"`
	Class    string `json:"class,omitempty"`
	// Input counts uncached input tokens, Output generated tokens,
	// CacheRead and CacheWrite the input tokens read from and written to
	// the prompt cache.
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	// ToolTokens is the tokens of the tool definitions the request
	// declared, Tools their number.
	ToolTokens int `json:"toolTokens"`
	Tools      int `json:"tools"`
	// Declared names the declared tools; DeclaredTokens, when present,
	// holds the tokens of each, in the same order.
	Declared       []string `json:"declared,omitempty"`
	DeclaredTokens []int    `json:"declaredTokens,omitempty"`
	// Called names the tools the answer called, in call order (a tool
	// called twice is named twice).
	Called []string `json:"called,omitempty"`
	// Inner names the tools that the answer's codemode scripts called, in
	// call order; InnerTokens counts the o200k tokens of their results,
	// which stayed in the scripts instead of reaching the model.
	Inner       []string `json:"inner,omitempty"`
	InnerTokens int      `json:"innerTokens,omitempty"`
}

// TotalInput returns every input token: uncached, read and written.
func (r Record) TotalInput() int { return r.Input + r.CacheRead + r.CacheWrite }

// validate reports a record no writer produces.
func (r Record) validate() error {
	switch {
	case r.Time.IsZero():
		return errors.New("no time")
	case r.Input < 0 || r.Output < 0 || r.CacheRead < 0 || r.CacheWrite < 0 || r.ToolTokens < 0 || r.Tools < 0 || r.InnerTokens < 0:
		return errors.New("negative count")
	case len(r.DeclaredTokens) > 0 && len(r.DeclaredTokens) != len(r.Declared):
		return fmt.Errorf("%d declaredTokens for %d declared tools", len(r.DeclaredTokens), len(r.Declared))
	}
	return nil
}

// Log appends records to a metrics file. Each record is one line written
// with one write(2) to a file opened with O_APPEND, so records of
// concurrent writers, other processes included, never interleave; a line
// cut short by a crash is closed off by the next append, so readers lose
// that line only (closing off a line another process is still writing
// leaves a blank line, which readers skip). A Log is safe for concurrent
// use.
type Log struct {
	mu sync.Mutex // guards f
	f  *os.File
}

// OpenLog opens the metrics log at path for appending, creating it with
// mode 0600 if it is missing. Its folder must exist.
func OpenLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the metrics log: %w", err)
	}
	return &Log{f: f}, nil
}

// Path returns the log's file name.
func (l *Log) Path() string { return l.f.Name() }

// Append writes one record as one line. A zero Time becomes the current
// time; times are written in UTC.
func (l *Log) Append(r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding a metrics record: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("metrics log: append after Close")
	}
	// A torn last line (a writer that crashed mid-write) would swallow
	// this record: start on a fresh line.
	buf := make([]byte, 0, len(line)+2)
	if torn, err := l.tornTail(); err != nil {
		return err
	} else if torn {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	if _, err := l.f.Write(buf); err != nil {
		return fmt.Errorf("writing the metrics log %s: %w", l.f.Name(), err)
	}
	return nil
}

// tornTail reports whether the file ends inside a line.
func (l *Log) tornTail() (bool, error) {
	fi, err := l.f.Stat()
	if err != nil {
		return false, fmt.Errorf("metrics log: %w", err)
	}
	if fi.Size() == 0 {
		return false, nil
	}
	var last [1]byte
	if _, err := l.f.ReadAt(last[:], fi.Size()-1); err != nil {
		return false, fmt.Errorf("reading the end of the metrics log %s: %w", l.f.Name(), err)
	}
	return last[0] != '\n', nil
}

// Close closes the file; later appends fail.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// BadLine is a line of a metrics log that is not a record.
type BadLine struct {
	// Line is the line number, from 1.
	Line int
	// Err says what is wrong with it.
	Err error
}

// Error returns "line N: what is wrong".
func (b BadLine) Error() string { return fmt.Sprintf("line %d: %v", b.Line, b.Err) }

// maxLine bounds a record line; longer lines are reported, not read.
const maxLine = 16 << 20

// ReadLog reads a metrics log. Lines that are not records — garbage, a
// line torn by a crash, a record without a time or with negative counts —
// are skipped and returned as bad lines with their numbers; blank lines
// are ignored. The error is a read error only: whatever was read before it
// is returned too.
func ReadLog(r io.Reader) (records []Record, bad []BadLine, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, long, rerr := readLine(br)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return records, bad, fmt.Errorf("reading the metrics log at line %d: %w", n, rerr)
		}
		switch {
		case long:
			bad = append(bad, BadLine{n, fmt.Errorf("longer than %d bytes", maxLine)})
		case len(bytes.TrimSpace(line)) == 0:
		default:
			var rec Record
			if err := json.Unmarshal(line, &rec); err != nil {
				bad = append(bad, BadLine{n, err})
			} else if err := rec.validate(); err != nil {
				bad = append(bad, BadLine{n, err})
			} else {
				records = append(records, rec)
			}
		}
		if rerr != nil { // io.EOF
			return records, bad, nil
		}
	}
}

// readLine returns the next line without its newline. A line longer than
// maxLine is consumed and reported as long, without being kept.
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > maxLine+1 {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), long, err
	}
}
