package search_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/toolshelf/toolshelf/search"
)

// memorySizes are the catalog sizes BenchmarkIndexMemory indexes.
var memorySizes = []int{10000, 100000}

// BenchmarkIndexMemory measures the heap an index holds once built: the
// live heap after building it, minus the live heap before, each read after
// a collection. It reports that per tool (B/tool) beside the bytes of the
// tools' own definitions per tool (def-B/tool: name, server name,
// description and schema, and each server's name, description and
// instructions once), which the caller holds anyway.
func BenchmarkIndexMemory(b *testing.B) {
	for _, mode := range search.Modes() {
		b.Run("ranker="+mode, func(b *testing.B) {
			for _, n := range memorySizes {
				b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
					docs := benchDocs(b, n)
					// The tables every ranker shares are parsed once,
					// before the first measure.
					benchRanker(b, mode).Add(docs[:1]...)
					var held int64
					for b.Loop() {
						before := liveHeap()
						r := benchRanker(b, mode)
						r.Add(docs...)
						held += liveHeap() - before
						runtime.KeepAlive(r)
					}
					b.ReportMetric(float64(held)/float64(b.N)/float64(n), "B/tool")
					b.ReportMetric(float64(definitionBytes(docs))/float64(n), "def-B/tool")
				})
			}
		})
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// definitionBytes returns the bytes of the documents' definitions: each
// one's name, original name, description and schema, and each distinct
// namespace's name, description and instructions once.
func definitionBytes(docs []search.Document) int {
	total := 0
	seen := make(map[search.Namespace]bool)
	for _, d := range docs {
		total += len(d.Name) + len(d.OriginalName) + len(d.Description) + len(d.Parameters)
		if !seen[d.Namespace] {
			seen[d.Namespace] = true
			total += len(d.Namespace.Name) + len(d.Namespace.Description) + len(d.Namespace.Instructions)
		}
	}
	return total
}
