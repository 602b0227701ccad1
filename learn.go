package toolshelf

import (
	"fmt"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf/internal/lexicon"
)

// NoteLexicon: the lexicon of learned aliases (Config.Lexicon) could not
// be read or saved; the conversation goes on without it.
const NoteLexicon NoteKind = "lexicon"

// learning is a shelf's lexicon of learned aliases (Config.Lexicon): what
// tool_search reads, and where conversations add what they learned.
type learning struct {
	path string

	mu  sync.Mutex // guards err and noted
	err error      // why the lexicon is off, nil while it is on
	// noted reports whether err was noted to a conversation.
	noted bool
}

// openLearning reads the lexicon at path for s's tool_search. A lexicon
// that cannot be read turns learning off; the shelf's first conversation
// notes why ([NoteLexicon]).
func (s *Shelf) openLearning(path string) {
	s.learning = &learning{path: path}
	l, err := lexicon.Open(path, time.Now())
	if err != nil {
		s.learning.err = err
		return
	}
	s.searcher.SetAliases(l)
}

// noteLearning notes, once per shelf, why its lexicon is off.
func (a *Agent) noteLearning() {
	lg := a.shelf.learning
	if lg == nil {
		return
	}
	lg.mu.Lock()
	err := lg.err
	if err == nil || lg.noted {
		lg.mu.Unlock()
		return
	}
	lg.noted = true
	lg.mu.Unlock()
	a.notify(NoteLexicon, fmt.Sprintf("learned aliases are off: %v", err))
}

// learn adds what the conversation's searches taught since it started
// (lexicon.Pairs) to the shelf's lexicon, read afresh and saved, and
// makes tool_search read the result: the next conversation's searches
// find what this one found late.
func (a *Agent) learn() {
	lg := a.shelf.learning
	if lg == nil || a.loop == nil {
		return
	}
	lg.mu.Lock()
	off := lg.err != nil
	lg.mu.Unlock()
	msgs := a.loop.Messages()
	if off || a.learnFrom > len(msgs) {
		return
	}
	learned, used := lexicon.Pairs(msgs[a.learnFrom:])
	a.learnFrom = len(msgs) // a second Close learns nothing twice
	if len(learned)+len(used) == 0 {
		return
	}
	now := a.now()
	l, err := lexicon.Update(lg.path, now, func(l *lexicon.Lexicon) error {
		l.Learn(learned, now)
		l.Learn(used, now)
		return nil
	})
	if err != nil {
		lg.mu.Lock()
		lg.err, lg.noted = err, true
		lg.mu.Unlock()
		a.notify(NoteLexicon, fmt.Sprintf("learned aliases not saved: %v", err))
		return
	}
	a.shelf.searcher.SetAliases(l)
}
