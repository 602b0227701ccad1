package cli

import (
	"context"
	"strings"
	"testing"
)

// serveToken runs serve --http addr with the token in $TOOLSHELF_TOKEN or
// --token and stops it as soon as it says it serves; it returns the exit
// status, stderr and whether it served.
func serveToken(t *testing.T, addr, token string, inEnv bool) (code int, stderr string, served bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	args := []string{"serve", "--mcp", testMCP(t, nil), "--metrics", "off", "--http", addr}
	if inEnv {
		t.Setenv("TOOLSHELF_TOKEN", token)
	} else {
		t.Setenv("TOOLSHELF_TOKEN", "")
		args = append(args, "--token", token)
	}
	errOut := &watcher{marker: "toolshelf gateway on", fn: cancel}
	code = Main(ctx, args, strings.NewReader(""), &watcher{}, errOut)
	return code, errOut.String(), strings.Contains(errOut.String(), "toolshelf gateway on")
}

// TestServeRefusesABadToken: a token with surrounding whitespace (a file
// with Windows line endings), a blank one or one with a control character
// is refused at start, on any address, with an error that names the
// problem and the fix; before, serve started and then no client matched.
func TestServeRefusesABadToken(t *testing.T) {
	const good = "0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		name, token string
		inEnv       bool
		want        []string
	}{
		{"windows line ending", good + "\r\n", false, []string{"--token (or $TOOLSHELF_TOKEN)", "surrounding whitespace", `"\r\n" after it`, "Windows line endings", "remove it"}},
		{"windows line ending in the environment", good + "\r", true, []string{"surrounding whitespace", `"\r" after it`}},
		{"leading space", " " + good, false, []string{"surrounding whitespace", `" " before it`}},
		{"blank", "   ", false, []string{"only whitespace", "openssl rand -hex 32"}},
		{"control character", "0123456789\aabcdef0123456789abcdef", false, []string{"control character", `"\a"`, "openssl rand -hex 32"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, errOut, served := serveToken(t, "127.0.0.1:0", c.token, c.inEnv)
			if served || code != 2 {
				t.Fatalf("serve started or failed otherwise with the token %q: exit %d, served %v:\n%s", c.token, code, served, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not say %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestServeBeyondLoopbackNeedsALongToken: on an address other machines
// can reach, a token shorter than 32 bytes is refused with the fix; on
// loopback a short one still serves.
func TestServeBeyondLoopbackNeedsALongToken(t *testing.T) {
	for _, token := range []string{"x", "short-token", "0123456789abcdef0123456789abcde"} {
		code, errOut, served := serveToken(t, "0.0.0.0:0", token, false)
		if served || code != 2 {
			t.Errorf("serve on 0.0.0.0 with the %d-byte token %q: exit %d, served %v:\n%s", len(token), token, code, served, errOut)
			continue
		}
		for _, w := range []string{"listens beyond this machine", "at least 32", "openssl rand -hex 32", "or listen on 127.0.0.1"} {
			if !strings.Contains(errOut, w) {
				t.Errorf("the %d-byte token: stderr does not say %q:\n%s", len(token), w, errOut)
			}
		}
		if len(token) > 1 && strings.Contains(errOut, token) {
			t.Errorf("the error shows the token:\n%s", errOut)
		}
	}
	if code, errOut, served := serveToken(t, "0.0.0.0:0", "0123456789abcdef0123456789abcdef", false); !served || code != 0 {
		t.Errorf("a 32-byte token on 0.0.0.0: exit %d, served %v:\n%s", code, served, errOut)
	}
	if code, errOut, served := serveToken(t, "127.0.0.1:0", "x", true); !served || code != 0 {
		t.Errorf("a 1-byte token on loopback: exit %d, served %v:\n%s", code, served, errOut)
	}
}
