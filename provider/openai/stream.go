package openai

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// decoder folds one API's stream events into an answer.
type decoder[T any] interface {
	// handle returns the events one stream event produces, and an error
	// when the stream reported a failure.
	handle(ev T) ([]llm.Event, error)
	// finish returns the closing events (EventDone last) once the stream
	// has ended, or an error when it ended without a complete answer.
	finish() ([]llm.Event, error)
}

// run yields a stream's events: EventStart once the first event arrives,
// the decoder's events, then the closing ones; or an error, after which
// nothing follows. Returning early (the caller stopped ranging) closes the
// stream, which cancels the request.
func run[T any](ctx context.Context, api provider.API, stream *ssestream.Stream[T], failure *httpFailure,
	dec decoder[T], yield func(llm.Event, error) bool) {
	defer stream.Close()
	started := false
	start := func() bool {
		if started {
			return true
		}
		started = true
		return yield(llm.Event{Type: llm.EventStart}, nil)
	}
	emit := func(evs []llm.Event) bool {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return false
			}
		}
		return true
	}
	for stream.Next() {
		if !start() {
			return
		}
		evs, err := dec.handle(stream.Current())
		if !emit(evs) {
			return
		}
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
	}
	if err := ctx.Err(); err != nil {
		yield(llm.Event{}, err)
		return
	}
	if err := stream.Err(); err != nil {
		yield(llm.Event{}, streamError(api, err, failure))
		return
	}
	evs, err := dec.finish()
	if err != nil {
		yield(llm.Event{}, fmt.Errorf("%s: %w", api, err))
		return
	}
	if start() {
		emit(evs)
	}
}

// dataURL returns an image part as a data URL.
func dataURL(p llm.Part) string {
	return "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}
