package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/tool"
)

// TestACancelledValidationIsACancelledCall checks that a validation the
// run's cancellation stopped answers the call as cancelled, not as
// invalid.
func TestACancelledValidationIsACancelledCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var v tool.Validator
	tl := tool.Tool{Name: "check", Parameters: json.RawMessage(`{"type":"object","properties":{"s":{"type":"string","pattern":"^(a+)+$"}}}`)}
	_, err := v.Prepare(ctx, tl, json.RawMessage(`{"s":"`+strings.Repeat("a", 40)+`!"}`))
	if err == nil {
		t.Fatal("a cancelled validation passed")
	}
	if got := invalidText(ctx, "check", err); got != cancelledText {
		t.Errorf("the result of a cancelled validation is %q, want %q", got, cancelledText)
	}
}
