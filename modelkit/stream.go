package modelkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/reactguard/reactguard/internal/sse"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

// MaxEventLine bounds one line of an event stream when ReadSSE is given
// 0: 4 MiB, far beyond a chunk of any chat API.
const MaxEventLine = 4 << 20

// Event is one Server-Sent Event: its type (the last "event:" field, ""
// for none) and its data fields joined by "\n".
type Event struct {
	Type string
	Data string
}

// Parse converts one event of a stream into the chunks to yield. done
// reports the API's end marker: the stream is complete and ReadSSE
// returns without reading further. An error ends the stream; it should
// be a [*modelerr.Error] ([Malformed], [InBand]).
type Parse func(ev Event) (chunks []react.Chunk, done bool, err error)

// ReadSSE reads the event stream of resp (whose status the caller
// checked) and yields the chunks parse makes of its events, on the
// caller's goroutine, until parse reports the end marker or yield
// returns false. The caller closes resp.Body. The edges of a stream are
// errors, each a [*modelerr.Error] of provider, yielded once as the last
// pair:
//
//   - a response that is not text/event-stream, a line longer than
//     maxLine (0 means [MaxEventLine]) → [modelerr.Malformed];
//   - a stream that ends before the end marker (the connection closed
//     cleanly mid-answer) → [modelerr.Truncated], its message naming
//     end;
//   - a read that fails (reset, deadline, cancellation) → as
//     [modelerr.Classify] says, the context's error first.
//
// Comment lines (keep-alives) are skipped; parse sees every other event.
func ReadSSE(ctx context.Context, provider string, resp *http.Response, end string, maxLine int, parse Parse, yield func(react.Chunk, error) bool) {
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		yield(react.Chunk{}, StreamError(ctx, provider, resp, modelerr.Malformed,
			fmt.Errorf("the response is %q, not an event stream", resp.Header.Get("Content-Type"))))
		return
	}
	if maxLine <= 0 {
		maxLine = MaxEventLine
	}
	r := sse.NewReader(resp.Body, maxLine)
	for {
		ev, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			yield(react.Chunk{}, StreamError(ctx, provider, resp, modelerr.Truncated, fmt.Errorf("the stream ended before %s", end)))
			return
		case errors.Is(err, sse.ErrLineTooLong):
			yield(react.Chunk{}, StreamError(ctx, provider, resp, modelerr.Malformed, err))
			return
		case err != nil:
			yield(react.Chunk{}, StreamError(ctx, provider, resp, modelerr.Unknown, err))
			return
		}
		cs, done, err := parse(Event{Type: ev.Type, Data: ev.Data})
		if err != nil {
			yield(react.Chunk{}, err)
			return
		}
		for _, c := range cs {
			if !yield(c, nil) {
				return
			}
		}
		if done {
			return
		}
	}
}

// StreamError builds the error of a stream that failed after its status
// (resp may be nil for an API whose SDK hides it): the context's error
// when ctx is done, whatever kind says; kind with err as the cause
// otherwise, or, for [modelerr.Unknown], what [modelerr.Classify] makes
// of err (a reset connection is Unreachable, a deadline Timeout).
func StreamError(ctx context.Context, provider string, resp *http.Response, kind modelerr.Kind, err error) *modelerr.Error {
	if cerr := ctx.Err(); cerr != nil {
		return modelerr.Classify(provider, cerr, resp, "")
	}
	if kind == modelerr.Unknown {
		return modelerr.Classify(provider, err, resp, "")
	}
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	return &modelerr.Error{Provider: provider, Kind: kind, StatusCode: status, Err: err}
}

// Malformed is the error of a 2xx answer that is not what the API
// promises: [modelerr.Malformed], HTTP 200.
func Malformed(provider, format string, args ...any) *modelerr.Error {
	return &modelerr.Error{Provider: provider, Kind: modelerr.Malformed, StatusCode: http.StatusOK, Err: fmt.Errorf(format, args...)}
}

// InBand is the error an API reported inside a successful stream (an
// error event sent with HTTP 200), classified by the type or code it
// named ([modelerr.KindOfType]: an overload is Overloaded, retryable);
// code, when not "", is the more precise and is tried first.
func InBand(provider, errType, code, message string) *modelerr.Error {
	kind := modelerr.Server
	if code != "" {
		kind = modelerr.KindOfType(code)
	}
	if kind == modelerr.Server {
		kind = modelerr.KindOfType(errType)
	}
	return &modelerr.Error{Provider: provider, Kind: kind, StatusCode: http.StatusOK,
		Err: fmt.Errorf("error event in the stream (type %q, code %q): %s", errType, code, message)}
}
