package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// Env is the whole environment of a Claude Code run in home, a fresh
// folder: PATH (node, for stdio MCP servers), a home and XDG folders
// under it, TMPDIR (where Claude Code keeps task output) under it, and
// the settings that stop telemetry, error reports, update checks and
// other nonessential traffic. Nothing of the developer's configuration,
// keys or Claude Code settings gets in. The caller creates home/tmp.
func Env(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
}

// Event is a line of Claude Code's stream-json output (claude -p
// --output-format stream-json), the fields toolshelf reads.
type Event struct {
	// Type is "system" (Subtype "init": Tools and MCPServers),
	// "assistant", "user" or "result".
	Type       string   `json:"type"`
	Subtype    string   `json:"subtype"`
	Tools      []string `json:"tools"`
	MCPServers []Server `json:"mcp_servers"`
	Message    struct {
		Content []Block `json:"content"`
	} `json:"message"`
	// IsError and Result are the result line's.
	IsError    bool   `json:"is_error"`
	Result     string `json:"result"`
	Usage      Usage  `json:"usage"`
	ModelUsage map[string]struct {
		ContextWindow int `json:"contextWindow"`
	} `json:"modelUsage"`
}

// Server is an MCP server of the init line, with its connection status.
type Server struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Block is a content block of a message: a tool_use (ID, Name) or a
// tool_result (ToolUseID, IsError, Content), among others.
type Block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// Usage is a result line's token counts.
type Usage struct {
	Input      int `json:"input_tokens"`
	CacheWrite int `json:"cache_creation_input_tokens"`
	CacheRead  int `json:"cache_read_input_tokens"`
}

// Text is a tool_result's content as text: the string, or its text blocks
// joined by newlines.
func (b Block) Text() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(b.Content, &blocks)
	texts := make([]string, len(blocks))
	for i, x := range blocks {
		texts[i] = x.Text
	}
	return strings.Join(texts, "\n")
}
