package gateway

// SessionStores returns how many client sessions' stores g holds.
func SessionStores(g *Gateway) int { return g.stores.len() }

// SetMaxSessionStores sets how many sessions' stores g holds at most.
func SetMaxSessionStores(g *Gateway, n int) {
	g.stores.mu.Lock()
	defer g.stores.mu.Unlock()
	g.stores.max = n
}
