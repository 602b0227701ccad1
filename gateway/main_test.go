package gateway_test

import (
	"os"
	"testing"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

func TestMain(m *testing.M) {
	if code, served := mcptest.ServeIfAsked(); served {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
