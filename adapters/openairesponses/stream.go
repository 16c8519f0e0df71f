package openairesponses

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"

	"github.com/openai/openai-go/v3/option"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// maxEventLine bounds one line of the event stream: 4 MiB (a terminal
// event repeats the whole response, reasoning items included).
const maxEventLine = 4 << 20

// GenerateStream implements [react.StreamModel]: the same request as
// [Model.Generate] with "stream": true, read as Server-Sent Events by the
// adapter itself (modelkit.ReadSSE). response.output_text.delta and
// refusal deltas are Text; a function_call item's
// response.output_item.added gives a [react.CallDelta] with the call's
// id and name, each response.function_call_arguments.delta a fragment of
// its arguments (an item done without any gives its arguments whole);
// the terminal response.completed or response.incomplete gives the
// finish reason, the usage and the Parts (reasoning items included), as
// Generate reads them from the same response object.
//
// Its edges are errors, each a [*modelerr.Error]: a stream that ends
// before a terminal event → [modelerr.Truncated] (nothing of the turn
// runs); response.failed or an error event → the kind its code names
// ([modelerr.KindOfType]); an event that is not JSON, an output index out
// of range → [modelerr.Malformed]; HTTP errors before the stream starts
// → as for Generate. Events this adapter does not know are skipped.
//
// With Options.NoStream it returns nil: the loop then calls Generate.
func (m *Model) GenerateStream(ctx context.Context, req react.Request) iter.Seq2[react.Chunk, error] {
	if m.opts.NoStream {
		return nil
	}
	return func(yield func(react.Chunk, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(react.Chunk{}, classify(err, nil))
			return
		}
		var resp *http.Response
		if err := m.client.Post(ctx, "responses", params, &resp, m.requestOptions(option.WithJSONSet("stream", true))...); err != nil {
			yield(react.Chunk{}, classify(err, resp))
			return
		}
		defer func() { _ = resp.Body.Close() }()
		readStream(ctx, resp, yield)
	}
}

// readStream reads the event stream of resp and yields its chunks.
func readStream(ctx context.Context, resp *http.Response, yield func(react.Chunk, error) bool) {
	p := parser{calls: map[int]*call{}}
	modelkit.ReadSSE(ctx, name, resp, "response.completed", maxEventLine, p.event, yield)
}

// call is a function_call item being streamed.
type call struct {
	index int  // its index among the turn's calls
	delta bool // an arguments delta arrived
}

// parser converts the events of one stream.
type parser struct {
	calls map[int]*call // by output index
	n     int           // calls so far
	id    string
	model string
}

// event is the part of a stream event the adapter reads.
type event struct {
	Type        string          `json:"type"`
	OutputIndex *int            `json:"output_index"`
	Delta       string          `json:"delta"`
	Item        *item           `json:"item"`
	Response    json.RawMessage `json:"response"`
	Code        string          `json:"code"`
	Message     string          `json:"message"`
}

// event converts one event.
func (p *parser) event(ev modelkit.Event) ([]react.Chunk, bool, error) {
	var e event
	if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
		return nil, false, malformed("a stream event is not JSON: %w", err)
	}
	switch e.Type {
	case "error":
		return nil, false, modelkit.InBand(name, e.Code, e.Code, e.Message)
	case "response.created":
		var r struct {
			ID    string `json:"id"`
			Model string `json:"model"`
		}
		_ = json.Unmarshal(e.Response, &r) // what is not there stays ""
		p.id, p.model = r.ID, r.Model
		return []react.Chunk{{ID: r.ID, Model: r.Model}}, false, nil
	case "response.output_text.delta", "response.refusal.delta":
		if e.Delta == "" {
			return nil, false, nil
		}
		return []react.Chunk{{Text: e.Delta}}, false, nil
	case "response.output_item.added":
		if e.Item == nil || e.Item.Type != "function_call" {
			return nil, false, nil
		}
		i, err := p.index(e.OutputIndex)
		if err != nil {
			return nil, false, err
		}
		if _, ok := p.calls[i]; ok {
			return nil, false, malformed("output item %d added twice", i)
		}
		c := &call{index: p.n}
		p.calls[i] = c
		p.n++
		return []react.Chunk{{Call: &react.CallDelta{Index: c.index, ID: e.Item.CallID, Name: e.Item.Name}}}, false, nil
	case "response.function_call_arguments.delta":
		c, err := p.call(e.OutputIndex)
		if err != nil {
			return nil, false, err
		}
		c.delta = true
		return []react.Chunk{{Call: &react.CallDelta{Index: c.index, Args: e.Delta}}}, false, nil
	case "response.output_item.done":
		if e.Item == nil || e.Item.Type != "function_call" {
			return nil, false, nil
		}
		c, err := p.call(e.OutputIndex)
		if err != nil {
			return nil, false, err
		}
		if c.delta || e.Item.Arguments == "" {
			return nil, false, nil
		}
		return []react.Chunk{{Call: &react.CallDelta{Index: c.index, Args: e.Item.Arguments}}}, false, nil
	case "response.completed", "response.incomplete", "response.failed":
		return p.end(e.Response)
	}
	return nil, false, nil
}

// end converts a terminal event's response: the finish reason, usage and
// Parts of the turn, the end of the stream; a failed response is its
// error. The calls' ids are the ones the stream gave.
func (p *parser) end(raw json.RawMessage) ([]react.Chunk, bool, error) {
	var r apiResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, false, malformed("a terminal event's response: %w", err)
	}
	out, err := fromResponse(r, raw)
	if err != nil {
		if me := asModelErr(err); me != nil {
			return nil, false, me // a failed response
		}
		return nil, false, malformed("%w", err)
	}
	if len(out.ToolCalls) != p.n {
		// The stream's calls and the response's differ: no replay from them.
		return []react.Chunk{{FinishReason: out.FinishReason, Usage: out.Usage}}, true, nil
	}
	// The ids Generate gives calls the API sent without one (a call whose
	// streamed id differs from the response's is a malformed stream, which
	// the loop's assembler reports).
	cs := make([]react.Chunk, 0, len(out.ToolCalls)+1)
	for i, c := range out.ToolCalls {
		cs = append(cs, react.Chunk{Call: &react.CallDelta{Index: i, ID: c.ID}})
	}
	return append(cs, react.Chunk{FinishReason: out.FinishReason, Usage: out.Usage, Parts: out.Parts}), true, nil
}

// index checks an output index.
func (p *parser) index(i *int) (int, error) {
	if i == nil || *i < 0 || *i >= react.MaxParts {
		return 0, malformed("an event without a valid output index")
	}
	return *i, nil
}

// call returns the function_call item at an output index.
func (p *parser) call(i *int) (*call, error) {
	idx, err := p.index(i)
	if err != nil {
		return nil, err
	}
	c, ok := p.calls[idx]
	if !ok {
		return nil, malformed("an event for output item %d, which is not a function call", idx)
	}
	return c, nil
}
