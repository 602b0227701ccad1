package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/toolshelf/toolshelf/provider"
)

// APIError is a failure the server reported: an HTTP error status, or an
// error inside an answer's stream.
type APIError struct {
	// API is the wire format of the failed request.
	API provider.API
	// StatusCode is the HTTP status; 0 when the error came inside a stream
	// that had started.
	StatusCode int
	// Type, Code and Param are the error object's fields, when the server
	// sent them (for example invalid_request_error, rate_limit_exceeded,
	// input[3].content).
	Type, Code, Param string
	// Message is the server's explanation.
	Message string
}

// Error names the status or stream failure, the code and the message, and
// what usually fixes it.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(string(e.API))
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
		if text := http.StatusText(e.StatusCode); text != "" {
			b.WriteString(" " + text)
		}
	} else {
		b.WriteString(": the answer's stream failed")
	}
	switch {
	case e.Code != "":
		b.WriteString(" (" + e.Code + ")")
	case e.Type != "":
		b.WriteString(" (" + e.Type + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Param != "" {
		b.WriteString(" [param " + e.Param + "]")
	}
	if hint := e.hint(); hint != "" {
		b.WriteString(" — " + hint)
	}
	return b.String()
}

// hint says what usually fixes an error of the status (or, inside a
// stream, of the code).
func (e *APIError) hint() string {
	s := e.StatusCode
	switch {
	case s == 0 && e.Code == "rate_limit_exceeded":
		s = http.StatusTooManyRequests
	case s == 0 && e.Code == "server_error":
		s = http.StatusInternalServerError
	}
	switch {
	case s == http.StatusUnauthorized:
		return "check the API key (Config.APIKey or OPENAI_API_KEY)"
	case s == http.StatusForbidden:
		return "the key has no access to this model or endpoint"
	case s == http.StatusNotFound:
		return "check the model id and the base URL (OpenAI-compatible servers usually serve under /v1)"
	case s == http.StatusTooManyRequests:
		return "wait and retry, or lower the request rate"
	case s >= 500:
		return "the server failed; retry later"
	}
	return ""
}

// httpFailure keeps the status and body of the last failed HTTP attempt
// of one request, so that an error body the SDK cannot read (plain text,
// {"error": "..."}) still reaches the caller.
type httpFailure struct {
	status int
	body   []byte
}

// option returns a request option whose middleware records failures.
func (f *httpFailure) option() option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res == nil || res.StatusCode < 400 || res.Body == nil {
			return res, err
		}
		body, readErr := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		_ = res.Body.Close()
		f.status, f.body = res.StatusCode, body
		res.Body = io.NopCloser(bytes.NewReader(body))
		return res, readErr
	})
}

// streamError turns an error of the SDK's request or stream into one that
// names the API, the status or stream failure and the server's message.
func streamError(api provider.API, err error, failure *httpFailure) error {
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		e := errorBody(se.Event.Data)
		e.API = api
		return e
	}
	var ae *openai.Error
	if errors.As(err, &ae) && ae.StatusCode != 0 {
		e := &APIError{API: api, StatusCode: ae.StatusCode, Type: ae.Type, Code: ae.Code, Param: ae.Param, Message: ae.Message}
		if e.Message == "" && failure.status == ae.StatusCode {
			e.Message = errorBody(failure.body).Message
		}
		return e
	}
	if failure.status != 0 {
		e := errorBody(failure.body)
		e.API, e.StatusCode = api, failure.status
		return e
	}
	return fmt.Errorf("%s: %w", api, err)
}

// errorBody reads an error body in the forms servers send:
// {"error": {"message", "type", "code", "param"}} (OpenAI),
// {"error": "text"} (Ollama, llama.cpp), {"message": "text"}, or plain text.
func errorBody(body []byte) *APIError {
	var wrapper struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &wrapper) == nil {
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Param   string          `json:"param"`
		}
		var text string
		switch {
		case json.Unmarshal(wrapper.Error, &obj) == nil && obj.Message+obj.Type != "":
			return &APIError{Type: obj.Type, Code: scalarText(obj.Code), Param: obj.Param, Message: obj.Message}
		case json.Unmarshal(wrapper.Error, &text) == nil && text != "":
			return &APIError{Message: text}
		case wrapper.Message != "":
			return &APIError{Message: wrapper.Message}
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 500 {
		text = text[:500] + "…"
	}
	return &APIError{Message: text}
}

// scalarText returns a JSON string's text, or a number's digits; "" for
// anything else (codes are strings at OpenAI, numbers at some servers).
func scalarText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
