package tool_test

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/tool"
)

// hashSuffix returns the first digits hex digits of
// SHA-256(server + "\x00" + tool), the collision suffix of the reference
// implementation.
func hashSuffix(server, tl string, digits int) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tl))
	return fmt.Sprintf("%x", sum)[:digits]
}

// hashed returns the suffixed form of a plain name: cut to 55 characters,
// then an underscore and 8 hex digits.
func hashed(plain, server, tl string) string {
	if len(plain) > 55 {
		plain = plain[:55]
	}
	return plain + "_" + hashSuffix(server, tl, 8)
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

func TestNamerPlainAndSanitised(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		server string
		tool   string
		want   string
	}{
		{"plain", "github", "create_issue", "mcp__github__create_issue"},
		{"mixed case and digits", "S3", "getObjectV2", "mcp__S3__getObjectV2"},
		{"dash in server", "github-ref", "get_file", "mcp__github_ref__get_file"},
		{"dash in tool", "fs", "read-file", "mcp__fs__read_file"},
		{"punctuation", "a.b", "x/y:z w", "mcp__a_b__x_y_z_w"},
		{"dollar and at", "s", "$ref@v1", "mcp__s___ref_v1"},
		{"non-ASCII in the BMP", "s", "café", "mcp__s__caf_"},
		{"CJK", "s", "搜索", "mcp__s____"},
		{"outside the BMP", "s", "go🚀", "mcp__s__go__"},
		{"outside the BMP in server", "🚀", "t", "mcp______t"},
		{"empty tool", "s", "", "mcp__s__"},
		{"exactly 64 characters", "s", strings.Repeat("x", 56), "mcp__s__" + strings.Repeat("x", 56)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tool.NewNamer()
			got := n.Name(tt.server, tt.tool)
			if got != tt.want {
				t.Errorf("Name(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
			}
			if diff := cmp.Diff([]string{tt.want}, n.Names(tt.server, []string{tt.tool})); diff != "" {
				t.Errorf("Names after Name (-want +got):\n%s", diff)
			}
			if o, ok := n.Lookup(got); !ok || o != (tool.Origin{Server: tt.server, Tool: tt.tool}) {
				t.Errorf("Lookup(%q) = %v, %v, want %s/%s", got, o, ok, tt.server, tt.tool)
			}
		})
	}
}

func TestNamerLongNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		server string
		tool   string
	}{
		{"65 characters", "s", strings.Repeat("x", 57)},
		{"long tool", "azure", "monitor_workspace_log_query_with_a_very_long_descriptive_suffix_name"},
		{"long server", strings.Repeat("server-", 10), "t"},
		{"long with dashes", "cloudflare", strings.Repeat("a-b-", 20)},
		{"long outside the BMP", "s", strings.Repeat("🚀", 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tool.NewNamer()
			got := n.Name(tt.server, tt.tool)
			plain := "mcp__" + tt.server + "__" + tt.tool
			plain = regexp.MustCompile(`[^A-Za-z0-9_]`).ReplaceAllStringFunc(plain, func(s string) string {
				if len([]rune(s)) == 1 && []rune(s)[0] > 0xFFFF {
					return "__"
				}
				return "_"
			})
			want := plain[:55] + "_" + hashSuffix(tt.server, tt.tool, 8)
			if got != want {
				t.Errorf("Name(%q, %q) = %q, want %q", tt.server, tt.tool, got, want)
			}
			if len(got) != tool.MaxNameLength || !validName.MatchString(got) {
				t.Errorf("Name(%q, %q) = %q (%d characters), want a valid 64-character name", tt.server, tt.tool, got, len(got))
			}
		})
	}
}

// TestNamerSameServerCollision checks that tools of one server whose names
// sanitise alike all get the hash suffix, whatever their order.
func TestNamerSameServerCollision(t *testing.T) {
	t.Parallel()
	const server = "fs"
	want := map[string]string{
		"read-file": hashed("mcp__fs__read_file", server, "read-file"),
		"read_file": hashed("mcp__fs__read_file", server, "read_file"),
		"read.file": hashed("mcp__fs__read_file", server, "read.file"),
		"write":     "mcp__fs__write",
	}
	lists := [][]string{
		{"read-file", "read_file"},
		{"read_file", "read-file"},
		{"write", "read_file", "read-file"},
		{"read-file", "write", "read.file", "read_file"},
		{"read.file", "read_file", "read-file", "write"},
	}
	for _, list := range lists {
		t.Run(strings.Join(list, ","), func(t *testing.T) {
			n := tool.NewNamer()
			got := n.Names(server, list)
			var wantNames []string
			for _, tl := range list {
				wantNames = append(wantNames, want[tl])
			}
			if diff := cmp.Diff(wantNames, got); diff != "" {
				t.Errorf("Names(%q, %q) (-want +got):\n%s", server, list, diff)
			}
		})
	}
	if a, b := want["read-file"], want["read_file"]; a == b {
		t.Fatalf("the two hashed names are equal: %s", a)
	}
}

// TestNamerCrossServerCollision checks that a name already given to another
// server's tool is suffixed, while its first owner keeps the plain name.
func TestNamerCrossServerCollision(t *testing.T) {
	t.Parallel()
	const plain = "mcp__git_hub__list"
	tests := []struct {
		name  string
		calls []tool.Origin
		want  []string
	}{
		{
			name:  "dash first",
			calls: []tool.Origin{{Server: "git-hub", Tool: "list"}, {Server: "git_hub", Tool: "list"}},
			want:  []string{plain, hashed(plain, "git_hub", "list")},
		},
		{
			name:  "underscore first",
			calls: []tool.Origin{{Server: "git_hub", Tool: "list"}, {Server: "git-hub", Tool: "list"}},
			want:  []string{plain, hashed(plain, "git-hub", "list")},
		},
		{
			name:  "three owners",
			calls: []tool.Origin{{Server: "git.hub", Tool: "list"}, {Server: "git_hub", Tool: "list"}, {Server: "git-hub", Tool: "list"}},
			want:  []string{plain, hashed(plain, "git_hub", "list"), hashed(plain, "git-hub", "list")},
		},
		{
			// Server "a" tool "b__c" and server "a__b" tool "c" both give
			// mcp__a__b__c.
			name:  "split differently",
			calls: []tool.Origin{{Server: "a", Tool: "b__c"}, {Server: "a__b", Tool: "c"}},
			want:  []string{"mcp__a__b__c", hashed("mcp__a__b__c", "a__b", "c")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tool.NewNamer()
			var got []string
			for _, o := range tt.calls {
				got = append(got, n.Names(o.Server, []string{o.Tool})[0])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			for i, o := range tt.calls {
				if lo, ok := n.Lookup(tt.want[i]); !ok || lo != o {
					t.Errorf("Lookup(%q) = %v, %v, want %v", tt.want[i], lo, ok, o)
				}
				// Asking again gives the same names.
				if again := n.Name(o.Server, o.Tool); again != tt.want[i] {
					t.Errorf("Name(%q, %q) again = %q, want %q", o.Server, o.Tool, again, tt.want[i])
				}
			}
		})
	}
}

// TestNamerStable checks that names survive refreshes that reorder the
// list, drop tools or add tools that would collide with them.
func TestNamerStable(t *testing.T) {
	t.Parallel()
	n := tool.NewNamer()
	first := n.Names("fs", []string{"read-file", "write", "list"})
	want := []string{"mcp__fs__read_file", "mcp__fs__write", "mcp__fs__list"}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Fatalf("first Names (-want +got):\n%s", diff)
	}

	// Reordered, one tool dropped, one new tool that sanitises like
	// read-file: read-file keeps its plain name; the newcomer is suffixed.
	got := n.Names("fs", []string{"read_file", "list", "read-file"})
	want = []string{hashed("mcp__fs__read_file", "fs", "read_file"), "mcp__fs__list", "mcp__fs__read_file"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second Names (-want +got):\n%s", diff)
	}

	// The dropped tool comes back with its old name, and the list in any
	// order gives the same names.
	for _, list := range [][]string{
		{"write", "read_file", "read-file", "list"},
		{"list", "read-file", "write", "read_file"},
	} {
		got := n.Names("fs", list)
		byTool := map[string]string{
			"read-file": "mcp__fs__read_file",
			"read_file": hashed("mcp__fs__read_file", "fs", "read_file"),
			"write":     "mcp__fs__write",
			"list":      "mcp__fs__list",
		}
		var want []string
		for _, tl := range list {
			want = append(want, byTool[tl])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Names(%q) (-want +got):\n%s", list, diff)
		}
	}

	// Another server's tools do not disturb these names.
	n.Names("fs2", []string{"read-file"})
	if got := n.Name("fs", "read-file"); got != "mcp__fs__read_file" {
		t.Errorf("Name(fs, read-file) = %q after another server registered, want mcp__fs__read_file", got)
	}
}

// TestNamerStableCollidingGroup checks that a group that collided keeps its
// suffixed names when the list later has only one of them.
func TestNamerStableCollidingGroup(t *testing.T) {
	t.Parallel()
	n := tool.NewNamer()
	n.Names("fs", []string{"read-file", "read_file"})
	got := n.Names("fs", []string{"read_file"})
	want := []string{hashed("mcp__fs__read_file", "fs", "read_file")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Names after the group shrank (-want +got):\n%s", diff)
	}
	if _, ok := n.Lookup("mcp__fs__read_file"); ok {
		t.Error("Lookup(mcp__fs__read_file) found a tool; no tool was given the plain name")
	}
}

// TestNamerHashTaken covers the unlikely case where the suffixed name is
// itself taken: the suffix grows by 4 digits.
func TestNamerHashTaken(t *testing.T) {
	t.Parallel()
	n := tool.NewNamer()
	squatter := "read_file_" + hashSuffix("fs", "read-file", 8)
	if got, want := n.Name("fs", squatter), "mcp__fs__"+squatter; got != want {
		t.Fatalf("Name(fs, %q) = %q, want %q", squatter, got, want)
	}
	got := n.Names("fs", []string{"read-file", "read_file"})
	want := []string{
		"mcp__fs__read_file_" + hashSuffix("fs", "read-file", 12),
		"mcp__fs__read_file_" + hashSuffix("fs", "read_file", 8),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
}

func TestNamerLookup(t *testing.T) {
	t.Parallel()
	n := tool.NewNamer()
	if _, ok := n.Lookup("mcp__s__t"); ok {
		t.Error("Lookup on a new Namer found a tool")
	}
	names := n.Names("s", []string{"t", "read-file", "read_file", strings.Repeat("y", 70)})
	tools := []string{"t", "read-file", "read_file", strings.Repeat("y", 70)}
	for i, name := range names {
		got, ok := n.Lookup(name)
		if want := (tool.Origin{Server: "s", Tool: tools[i]}); !ok || got != want {
			t.Errorf("Lookup(%q) = %v, %v, want %v, true", name, got, ok, want)
		}
	}
	for _, name := range []string{"mcp__s__read_file", "mcp__s__" + strings.Repeat("y", 70), "t", ""} {
		if got, ok := n.Lookup(name); ok {
			t.Errorf("Lookup(%q) = %v, want no tool", name, got)
		}
	}
}

func TestNamespaceName(t *testing.T) {
	t.Parallel()
	tests := []struct{ server, want string }{
		{"github", "mcp__github"},
		{"github-ref", "mcp__github_ref"},
		{"a.b c", "mcp__a_b_c"},
		{"Kube_8s", "mcp__Kube_8s"},
		{"🚀", "mcp____"},
		{"", "mcp__"},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			if got := tool.NamespaceName(tt.server); got != tt.want {
				t.Errorf("NamespaceName(%q) = %q, want %q", tt.server, got, tt.want)
			}
		})
	}
}

// TestNamerRandom assigns names to random tool lists drawn from a small
// alphabet that makes collisions common and checks the invariants: valid
// names, one name per tool, stable names, and Lookup as the inverse.
func TestNamerRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("ab-_.🚀")
	word := func(maxLen int) string {
		var b strings.Builder
		for range 1 + rng.IntN(maxLen) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	n := tool.NewNamer()
	assigned := map[tool.Origin]string{}
	owner := map[string]tool.Origin{}
	for round := range 400 {
		server := word(3)
		list := make([]string, rng.IntN(6))
		for i := range list {
			maxLen := 4
			if rng.IntN(5) == 0 {
				maxLen = 70
			}
			list[i] = word(maxLen)
		}
		got := n.Names(server, list)
		if len(got) != len(list) {
			t.Fatalf("round %d: Names returned %d names for %d tools", round, len(got), len(list))
		}
		for i, name := range got {
			o := tool.Origin{Server: server, Tool: list[i]}
			if !validName.MatchString(name) {
				t.Fatalf("round %d: %v got invalid name %q", round, o, name)
			}
			if prev, ok := assigned[o]; ok && prev != name {
				t.Fatalf("round %d: %v renamed from %q to %q", round, o, prev, name)
			}
			if prev, ok := owner[name]; ok && prev != o {
				t.Fatalf("round %d: %q given to both %v and %v", round, name, prev, o)
			}
			assigned[o] = name
			owner[name] = o
		}
	}
	for name, o := range owner {
		if got, ok := n.Lookup(name); !ok || got != o {
			t.Errorf("Lookup(%q) = %v, %v, want %v", name, got, ok, o)
		}
	}
}

func TestNamerConcurrent(t *testing.T) {
	t.Parallel()
	n := tool.NewNamer()
	var wg sync.WaitGroup
	results := make([][]string, 8)
	for w := range results {
		wg.Go(func() {
			for i := range 100 {
				server := fmt.Sprintf("s%d", i%4)
				got := n.Names(server, []string{"read-file", "read_file", fmt.Sprint("t", w)})
				n.Lookup(got[0])
				if i == 99 {
					results[w] = got
				}
			}
		})
	}
	wg.Wait()
	for w, got := range results {
		want := []string{
			hashed("mcp__s3__read_file", "s3", "read-file"),
			hashed("mcp__s3__read_file", "s3", "read_file"),
			fmt.Sprint("mcp__s3__t", w),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("worker %d (-want +got):\n%s", w, diff)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"read_file", "read_file", true},
		{"read_file", "Read_file", false},
		{"read_*", "read_file", true},
		{"read_*", "read_", true},
		{"*_file", "read_file", true},
		{"*", "", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "acb", false},
		{"a*a", "a", false},
		{"mcp__github__*", "mcp__gitlab__x", false},
	} {
		if got := tool.MatchPattern(c.pattern, c.name); got != c.want {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}
