package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"iter"

	"google.golang.org/genai"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// GenerateStream implements [react.StreamModel]: the same request as
// [Model.Generate] as streamGenerateContent (Server-Sent Events), read
// through the SDK's stream with its automatic continuation turned off.
// Each chunk's text (thought parts apart) is a [react.Chunk] as it
// arrives; the function calls, which the API sends whole, the finish
// reason, the usage and the Parts come with the last chunks, once the
// stream ended as the API promises.
//
// The API has no end marker of its own: a stream is complete when a
// chunk carried the candidate's finish reason. Its edges are errors,
// each a [*modelerr.Error]:
//
//   - a stream that ends without a finish reason (the connection closed
//     cleanly mid-answer) → [modelerr.Truncated]: the loop executes
//     nothing of the turn;
//   - an error object in a data line (sent with HTTP 200) → the kind its
//     status names (RESOURCE_EXHAUSTED RateLimited, UNAVAILABLE
//     Overloaded, INVALID_ARGUMENT Request, …);
//   - a data line that is not JSON → [modelerr.Malformed];
//   - HTTP errors before the stream starts, a reset connection, a
//     deadline → as for Generate.
//
// With Options.NoStream it returns nil: the loop then calls Generate.
func (m *Model) GenerateStream(ctx context.Context, req react.Request) iter.Seq2[react.Chunk, error] {
	if m.opts.NoStream {
		return nil
	}
	return func(yield func(react.Chunk, error) bool) {
		contents, config, err := m.request(req)
		if err != nil {
			yield(react.Chunk{}, requestErr(err))
			return
		}
		t := turn{textPart: -1}
		// The SDK's conversion of a chunk panics on some bodies that are
		// not what the API sends (a field of another JSON type): such a
		// stream is malformed, not a crash of the host. A panic of the
		// caller's own code, raised through yield, is not ours to stop.
		inYield := false
		send := func(c react.Chunk, err error) bool {
			inYield = true
			ok := yield(c, err)
			inYield = false
			return ok
		}
		defer func() {
			if p := recover(); p != nil {
				if inYield {
					panic(p)
				}
				yield(react.Chunk{}, malformed("the SDK could not convert a chunk: %v", p))
			}
		}()
		for r, err := range m.client.Models.GenerateContentStream(ctx, m.model, contents, config) {
			if err != nil {
				send(react.Chunk{}, streamErr(ctx, err))
				return
			}
			before := len(t.out.Text)
			if err := t.add(r, true); err != nil {
				send(react.Chunk{}, malformed("%w", err))
				return
			}
			c := react.Chunk{Text: t.out.Text[before:], ID: t.out.ID, Model: t.out.Model}
			if !send(c, nil) {
				return
			}
		}
		if t.out.FinishReason == "" {
			yield(react.Chunk{}, modelkit.StreamError(ctx, API, nil, modelerr.Truncated,
				errors.New("the stream ended before a chunk with a finish reason")))
			return
		}
		resp := t.response()
		for i, c := range resp.ToolCalls {
			if !yield(react.Chunk{Call: &react.CallDelta{Index: i, ID: c.ID, Name: c.Name, Args: string(c.Args)}}, nil) {
				return
			}
		}
		yield(react.Chunk{FinishReason: resp.FinishReason, Usage: resp.Usage, Parts: resp.Parts}, nil)
	}
}

// streamErr classifies an error of the SDK's stream: an API error with
// an error code (an HTTP status, or an error object sent in the stream,
// which names one too) as Generate's, one without by its status name, a data line that is not JSON as Malformed, anything else
// (a reset, a deadline) by the shared rules.
func streamErr(ctx context.Context, err error) *modelerr.Error {
	if ctx.Err() != nil {
		return modelkit.StreamError(ctx, API, nil, modelerr.Unknown, err)
	}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		if apiErr.Code >= 400 {
			return classify(ctx, err) // a status, or an error object naming one
		}
		return inBand(apiErr)
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return malformed("a stream event is not a JSON chunk: %w", err)
	}
	return modelkit.StreamError(ctx, API, nil, modelerr.Unknown, err)
}
