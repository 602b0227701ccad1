package search

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// How an index is built. Both rankers' Add analyse documents on every
// processor and index them, on the calling goroutine, in input order, as
// the documents are analysed; the index is what adding them one at a time
// would give, whatever the schedule.
//
// A worker (termWorker) analyses chunks of analyzeChunk documents. It
// numbers the terms it meets itself (local ids), remembers the terms of each
// distinct word it has analysed, and gives each document its postings in
// the order their terms first occur, with the document's field lengths:
// no per-token string is kept past the worker. The indexing goroutine maps
// a worker's local ids to the index's term ids the first time it meets each
// one, in input order, so that the index numbers terms in the order a
// sequential build meets them.

// analyzeChunk is how many documents a worker analyses at a time.
const analyzeChunk = 64

// maxWordCache bounds a worker's memory of analysed words; it starts anew
// when full.
const maxWordCache = 1 << 17

// localPosting is a document's posting under a worker's term id.
type localPosting struct {
	term int32 // the worker's id of the term
	tf   [maxFields]uint8
}

// docAnalysis is one analysed document.
type docAnalysis struct {
	lens [maxFields]uint32
	// posts are the document's postings, in the order their terms first
	// occur (by field, then position).
	posts []localPosting
	// meta, words and nameTerms are the toolshelf ranker's, unused by the
	// reference ranker.
	meta      docMeta
	words     []string // meta.words()
	nameTerms uint8
}

// chunkResult is the analysis of one chunk by one worker.
type chunkResult struct {
	worker int
	// newTerms are the terms the worker met first in this chunk, in the
	// order of its ids.
	newTerms []string
	firstID  int32 // the worker's id of newTerms[0]
	docs     []docAnalysis
	posts    []localPosting // the documents' postings, end to end
}

// termWorker analyses documents on one goroutine.
type termWorker struct {
	id     int
	ids    map[string]int32      // term → local id
	nterms int32                 // local ids given so far
	words  map[string][]int32    // a word's text → the local ids of its terms
	texts  map[Namespace][]int32 // a server → its text's terms' local ids
	at     []int32               // local id → index+1 of its posting in cur.posts
	buf    []string
	res    *chunkResult
	start  int // index in res.posts of the current document's first posting
	field  int
	nodes  nodeArena // the current document's schema tree
}

func newTermWorker(id int) *termWorker {
	return &termWorker{id: id, ids: make(map[string]int32), words: make(map[string][]int32),
		texts: make(map[Namespace][]int32)}
}

// local returns the worker's id of term t, numbering it if new.
func (w *termWorker) local(t string) int32 {
	if id, ok := w.ids[t]; ok {
		return id
	}
	t = strings.Clone(t)
	id := w.nterms
	w.nterms++
	w.ids[t] = id
	w.at = append(w.at, 0)
	w.res.newTerms = append(w.res.newTerms, t)
	return id
}

// beginDoc starts a document's postings.
func (w *termWorker) beginDoc() { w.start = len(w.res.posts) }

// endDoc ends the document begun last and returns its postings.
func (w *termWorker) endDoc() []localPosting {
	posts := w.res.posts[w.start:]
	for _, p := range posts {
		w.at[p.term] = 0
	}
	return posts
}

// occur counts one occurrence of the term with local id id in the current
// field.
func (w *termWorker) occur(id int32) {
	i := w.at[id] - 1
	if i < 0 {
		w.res.posts = append(w.res.posts, localPosting{term: id})
		i = int32(len(w.res.posts) - 1 - w.start)
		w.at[id] = i + 1
	}
	if p := &w.res.posts[w.start+int(i)]; p.tf[w.field] < maxTF {
		p.tf[w.field]++
	}
}

// term counts one occurrence of term t in the current field.
func (w *termWorker) term(t string) { w.occur(w.local(t)) }

// text counts the terms of document text in the current field, as
// analyzer.fieldTerms gives them, and returns how many there were.
func (w *termWorker) text(an *analyzer, text string) uint32 {
	n := uint32(0)
	scan(text, func(rw rawWord) {
		ids, ok := w.words[rw.text]
		if !ok {
			w.buf = an.wordTerms(rw, w.buf[:0], true)
			ids = make([]int32, len(w.buf))
			for i, t := range w.buf {
				ids[i] = w.local(t)
			}
			if len(w.words) >= maxWordCache {
				clear(w.words)
			}
			w.words[strings.Clone(rw.text)] = ids
		}
		for _, id := range ids {
			w.occur(id)
		}
		n += uint32(len(ids))
	})
	return n
}

// buildIndex analyses docs with analyze on up to GOMAXPROCS goroutines and
// indexes each into p on the calling goroutine, in input order: it maps the
// document's terms to p's ids (calling newTerm, if not nil, with each term
// p did not have), adds its postings with p.addAnalysed and calls indexed
// (if not nil) with the document's slot, whether it replaced a document of
// the same name, and its analysis. analyze must fill in lens and may fill in the ranker's fields
// of docAnalysis; it counts terms with termWorker's methods.
func buildIndex(p *postings, docs []Document, analyze func(*termWorker, Document, *docAnalysis),
	newTerm func(string), indexed func(int32, bool, *docAnalysis)) {
	deferred := len(docs) >= deferDocs
	if deferred {
		p.deferPostings(len(docs))
		defer p.flush()
	}
	nchunks := (len(docs) + analyzeChunk - 1) / analyzeChunk
	nworkers := min(runtime.GOMAXPROCS(0), nchunks)
	// trans maps each worker's local ids to p's term ids (-1: not yet).
	trans := make([][]int32, max(nworkers, 1))
	merge := func(c int, res *chunkResult) {
		tr := trans[res.worker]
		if int(res.firstID) != len(tr) {
			panic(fmt.Sprintf("search: chunk %d of worker %d starts at term %d, want %d", c, res.worker, res.firstID, len(tr)))
		}
		base := len(tr)
		for range res.newTerms {
			tr = append(tr, -1)
		}
		trans[res.worker] = tr
		for i := range res.docs {
			a := &res.docs[i]
			for j := range a.posts {
				lp := &a.posts[j]
				g := tr[lp.term]
				if g < 0 {
					g = p.intern(res.newTermAt(lp.term, base), newTerm)
					tr[lp.term] = g
				}
				lp.term = g
			}
			name := docs[c*analyzeChunk+i].Name
			_, replaced := p.byName[name]
			slot := p.addAnalysed(name, a.lens, a.posts)
			if indexed != nil {
				indexed(slot, replaced, a)
			}
		}
	}
	analyzeChunkOf := func(w *termWorker, c int, res *chunkResult) {
		w.res = res
		res.worker, res.firstID = w.id, w.nterms
		end := min((c+1)*analyzeChunk, len(docs))
		res.docs = slices.Grow(res.docs[:0], end-c*analyzeChunk)[:end-c*analyzeChunk]
		for i := c * analyzeChunk; i < end; i++ {
			a := &res.docs[i-c*analyzeChunk]
			*a = docAnalysis{}
			w.beginDoc()
			analyze(w, docs[i], a)
			a.posts = w.endDoc()
		}
		if deferred {
			// p keeps the postings until flush: they move out of the
			// buffer, which the next chunk reuses, into one of their size.
			kept, at := slices.Clone(res.posts), 0
			for i := range res.docs {
				n := len(res.docs[i].posts)
				res.docs[i].posts = kept[at : at+n : at+n]
				at += n
			}
		}
		w.res = nil
	}
	if nworkers <= 1 {
		w := newTermWorker(0)
		res := &chunkResult{}
		for c := range nchunks {
			res.newTerms, res.posts = res.newTerms[:0], res.posts[:0]
			analyzeChunkOf(w, c, res)
			merge(c, res)
		}
		return
	}
	// Workers run at most ahead chunks ahead of the indexing, which bounds
	// the memory of analysed documents.
	ahead := 4 * nworkers
	results := make([]*chunkResult, nchunks)
	ready := make([]chan struct{}, nchunks)
	for c := range ready {
		ready[c] = make(chan struct{})
	}
	tokens := make(chan struct{}, ahead)
	free := make(chan *chunkResult, ahead)
	var next atomic.Int64
	var wg sync.WaitGroup
	for wi := range nworkers {
		wg.Go(func() {
			w := newTermWorker(wi)
			for {
				tokens <- struct{}{}
				c := int(next.Add(1)) - 1
				if c >= nchunks {
					<-tokens
					return
				}
				var res *chunkResult
				select {
				case res = <-free:
					res.newTerms, res.posts = res.newTerms[:0], res.posts[:0]
				default:
					res = &chunkResult{}
				}
				analyzeChunkOf(w, c, res)
				results[c] = res
				close(ready[c])
			}
		})
	}
	for c := range nchunks {
		<-ready[c]
		res := results[c]
		results[c] = nil
		merge(c, res)
		clear(res.docs) // drop the metadata's references
		select {
		case free <- res:
		default:
		}
		<-tokens
	}
	wg.Wait()
}

// newTermAt returns the term of local id id, which this chunk numbered;
// base is the number of the worker's terms before the chunk.
func (res *chunkResult) newTermAt(id int32, base int) string {
	return res.newTerms[int(id)-base]
}
