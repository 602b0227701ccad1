package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolKeys are the keys of a tool object in the order a person reads
// them, as MCP's schema lists them; others follow in the order they come.
var toolKeys = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// readableOrder rewrites a tool object with its keys in toolKeys' order,
// every value as it is.
func readableOrder(tool json.RawMessage) (json.RawMessage, error) {
	keys, values, err := objectEntries(tool)
	if err != nil {
		return nil, err
	}
	rank := func(k string) int {
		if i := slices.Index(toolKeys, k); i >= 0 {
			return i
		}
		return len(toolKeys)
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank(keys[a]) - rank(keys[b]) })
	var b bytes.Buffer
	b.WriteByte('{')
	for n, i := range order {
		if n > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(keys[i])
		b.Write(k)
		b.WriteByte(':')
		b.Write(values[i])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// catalogFile is a catalog file in the built-in catalog's format: the
// server's fields, then its tools/list answer.
type catalogFile struct {
	Server          string                  `json:"server"`
	Version         string                  `json:"version,omitempty"`
	Title           string                  `json:"title,omitempty"`
	Description     string                  `json:"description,omitempty"`
	Instructions    string                  `json:"instructions,omitempty"`
	ServerInfo      *mcp.Implementation     `json:"serverInfo,omitempty"`
	ProtocolVersion string                  `json:"protocolVersion,omitempty"`
	Capabilities    *mcp.ServerCapabilities `json:"capabilities,omitempty"`
	ObtainedWith    obtainedWith            `json:"obtained_with"`
	Tools           []json.RawMessage       `json:"tools"`
}

// obtainedWith says how a dumped catalog file was made. The command and
// its environment are left out: they may hold secrets.
type obtainedWith struct {
	Transport string `json:"transport"`
	Client    string `json:"client"`
}

// CatalogFile lists the tools of the connected server named name (every
// page) and returns them as a catalog file in the built-in catalog's
// format, which package catalog reads: "server", the version, title and
// instructions the server gave in its initialize answer, the configured
// description, "serverInfo", "protocolVersion", "capabilities",
// "obtained_with" (the transport, never the command or its environment)
// and "tools", each tool as toolshelf receives it (name, title,
// description, inputSchema first; the schemas' keys in the order the SDK
// writes them). It fails naming the server's state when
// it is not connected.
func (m *Manager) CatalogFile(ctx context.Context, name string) ([]byte, error) {
	s := m.byName[name]
	if s == nil {
		return nil, fmt.Errorf("no MCP server %q is configured", name)
	}
	m.mu.Lock()
	state, serr, c := s.state, s.err, s.conn
	m.mu.Unlock()
	if state != Connected || c == nil {
		if serr != nil {
			return nil, fmt.Errorf("%s is not connected (%s): %w", s.describe(), state, serr)
		}
		return nil, fmt.Errorf("%s is not connected (%s)", s.describe(), state)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	doc := catalogFile{Server: name, Description: s.cfg.Description, Instructions: c.instructions,
		ObtainedWith: obtainedWith{Transport: s.cfg.Type, Client: m.opts.ClientName + " " + m.opts.ClientVersion},
		Tools:        []json.RawMessage{}}
	if res := c.session.InitializeResult(); res != nil {
		doc.ServerInfo, doc.ProtocolVersion, doc.Capabilities = res.ServerInfo, res.ProtocolVersion, res.Capabilities
		if res.ServerInfo != nil {
			doc.Version, doc.Title = res.ServerInfo.Version, res.ServerInfo.Title
		}
	}
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return nil, s.redact.Err(fmt.Errorf("listing the tools of %s: %w", s.describe(), err))
		}
		raw, err := json.Marshal(wholeTool(t))
		if err == nil {
			raw, err = readableOrder(raw)
		}
		if err != nil {
			return nil, fmt.Errorf("encoding the tool %q of %s: %w", t.Name, s.describe(), err)
		}
		doc.Tools = append(doc.Tools, raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
