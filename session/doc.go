// Package session persists a toolshelf agent's transcript as an
// append-only JSON Lines file holding a tree of entries: the only state an
// agent keeps between runs. The tree allows branching (move the leaf back
// and continue from there), compaction (a summary replaces old messages in
// the model's context, the old entries stay in the file) and forking into a
// new file.
//
// # File format
//
// A session file is UTF-8 JSON Lines: one JSON object per line, each line
// ended by "\n". Line 1 is the header:
//
//	{"type":"session","version":1,"id":"4f1c9a0b2d3e4f50","timestamp":"2026-01-02T15:04:05.123Z",
//	 "cwd":"/home/me/project","mcpFile":"/home/me/project/.toolshelf/mcp.json",
//	 "parentSession":"/path/of/source.jsonl","parentEntry":"9a0b1c2d"}
//
// id is 16 random hex digits; timestamp is RFC 3339 in UTC with
// milliseconds; cwd, mcpFile, parentSession and parentEntry are optional
// (mcpFile is the MCP servers file the session was started with; a forked
// session names the file and the entry it was forked from). version is the
// major version of the format, an integer; a reader rejects versions it
// does not know ([ErrUnsupportedVersion]). Additions that older readers can
// skip (new entry types, new fields) do not change it.
//
// Every other line is an entry, a node of the tree:
//
//	{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-02T15:04:05.200Z",
//	 "message":{"role":"user","content":[{"type":"text","text":"hello"}],"timestamp":1767366245200}}
//	{"type":"compaction","id":"e5f6a7b8","parentId":"a1b2c3d4","timestamp":"2026-01-02T15:09:00.000Z",
//	 "summary":"The user said hello.","firstKeptId":"","systemMessage":{"role":"system",...}}
//
// id is 8 random hex digits, unique in the file; parentId is the id of an
// entry earlier in the file, or null for a root (normally only the first
// entry); timestamp is as in the header. The entry types are:
//
//   - "message": message is an [llm.Message] in its JSON form (system
//     messages included: they are ordinary entries);
//   - "compaction": summary is the text that replaces the conversation
//     before firstKeptId, the id of the first entry kept verbatim (an
//     ancestor of the compaction, or "" to keep nothing); systemMessage,
//     when present, is the checkpoint of the prompt state: the replay
//     ([transcript.State.SystemMessage]) of every system message in the
//     context at the moment of the compaction.
//
// Entries of other types are kept (they are part of the tree and are
// copied by [Fork]) but ignored by [Session.Messages], so that files
// written by newer versions stay readable.
//
// The leaf, the current position, is the last entry of the file when it is
// opened; appending adds a child of the leaf and makes it the leaf.
// [Session.SetLeaf] moves the leaf to any entry (branch navigation); the
// move itself is not written, so it lasts until the next append creates a
// new branch or the session is closed.
//
// # Context
//
// [Session.Messages] is what the model is sent: the messages of the branch
// from the root to the leaf. When the branch has a compaction, the latest
// one wins and the context is its systemMessage checkpoint (when it has
// one), a user message with the summary prefixed by [SummaryPrefix], the
// messages of the entries from firstKeptId up to the compaction without
// the system messages (the checkpoint replaces them), then every message
// after the compaction.
//
// # Reading and recovery
//
// [Open] reads the whole file. A final line that has no newline and is not
// valid JSON is what a crash in the middle of a write leaves: it is
// dropped, the file is truncated to the end of the last complete line so
// that later appends stay well formed, and [Session.Recovered] reports the
// number of bytes dropped. A final line without newline that is valid JSON
// is a complete entry; a newline is written before the next entry. Any
// other problem (a line that is not valid JSON or not a valid entry, an
// unknown parentId, a duplicate id, a bad header) is a [*FormatError]
// naming the file and the line, and the file is not modified. With
// [Options.ReadOnly], Open never modifies the file: a torn line is dropped
// in memory only.
//
// Messages must pass [llm.Message.Validate]. They are kept in the form in
// which their encoding reads back unchanged (llm's decoder accepts a few
// forms its encoder does not write), so an entry read, written and read
// again is the same entry.
//
// # Durability
//
// [Create] and [Fork] write the new file under a temporary name (a dot
// file ending in ".tmp") and rename it, so a session file never lacks its
// header or, for a fork, part of its copied entries.
//
// Each entry is written with a single write(2) call on a file opened with
// O_APPEND, so a process that is killed loses at most the entry being
// written, and that entry leaves at most a torn final line, which Open
// recovers. The [SyncPolicy] decides what survives a power loss or an
// operating system crash:
//
//   - [SyncOnClose] (the default) calls fsync(2) on the file in
//     [Session.Close] when anything was written since it was opened (and
//     on the directory of a file it created), and once after Open
//     truncates a torn line. What was written since then lives in the
//     operating system's page cache and can be lost with it, in part or
//     in whole: the last entries (leaving at worst a torn final line), or
//     a file created since (leaving it missing or empty).
//   - [SyncEveryEntry] calls fsync(2) after every write, before Append
//     returns, and on the directory when it creates a file: an entry that
//     Append reported as written survives a power loss. It costs one disk
//     flush per entry.
//
// A failed write is undone by truncating the file back; if that or an
// fsync fails, the session refuses further appends (reopen it to see what
// reached the file).
//
// # Concurrency
//
// A [*Session] is safe for concurrent use by multiple goroutines: appends
// are serialised, so the file order is the order in which they were
// accepted. A session file has at most one writer: two processes (or two
// Sessions) appending to the same file would each extend a tree the other
// does not know, and the turns of one would vanish from the other's
// branch. [Open], [Create] and [Fork] therefore take an exclusive advisory
// lock (flock(2)) on the file they open for appending and hold it until
// [Session.Close]; a second writer gets a [*LockedError] naming the
// holder's process id, where the system tells it (Linux). The system
// releases the lock when its holder exits, however it ends, so a killed
// process never leaves a session locked. Readers ([Options.ReadOnly],
// [List], [Fork]'s source) need no lock. Systems without flock(2) get no
// protection.
//
// Who it is for: programs that read, list or fork saved conversations; the
// root package writes them.
package session
