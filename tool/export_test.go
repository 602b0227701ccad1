package tool

// LogLen returns the number of records in the registry's ChangedSince log,
// so tests can check that compaction keeps it bounded.
func LogLen(r *Registry) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.log)
}

// CheckSchema is the schema check without the memo, for benchmarks.
var CheckSchema = checkSchema
