package gateway

import (
	"bytes"
	"io"
	"log/slog"
	"time"
)

// SessionStores returns how many client sessions' stores g holds.
func SessionStores(g *Gateway) int { return g.stores.len() }

// SetMaxSessionStores sets how many sessions' stores g holds at most.
func SetMaxSessionStores(g *Gateway, n int) {
	g.stores.mu.Lock()
	defer g.stores.mu.Unlock()
	g.stores.max = n
}

// FilterLines runs the stdio line filter over r as ServeStdio does. It
// returns what the SDK reads, what the filter answered, and the largest
// buffer it held while reading r.
func FilterLines(r io.Reader) (read, answered []byte, maxBuffer int, err error) {
	var out bytes.Buffer
	p := &probe{r: r}
	f := newLineFilter(p, &lockedWriter{w: nopWriteCloser{&out}}, slog.New(slog.DiscardHandler))
	p.f = f
	read, err = io.ReadAll(f)
	return read, out.Bytes(), p.max, err
}

// probe samples the filter's buffer at each read of its input.
type probe struct {
	r   io.Reader
	f   *lineFilter
	max int
}

func (p *probe) Read(b []byte) (int, error) {
	p.max = max(p.max, cap(p.f.buf))
	return p.r.Read(b)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// SetAuthClock sets the clock a's checks of exp, nbf and key ages read.
// Set it before a serves.
func SetAuthClock(a *Auth, now func() time.Time) { a.now = now }

// DirectFollows reports whether g's direct surface has made its tools and
// follows the registry.
func DirectFollows(g *Gateway) bool {
	if g.direct == nil {
		return false
	}
	g.direct.mu.Lock()
	defer g.direct.mu.Unlock()
	return g.direct.cancel != nil
}
