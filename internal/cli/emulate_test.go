//go:build unix

package cli

import (
	"context"
	"net"
	"strings"
	"testing"
)

// TestEmulateWarnsBeyondLoopback: emulate warns when its address can be
// reached from other machines, and only then.
func TestEmulateWarnsBeyondLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr net.Addr
		want string // "" for no warning
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8089}, ""},
		{&net.TCPAddr{IP: net.IPv4(127, 1, 2, 3), Port: 8089}, ""},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8089}, ""},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8089}, "listens on 0.0.0.0:8089 (every network interface)"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8089}, "listens on [::]:8089 (every network interface)"},
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 5), Port: 80}, "listens on 192.168.1.5:80 (an address other machines can reach)"},
	} {
		got := beyondLoopback(tc.addr)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || (got != "" && !strings.Contains(got, "--listen 127.0.0.1:PORT")) {
			t.Errorf("%v: %q, want %q", tc.addr, got, tc.want)
		}
	}
	// On the loopback address the command says nothing on stderr.
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &watcher{marker: "emulator listening", fn: cancel}, &watcher{}
	if code := Main(ctx, []string{"emulate", "--listen", "127.0.0.1:0"}, strings.NewReader(""), stdout, stderr); code != 0 || stderr.String() != "" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
