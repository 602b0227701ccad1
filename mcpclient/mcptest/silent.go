package mcptest

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Silent returns a transport to a server that never answers: it takes
// every message (initialize included) and sends none, until the
// connection is closed. It is a server that hangs while it starts.
func Silent() mcp.Transport { return silent{} }

type silent struct{}

func (silent) Connect(context.Context) (mcp.Connection, error) {
	return &silentConn{closed: make(chan struct{})}, nil
}

type silentConn struct {
	once   sync.Once
	closed chan struct{}
}

func (c *silentConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-c.closed:
		return nil, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *silentConn) Write(context.Context, jsonrpc.Message) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
		return nil
	}
}

func (c *silentConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *silentConn) SessionID() string { return "" }
