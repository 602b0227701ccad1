package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/catalog/builtin"
)

// maxLine bounds one JSON-RPC message the stand-in server reads.
const maxLine = 4 << 20

// standInResult is the text every call to a stand-in tool answers.
const standInResult = "This is a stand-in server: it lists the tools of a catalog file and does not run them."

// builtinServer returns the built-in catalog's server of that name,
// reading its file alone (a stand-in starts in a few milliseconds).
func builtinServer(name string) (*catalog.Server, error) {
	data, err := fs.ReadFile(builtin.FS(), name+".json")
	if err != nil {
		return nil, fmt.Errorf("the built-in catalog has no server %q (see catalog/builtin/mcp): %w", name, err)
	}
	s, err := catalog.Parse(name+".json", data)
	if s == nil {
		return nil, err
	}
	return s, nil // a refused tool is left out, as the gateway would
}

// serveReplay is a stand-in MCP server over stdio (newline-delimited
// JSON-RPC): it answers initialize with the catalog server's name and
// instructions, tools/list with the catalog's tools as they were listed,
// and every tools/call with standInResult. It returns at the end of in.
func serveReplay(s *catalog.Server, in io.Reader, out io.Writer) error {
	tools := make([]map[string]any, len(s.Tools))
	for i, t := range s.Tools {
		m := map[string]any{"name": t.Name, "inputSchema": t.InputSchema}
		if t.Title != "" {
			m["title"] = t.Title
		}
		if t.Description != "" {
			m["description"] = t.Description
		}
		if len(t.OutputSchema) > 0 {
			m["outputSchema"] = t.OutputSchema
		}
		if t.Annotations != nil {
			m["annotations"] = t.Annotations
		}
		tools[i] = m
	}
	r := bufio.NewReaderSize(in, 64<<10)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false) // the catalog's text as listed
	for {
		line, err := readLine(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 {
			continue // a notification, or not JSON-RPC: nothing to answer
		}
		var result any
		switch req.Method {
		case "initialize":
			version := req.Params.ProtocolVersion
			if version == "" {
				version = "2025-06-18"
			}
			result = map[string]any{
				"protocolVersion": version,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": s.Name, "version": s.Version},
				"instructions":    s.Instructions,
			}
		case "ping":
			result = map[string]any{}
		case "tools/list":
			result = map[string]any{"tools": tools}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": standInResult}}}
		default:
			if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
				"error": map[string]any{"code": -32601, "message": "method not found: " + req.Method}}); err != nil {
				return err
			}
			continue
		}
		if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}); err != nil {
			return err
		}
	}
}

// readLine reads one line of at most maxLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a message of more than %d bytes", maxLine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && len(line) > 0 && errors.Is(err, io.EOF) {
			return line, nil
		}
		return line, err
	}
}

// standInCatalogs returns the built-in catalog's servers other than
// skip, in file-name order, and the tool count of those skipped.
func standInCatalogs(skip []string) ([]*catalog.Server, int, error) {
	servers, err := builtin.Servers()
	if err != nil {
		return nil, 0, err
	}
	var out []*catalog.Server
	skipped := 0
	for _, s := range servers {
		if slices.Contains(skip, s.Name) {
			skipped += len(s.Tools)
		} else {
			out = append(out, s)
		}
	}
	return out, skipped, nil
}
