package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
)

// hashLen is the number of hex digits of the collision suffix.
const hashLen = 8

// NamespaceName returns the model-facing namespace of a server's tools:
// mcp__ followed by the sanitised server name (mcp__github_ref for
// github-ref).
func NamespaceName(server string) string {
	return "mcp__" + sanitize(server)
}

// sanitize replaces every character outside [A-Za-z0-9_] by an underscore.
// Characters outside the Basic Multilingual Plane count twice, as UTF-16
// code units do, so names agree with the reference implementation.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("__")
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Namer assigns model-facing names to server tools and remembers them, so a
// tool keeps its name across refreshes of its server's tool list. It is safe
// for concurrent use; one Namer serves every server of a registry.
//
// The name of tool t of server s is mcp__<s>__<t> with every character
// outside [A-Za-z0-9_] replaced by an underscore. When that name is longer
// than [MaxNameLength], already belongs to another tool, or is shared by two
// tools of the same list (read-file and read_file), the name is cut to 55
// characters and followed by an underscore and the first 8 hex digits of
// SHA-256(s + "\x00" + t). Every tool of a colliding group gets the suffix,
// whatever the order of the list.
type Namer struct {
	mu    sync.Mutex        // guards the maps
	names map[Origin]string // assigned names
	owner map[string]Origin // reverse of names
}

// NewNamer returns a Namer that has assigned no names.
func NewNamer() *Namer {
	return &Namer{names: make(map[Origin]string), owner: make(map[string]Origin)}
}

// Names returns the model-facing names of a server's tools, in the order of
// tools, assigning names to tools it has not seen before.
func (n *Namer) Names(server string, tools []string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	plain := make([]string, len(tools))
	count := make(map[string]int, len(tools))
	for i, t := range tools {
		plain[i] = sanitize("mcp__" + server + "__" + t)
		count[plain[i]]++
	}
	out := make([]string, len(tools))
	for i, t := range tools {
		key := Origin{Server: server, Tool: t}
		if name, ok := n.names[key]; ok {
			out[i] = name
			continue
		}
		name := plain[i]
		if len(name) > MaxNameLength || count[name] > 1 || n.takenLocked(name, key) {
			name = n.hashedLocked(plain[i], key)
		}
		n.names[key] = name
		n.owner[name] = key
		out[i] = name
	}
	return out
}

// Name returns the model-facing name of one server tool.
func (n *Namer) Name(server, tool string) string {
	return n.Names(server, []string{tool})[0]
}

// Lookup returns the server tool that was given the model-facing name.
func (n *Namer) Lookup(name string) (Origin, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	o, ok := n.owner[name]
	return o, ok
}

func (n *Namer) takenLocked(name string, key Origin) bool {
	o, ok := n.owner[name]
	return ok && o != key
}

// hashedLocked returns plain cut short and followed by the hash suffix. In
// the unlikely case that the result is taken too, it uses more digits.
func (n *Namer) hashedLocked(plain string, key Origin) string {
	sum := sha256.Sum256([]byte(key.Server + "\x00" + key.Tool))
	digest := hex.EncodeToString(sum[:])
	for digits := hashLen; ; digits += 4 {
		keep := min(len(plain), MaxNameLength-1-digits)
		name := plain[:keep] + "_" + digest[:digits]
		if !n.takenLocked(name, key) || digits+4 > MaxNameLength-1 {
			return name
		}
	}
}

// MatchPattern reports whether name matches pattern, in which * matches any
// run of characters (the empty one included) and everything else matches
// itself, case included.
func MatchPattern(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, last)
}
