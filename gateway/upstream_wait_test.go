package gateway_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
)

// gatedPromptServer is promptServer behind a transport whose one
// connection waits for gate.
func gatedPromptServer(t *testing.T, gate chan struct{}) mcp.Transport {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := promptServer("alpha", true).Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	return gated{Transport: ct, release: gate}
}

// initialize starts a client's initialize of the meta surface and returns
// where its session comes.
func initialize(t *testing.T, g *gateway.Gateway) <-chan *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server(gateway.Meta).Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan *mcp.ClientSession, 1)
	go func() {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(t.Context(), ct, nil)
		if err != nil {
			t.Error(err)
		}
		done <- cs
	}()
	return done
}

// TestInitializeWaitsForUpstreamCapabilities: a client's initialize waits
// while an upstream server connects and is listed, then advertises its
// prompts, resources and completions; an upstream that does not connect
// holds it for DefaultCapabilityWait, and no more.
func TestInitializeWaitsForUpstreamCapabilities(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		g := newGateway(t, mcpclient.ServerConfig{Name: "alpha", Transport: gatedPromptServer(t, gate)})
		done := initialize(t, g)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("initialize was answered while the upstream server was connecting")
		default:
		}
		close(gate)
		cs := <-done
		if cs == nil {
			return
		}
		defer cs.Close()
		if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil || caps.Resources == nil || caps.Completions == nil {
			t.Errorf("capabilities %+v, want the upstream's prompts, resources and completions", caps)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		defer close(gate)
		g := newGateway(t, mcpclient.ServerConfig{Name: "alpha", Transport: gatedPromptServer(t, gate), Timeout: time.Minute})
		start := time.Now()
		cs := <-initialize(t, g)
		if cs == nil {
			return
		}
		defer cs.Close()
		if waited := time.Since(start); waited != gateway.DefaultCapabilityWait {
			t.Errorf("initialize waited %v for a server that does not connect, want %v", waited, gateway.DefaultCapabilityWait)
		}
		if caps := cs.InitializeResult().Capabilities; caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil {
			t.Errorf("capabilities %+v, want none of an upstream not yet listed", caps)
		}
	})
}
