package search

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
)

// TestShortestIsSorted holds shortest, which keeps the few best slots of a
// key as it reads them, to sorting them all: the names of candidates not
// yet suggested, shortest first, then first indexed, up to maxNearest. The
// index's slots are freed and reused, so that slot order is not insertion
// order, and names of one length are many, so that ties are common.
func TestShortestIsSorted(t *testing.T) {
	r, err := NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("get list create issue pull request file user team page")
	rng := rand.New(rand.NewPCG(5, 9))
	var docs []Document
	for i := range 3000 {
		name := words[rng.IntN(len(words))] + "_" + words[rng.IntN(len(words))]
		docs = append(docs, Document{Name: fmt.Sprintf("%s_%d", name, i%(1+rng.IntN(300))), Description: "A tool."})
	}
	r.Add(docs...)
	var removed []string
	for i := 0; i < len(docs); i += 5 {
		removed = append(removed, docs[i].Name)
	}
	r.Remove(removed...)
	r.Add(docs[:len(removed)/2]...)

	want := func(out []string, slots []int32, c *candidates) []string {
		slots = slices.Clone(slots)
		slices.SortFunc(slots, func(a, b int32) int {
			if la, lb := len(r.docs[a].display), len(r.docs[b].display); la != lb {
				return la - lb
			}
			return compareSeq(r.idx, a, b)
		})
		for _, slot := range slots {
			if len(out) == maxNearest {
				break
			}
			if name := r.docs[slot].display; !c.mask[slot] && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
		return out
	}
	checked := 0
	for round := range 40 {
		var exclude []string
		for _, d := range docs {
			if rng.IntN(4) == 0 {
				exclude = append(exclude, d.Name)
			}
		}
		if round%2 == 0 {
			exclude = nil
		}
		s := r.scr.get(len(r.idx.slots))
		c := r.idx.candidates(exclude, s)
		for key, slots := range r.nameWords.all() {
			var out []string
			for range rng.IntN(maxNearest) {
				out = append(out, docs[rng.IntN(len(docs))].Name)
			}
			if rng.IntN(3) == 0 && len(slots) > 0 && len(out) < maxNearest {
				out = append(out, r.docs[slots[rng.IntN(len(slots))]].display)
			}
			got := r.shortest(slices.Clone(out), slots, &c)
			if w := want(slices.Clone(out), slots, &c); !slices.Equal(got, w) {
				t.Fatalf("key %q, %d slots, out %q: got %q, want %q", key, len(slots), out, got, w)
			}
			checked++
		}
		r.scr.put(s)
	}
	if checked < 100 {
		t.Errorf("checked %d keys; the index tests little", checked)
	}
}

// bagDistance is the lower bound of the edit distance nearest used
// before it read signatures: the characters one string has that the other
// lacks, counted as multisets, or 0 unless both are ASCII.
func bagDistance(a, b string) int {
	var count [utf8.RuneSelf]int32
	for i := 0; i < len(a); i++ {
		if a[i] >= utf8.RuneSelf {
			return 0
		}
		count[a[i]]++
	}
	matched := 0
	for i := 0; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return 0
		}
		if count[b[i]] > 0 {
			count[b[i]]--
			matched++
		}
	}
	return max(len(a), len(b)) - matched
}

// randomWord returns a string of up to n runes from a small alphabet, so
// that random pairs are often close, with non-ASCII runes and invalid
// bytes.
func randomWord(rng *rand.Rand, n int) string {
	alphabet := []string{"a", "b", "c", "d", "e", "_", "1", "é", "列", "\xff"}
	var b strings.Builder
	for range rng.IntN(n + 1) {
		b.WriteString(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

// TestNearProbeWithin holds within, and the signature bound it prunes
// with, to the library's edit distance.
func TestNearProbeWithin(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var p nearProbe
	for range 2000 {
		probe := randomWord(rng, 10)
		p.set(probe)
		if n := utf8.RuneCountInString(probe); len(p.runes) != n {
			t.Fatalf("set(%q): %d runes, want %d", probe, len(p.runes), n)
		}
		for range 20 {
			key := randomWord(rng, 10)
			k := rng.IntN(6)
			want := levenshtein.ComputeDistance(probe, key)
			ki := newKeyInfo(key)
			if b := max(bits.OnesCount64(p.sig&^ki.sig), bits.OnesCount64(ki.sig&^p.sig)); b > want {
				t.Fatalf("the signatures of %q and %q differ by %d; their distance is %d", probe, key, b, want)
			}
			if got, ok := p.within(ki, k); ok != (want <= k) || ok && got != want {
				t.Fatalf("within(%q, %q, %d) = %d, %v; the distance is %d", probe, key, k, got, ok, want)
			}
		}
	}
}

// TestEditBitsIsLevenshtein holds the bit-parallel distance to the
// library's on probes of 1 to 64 runes, the longest one word holds.
func TestEditBitsIsLevenshtein(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var p nearProbe
	for i := range 20000 {
		probe := randomWord(rng, 64)
		if i%10 == 0 {
			probe = strings.Repeat("ab", 32) // exactly 64
		}
		if n := utf8.RuneCountInString(probe); n == 0 || n > 64 {
			continue
		}
		p.set(probe)
		key := randomWord(rng, 80)
		if i%2 == 0 {
			key = strings.Map(func(r rune) rune { return r % utf8.RuneSelf }, key) // ASCII
		}
		want := levenshtein.ComputeDistance(probe, key)
		if got, ok := p.editBits(newKeyInfo(key), 200); !ok || got != want {
			t.Fatalf("editBits(%q, %q) = %d, %v, want %d", probe, key, got, ok, want)
		}
		k := rng.IntN(want + 3)
		if got, ok := p.editBits(newKeyInfo(key), k); ok != (want <= k) || ok && got != want {
			t.Fatalf("editBits(%q, %q, %d) = %d, %v; the distance is %d", probe, key, k, got, ok, want)
		}
	}
}

func FuzzNearProbe(f *testing.F) {
	f.Add("create_issue", "create_gist", 6)
	f.Add("列出", "列表", 1)
	f.Add(strings.Repeat("x", 70), strings.Repeat("x", 66)+"y", 5)
	f.Fuzz(func(t *testing.T, a, b string, k int) {
		k = k % 64
		want := levenshtein.ComputeDistance(a, b)
		var p nearProbe
		p.set(a)
		if got, ok := p.within(newKeyInfo(b), k); ok != (want <= k) || ok && got != want {
			t.Fatalf("within(%q, %q, %d) = %d, %v; the distance is %d", a, b, k, got, ok, want)
		}
	})
}

// nearestOracle is nearest as it was first written: every key of the
// maps, by its length, then bagDistance, then the library's full edit
// distance.
func nearestOracle(r *BM25F, probes []string, c *candidates) []string {
	return r.nearestBy(probes, c, func(probe string, vocab slotLists, maxDist int, yield func(string, int)) {
		n := utf8.RuneCountInString(probe)
		for key := range vocab.all() {
			if d := utf8.RuneCountInString(key) - n; d > maxDist || -d > maxDist {
				continue
			}
			if bagDistance(probe, key) > maxDist {
				continue
			}
			if dist := levenshtein.ComputeDistance(probe, key); dist <= maxDist {
				yield(key, dist)
			}
		}
	})
}

// TestNearestIsOracle holds nearest's pruned comparisons to comparing every
// name in full, over the built-in catalog: misspelt tool names and name
// words, words no name is near, and non-ASCII probes.
func TestNearestIsOracle(t *testing.T) {
	r, err := NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := fuzzDocs(t, 2000)
	r.Add(docs...)
	s := r.scr.get(len(r.idx.slots))
	defer r.scr.put(s)
	c := r.idx.candidates(nil, s)
	rng := rand.New(rand.NewPCG(7, 8))
	probes := []string{"mcp__github__create_issue", "xyzzy", "plugh", "kubectl_gte", "列出集群", "créate_issüe", "a", "ab"}
	for range 300 {
		d := docs[rng.IntN(len(docs))]
		name := []rune(d.OriginalName)
		if len(name) == 0 {
			continue
		}
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(name))
			switch rng.IntN(3) {
			case 0:
				name = slices.Delete(name, i, i+1)
			case 1:
				name = slices.Insert(name, i, rune('a'+rng.IntN(26)))
			default:
				name[i] = rune('a' + rng.IntN(26))
			}
			if len(name) == 0 {
				break
			}
		}
		probes = append(probes, string(name))
	}
	suggested := 0
	for _, p := range probes {
		got, want := r.nearest([]string{p}, &c), nearestOracle(r, []string{p}, &c)
		if !slices.Equal(got, want) {
			t.Fatalf("nearest(%q) = %q, want %q", p, got, want)
		}
		suggested += len(got)
	}
	if got, want := r.nearest(probes[:3], &c), nearestOracle(r, probes[:3], &c); !slices.Equal(got, want) {
		t.Fatalf("nearest(%q) = %q, want %q", probes[:3], got, want)
	}
	if suggested < len(probes) {
		t.Fatalf("%d names suggested for %d probes: the probes are not near enough to test", suggested, len(probes))
	}

	// The keys a hint reads follow the index: a name added is suggested,
	// and a name dropped is not.
	added := Document{Name: "mcp__qq__zzqx_frobnicate_widget", OriginalName: "zzqx_frobnicate_widget", Description: "A tool."}
	near := func(probe string) []string {
		t.Helper()
		s := r.scr.get(len(r.idx.slots))
		defer r.scr.put(s)
		c := r.idx.candidates(nil, s)
		got, want := r.nearest([]string{probe}, &c), nearestOracle(r, []string{probe}, &c)
		if !slices.Equal(got, want) {
			t.Fatalf("nearest(%q) = %q, want %q", probe, got, want)
		}
		return got
	}
	r.Add(added)
	for _, probe := range []string{"zzqx_frobnicate_widgt", "zzqxx"} {
		if got := near(probe); !slices.Contains(got, added.Name) {
			t.Fatalf("nearest(%q) = %q after adding %s", probe, got, added.Name)
		}
	}
	r.Remove(added.Name)
	for _, probe := range []string{"zzqx_frobnicate_widgt", "zzqxx"} {
		if got := near(probe); slices.Contains(got, added.Name) {
			t.Fatalf("nearest(%q) = %q after removing %s", probe, got, added.Name)
		}
	}
	// A dropped key leaves the table, which would otherwise keep it.
	for _, vocab := range []slotLists{r.shortKeys, r.nameWords} {
		for _, k := range keyTable(vocab) {
			if strings.Contains(k.key, "zzqx") {
				t.Fatalf("the hint's keys hold %q after its tool was removed", k.key)
			}
		}
	}
}
