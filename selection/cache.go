package selection

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf/internal/atomicfile"
)

// DefaultTTL is how long a cached selection is used.
const DefaultTTL = 24 * time.Hour

// Key is what a cached selection depends on.
type Key struct {
	// Features are the task's normalised features (see Features).
	Features string
	// Pool is the catalog's hash: any change to the tools, their briefs
	// or definitions misses.
	Pool string
	// Model is the model id that selected.
	Model string
	// System is a hash of the system prompt the selection was made for.
	System string
}

// String returns the key as a hex digest.
func (k Key) String() string {
	h := sha256.New()
	for _, s := range []string{k.Features, k.Pool, k.Model, k.System} {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// HashText returns a short hash of a text, for Key.System.
func HashText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// cacheEntry is one cached selection.
type cacheEntry struct {
	Names   []string  `json:"names"`
	Groups  []string  `json:"groups,omitempty"`
	Created time.Time `json:"created"`
}

// Cache is the pattern cache: selections by task pattern. It is safe for
// concurrent use. The zero value is not usable; call NewCache.
type Cache struct {
	mu      sync.Mutex
	ttl     time.Duration
	now     func() time.Time
	entries map[string]*cacheEntry
}

// NewCache returns an empty cache whose entries live ttl (DefaultTTL when
// zero or less). now is the clock (time.Now when nil).
func NewCache(ttl time.Duration, now func() time.Time) *Cache {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Cache{ttl: ttl, now: now, entries: map[string]*cacheEntry{}}
}

// Get returns the cached selection for k, if one is alive.
func (c *Cache) Get(k Key) (names, groups []string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := k.String()
	e, found := c.entries[key]
	if !found {
		return nil, nil, false
	}
	if c.now().Sub(e.Created) >= c.ttl {
		delete(c.entries, key)
		return nil, nil, false
	}
	return slices.Clone(e.Names), slices.Clone(e.Groups), true
}

// Put remembers a selection for k.
func (c *Cache) Put(k Key, names, groups []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[k.String()] = &cacheEntry{Names: slices.Clone(names), Groups: slices.Clone(groups), Created: c.now()}
}

// Load adds the live entries of a file written by Save; a missing file is
// an empty cache. A damaged file is an error that names it; nothing of the
// cache is changed then.
func (c *Cache) Load(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var entries map[string]*cacheEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return fmt.Errorf("selection cache %s is damaged (%v); delete it to start afresh", path, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for k, e := range entries {
		if e != nil && now.Sub(e.Created) < c.ttl {
			c.entries[k] = e
		}
	}
	return nil
}

// Save writes the live entries to path (0600, through a temporary file
// renamed into place, so a crash leaves the old file or the new one).
func (c *Cache) Save(path string) error {
	c.mu.Lock()
	live := map[string]*cacheEntry{}
	now := c.now()
	for k, e := range c.entries {
		if now.Sub(e.Created) < c.ttl {
			live[k] = e
		}
	}
	data, err := json.Marshal(live)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}
