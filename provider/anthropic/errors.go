package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// APIError is an error the Anthropic API answered with: an HTTP error
// status, or an error event in the middle of a streamed answer.
type APIError struct {
	// StatusCode is the HTTP status; a success status when the error
	// arrived as an event during the stream.
	StatusCode int
	// Type is the API's error type, such as "invalid_request_error" or
	// "overloaded_error"; empty when the body had none.
	Type string
	// Message is the API's explanation (or the raw body when it was not
	// the API's JSON error).
	Message string
	// RequestID is the request-id header, which Anthropic support asks for.
	RequestID string
}

// Error names the status or the stream, the error type, the API's message,
// and what to do about the common types.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("anthropic: ")
	if e.DuringStream() {
		b.WriteString("error event during the stream")
	} else {
		fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
		if text := http.StatusText(e.StatusCode); text != "" {
			b.WriteString(" " + text)
		}
	}
	if e.Type != "" {
		b.WriteString(": " + e.Type)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if hint := hints[e.Type]; hint != "" {
		b.WriteString(" (" + hint + ")")
	}
	if e.RequestID != "" {
		b.WriteString(" [request-id " + e.RequestID + "]")
	}
	return b.String()
}

// DuringStream reports whether the error arrived during the stream, after a
// successful status.
func (e *APIError) DuringStream() bool { return e.StatusCode >= 200 && e.StatusCode < 300 }

// Temporary reports whether sending the request again later may succeed:
// rate limits, overload, timeouts and server errors.
func (e *APIError) Temporary() bool {
	switch e.Type {
	case "rate_limit_error", "overloaded_error", "api_error", "timeout_error":
		return true
	}
	return e.StatusCode == http.StatusRequestTimeout || e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// hints say what to do about the error types a user can act on.
var hints = map[string]string{
	"authentication_error": "check the API key: Config.APIKey or ANTHROPIC_API_KEY",
	"permission_error":     "the API key may not use this model or feature",
	"not_found_error":      "check the model id in Config.Model",
	"billing_error":        "check the account's billing",
	"rate_limit_error":     "retry later or lower the request rate",
	"overloaded_error":     "the API is overloaded: retry later",
	"request_too_large":    "the request is too large: shorten the conversation",
}

// streamError converts what the SDK reported into the error the stream
// yields: the context's error when the caller cancelled, an *APIError for
// the API's errors, a wrapped error otherwise.
func streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = strings.TrimSpace(apiErr.RawJSON())
		}
		return &APIError{StatusCode: apiErr.StatusCode, Type: string(apiErr.Type()), Message: msg, RequestID: apiErr.RequestID}
	}
	return fmt.Errorf("anthropic: request failed: %w", err)
}
