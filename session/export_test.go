package session

// SyncNoneForTest is a sync policy that never calls fsync(2), for tests
// that open thousands of files and are not about durability.
const SyncNoneForTest = syncNone
