package openai

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

var _ react.StreamModel = (*Model)(nil)

// maxEventLine bounds one line of the event stream: a chunk carries a few
// tokens, so a line of 4 MiB is no chunk of this API.
const maxEventLine = 4 << 20

// GenerateStream implements [react.StreamModel]: the same request as
// [Model.Generate] with "stream": true and stream_options.include_usage,
// read as Server-Sent Events. Each chunk's first choice becomes a
// [react.Chunk]: its content (or refusal) as Text, each tool_calls entry
// as a [react.CallDelta] (index, id, function name, argument fragment),
// its finish_reason; the id and model of every chunk, and the usage of
// the final one.
//
// The stream is read here, not by the SDK's stream helper, so that its
// edges are errors, each a [*modelerr.Error]:
//
//   - a stream that ends before "data: [DONE]" (the connection closed
//     cleanly mid-answer) → [modelerr.Truncated]; a connection reset or a
//     deadline while reading → [modelerr.Unreachable] or
//     [modelerr.Timeout]: the loop executes nothing of the turn;
//   - an in-band error event ({"error": {...}} in a data line, sent with
//     status 200) → the kind its type or code names
//     ([modelerr.KindOfType]: an overload is Overloaded, retryable);
//   - a data line that is not a JSON chunk, a response that is not
//     text/event-stream, a line longer than 4 MiB → [modelerr.Malformed];
//   - HTTP errors before the stream starts → as for Generate.
//
// Events with an "event:" type other than none or "message" are not this
// API's and are ignored, as are comment lines (keep-alives); fields of a
// chunk this adapter does not know are ignored too. Choices other than
// the first (n > 1) are ignored, as Generate does.
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
		params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
		var resp *http.Response
		opts := make([]option.RequestOption, 0, 2+len(m.opts.RequestOptions))
		opts = append(opts, option.WithMaxRetries(m.opts.MaxRetries), option.WithJSONSet("stream", true))
		opts = append(opts, m.opts.RequestOptions...)
		if err := m.client.Post(ctx, "chat/completions", params, &resp, opts...); err != nil {
			yield(react.Chunk{}, classify(err, resp))
			return
		}
		defer func() { _ = resp.Body.Close() }()
		readStream(ctx, resp, yield)
	}
}

// readStream reads the event stream of resp and yields its chunks.
func readStream(ctx context.Context, resp *http.Response, yield func(react.Chunk, error) bool) {
	var p parser
	modelkit.ReadSSE(ctx, Provider, resp, "data: [DONE]", maxEventLine, p.event, yield)
}

// streamChunk is the part of a chat.completion.chunk the adapter reads.
type streamChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			Refusal   string `json:"refusal"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// parser converts the data lines of one stream.
type parser struct {
	calls int // one past the highest call index seen
}

// event converts one event: [DONE] ends the stream, events with an
// "event:" type other than none or "message" are not this API's and are
// skipped, any other is a chunk's data line.
func (p *parser) event(ev modelkit.Event) ([]react.Chunk, bool, error) {
	if ev.Type != "" && ev.Type != "message" {
		return nil, false, nil
	}
	if ev.Data == "[DONE]" {
		return nil, true, nil
	}
	cs, err := p.parse(ev.Data)
	return cs, false, err
}

// parse converts one data line into chunks: one, or one per tool call
// fragment when the line carries several (servers that send whole calls
// at once). A fragment without an index (some compatible servers) is a
// new call.
func (p *parser) parse(data string) ([]react.Chunk, error) {
	var sc streamChunk
	if err := json.Unmarshal([]byte(data), &sc); err != nil {
		return nil, modelkit.Malformed(Provider, "a stream event is not a JSON chunk: %w", err)
	}
	if e := sc.Error; e != nil {
		var code string
		_ = json.Unmarshal(e.Code, &code) // a number or null names nothing
		return nil, modelkit.InBand(Provider, e.Type, code, e.Message)
	}
	c := react.Chunk{ID: sc.ID, Model: sc.Model}
	if u := sc.Usage; u != nil {
		c.Usage = &react.Usage{
			InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
			CachedInputTokens: u.PromptTokensDetails.CachedTokens, ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
		}
	}
	if len(sc.Choices) == 0 {
		return []react.Chunk{c}, nil
	}
	ch := sc.Choices[0]
	c.Text, c.FinishReason = ch.Delta.Content, ch.FinishReason
	if c.Text == "" {
		c.Text = ch.Delta.Refusal
	}
	out := []react.Chunk{c}
	for i, tc := range ch.Delta.ToolCalls {
		index := p.calls
		if tc.Index != nil {
			index = *tc.Index
		}
		if index < 0 || index >= react.MaxStreamCalls {
			return nil, modelkit.Malformed(Provider, "a tool call fragment with index %d", index)
		}
		p.calls = max(p.calls, index+1)
		d := &react.CallDelta{Index: index, ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments}
		if i == 0 {
			out[0].Call = d
			continue
		}
		out = append(out, react.Chunk{Call: d})
	}
	return out, nil
}
