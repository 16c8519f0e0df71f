package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/reactguard/reactguard/internal/sse"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

var _ react.StreamModel = (*Model)(nil)

// maxEventLine bounds one line of the event stream (4 MiB).
const maxEventLine = 4 << 20

// GenerateStream implements [react.StreamModel]: the same request as
// [Model.Generate] with "stream": true, read as Server-Sent Events.
// message_start gives the response's id, model and input usage;
// content_block_start of a tool_use block gives a [react.CallDelta] with
// the block's index, id and name, and each input_json_delta a fragment of
// its arguments (a block without any fragment gets the input of its
// start, as the API documents); each text_delta is Text; message_delta
// gives the stop reason and the output usage. Thinking, signature and
// citation deltas are not part of a [react.Response] and are skipped.
//
// The stream is read here, not by the SDK's stream helper or its message
// accumulator, so that its edges are errors, each a [*modelerr.Error]:
//
//   - a stream that ends before message_stop (the connection closed
//     cleanly mid-answer) → [modelerr.Truncated]; a reset or a deadline
//     while reading → [modelerr.Unreachable] or [modelerr.Timeout]: the
//     loop executes nothing of the turn;
//   - an error event (overloaded_error arrives this way, with HTTP status
//     200) → the kind its type names ([modelerr.KindOfType]: overloaded
//     is Overloaded, retryable);
//   - a data line that is not JSON, without a "type", or whose type
//     contradicts its "event:" line; a delta for a block that did not
//     start; a response that is not text/event-stream; a line longer than
//     4 MiB → [modelerr.Malformed].
//
// The event type is read from the data's "type" field, so a stream
// without "event:" lines is read the same. Events of a type this adapter
// does not know (and ping) are ignored, as the API's versioning policy
// asks of clients; so are delta types it does not know. A tool input cut
// by max_tokens is passed on as it came (invalid JSON the loop answers
// REJECTED), never replaced by {} as the SDK's accumulator does.
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
		opts := make([]option.RequestOption, 0, 3+len(m.opts.RequestOptions))
		opts = append(opts, option.WithMaxRetries(m.opts.MaxRetries), option.WithJSONSet("stream", true))
		opts = m.sampling(opts)
		opts = append(opts, m.opts.RequestOptions...)
		if err := m.client.Post(ctx, "v1/messages", params, &resp, opts...); err != nil {
			yield(react.Chunk{}, classify(err, resp))
			return
		}
		defer func() { _ = resp.Body.Close() }()
		readStream(ctx, resp, yield)
	}
}

func malformed(format string, args ...any) *modelerr.Error {
	return modelkit.Malformed(Provider, format, args...)
}

// readStream reads the event stream of resp and yields its chunks.
func readStream(ctx context.Context, resp *http.Response, yield func(react.Chunk, error) bool) {
	p := parser{blocks: map[int]*block{}}
	modelkit.ReadSSE(ctx, Provider, resp, "message_stop", maxEventLine, p.event, yield)
}

// event converts one event for modelkit.ReadSSE: at message_stop, the
// turn's Parts (when it has any) and the end.
func (p *parser) event(ev modelkit.Event) ([]react.Chunk, bool, error) {
	c, emit, stop, err := p.parse(sse.Event{Type: ev.Type, Data: ev.Data})
	switch {
	case err != nil:
		return nil, false, err
	case stop:
		if len(p.parts) == 0 {
			return nil, true, nil
		}
		return []react.Chunk{{Parts: p.parts}}, true, nil
	case emit:
		return []react.Chunk{c}, false, nil
	}
	return nil, false, nil
}

// block is a content block of the message being streamed.
type block struct {
	kind  string // text, tool_use, thinking, ...
	input string // the input of a tool_use block's start
	delta bool   // a tool_use block received an input_json_delta
	open  bool
	part  int      // the block's index in parser.parts; -1 for none
	texts bool     // a text block yielded text
	th    thinking // a thinking block's content so far
}

// parser converts the events of one stream.
type parser struct {
	blocks  map[int]*block
	started bool
	parts   []react.Part // the turn's parts, in block order
	calls   int          // tool_use blocks so far
	j       joiner       // the separation of text blocks, as fromMessage
	// the usage so far: message_start's, updated by message_delta's
	input, output, cacheRead, cacheCreation int64
}

// event is the part of a stream event the adapter reads.
type event struct {
	Type    string `json:"type"`
	Index   *int   `json:"index"`
	Message *struct {
		ID    string     `json:"id"`
		Model string     `json:"model"`
		Usage *usageJSON `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Text  string          `json:"text"`
		Input json.RawMessage `json:"input"`
		Data  string          `json:"data"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *usageJSON `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type usageJSON struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
}

// addUsage takes the counts u reports and returns the usage so far.
func (p *parser) addUsage(u *usageJSON) *react.Usage {
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.input, u.InputTokens)
	set(&p.output, u.OutputTokens)
	set(&p.cacheRead, u.CacheReadInputTokens)
	set(&p.cacheCreation, u.CacheCreationInputTokens)
	return &react.Usage{
		InputTokens:              p.input + p.cacheRead + p.cacheCreation,
		OutputTokens:             p.output,
		CachedInputTokens:        p.cacheRead,
		CacheCreationInputTokens: p.cacheCreation,
	}
}

// parse converts one event: the chunk to yield (emit), or the end of the
// stream (stop, at message_stop), or an error.
func (p *parser) parse(ev sse.Event) (c react.Chunk, emit, stop bool, err error) {
	var e event
	if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
		return c, false, false, malformed("a stream event is not JSON: %w", err)
	}
	if e.Type == "" {
		return c, false, false, malformed("a stream event without a type")
	}
	if ev.Type != "" && ev.Type != "message" && ev.Type != e.Type {
		return c, false, false, malformed("a stream event named %q holds a %q", ev.Type, e.Type)
	}
	if e.Type == "error" {
		typ, msg := "", ""
		if e.Error != nil {
			typ, msg = e.Error.Type, e.Error.Message
		}
		return c, false, false, &modelerr.Error{Provider: Provider, Kind: modelerr.KindOfType(typ), StatusCode: http.StatusOK,
			Err: fmt.Errorf("error event in the stream (%s): %s", typ, msg)}
	}
	if !p.started && e.Type != "message_start" && e.Type != "ping" && known(e.Type) {
		return c, false, false, malformed("%s before message_start", e.Type)
	}
	switch e.Type {
	case "message_start":
		if p.started || e.Message == nil {
			return c, false, false, malformed("a repeated or empty message_start")
		}
		p.started = true
		c.ID, c.Model = e.Message.ID, e.Message.Model
		if e.Message.Usage != nil {
			c.Usage = p.addUsage(e.Message.Usage)
		}
		return c, true, false, nil
	case "content_block_start":
		if e.Index == nil || e.ContentBlock == nil {
			return c, false, false, malformed("content_block_start without an index or a block")
		}
		i := *e.Index
		if i < 0 || i >= react.MaxStreamCalls {
			return c, false, false, malformed("content block index %d", i)
		}
		if _, ok := p.blocks[i]; ok {
			return c, false, false, malformed("content block %d started twice", i)
		}
		b := &block{kind: e.ContentBlock.Type, open: true, part: -1}
		p.blocks[i] = b
		switch b.kind {
		case "text":
			b.part = len(p.parts)
			p.parts = append(p.parts, react.Part{Kind: react.PartText})
			c.Text = p.text(b, e.ContentBlock.Text)
			return c, c.Text != "", false, nil
		case "tool_use":
			p.j.other()
			b.input = string(e.ContentBlock.Input)
			p.parts = append(p.parts, react.Part{Kind: react.PartCall, Call: p.calls})
			p.calls++
			c.Call = &react.CallDelta{Index: i, ID: e.ContentBlock.ID, Name: e.ContentBlock.Name}
			return c, true, false, nil
		case "thinking", "redacted_thinking":
			p.j.other()
			b.part = len(p.parts)
			b.th = thinking{Type: b.kind, Data: e.ContentBlock.Data}
			p.parts = append(p.parts, react.Part{Kind: react.PartOpaque, API: API})
			return c, false, false, nil
		}
		return c, false, false, nil // server tools: not part of a Response
	case "content_block_delta":
		b, err := p.open(e.Index)
		switch {
		case err != nil:
			return c, false, false, err
		case e.Delta == nil:
			return c, false, false, malformed("content_block_delta without a delta")
		}
		switch {
		case e.Delta.Type == "text_delta" && b.kind == "text":
			c.Text = p.text(b, e.Delta.Text)
			return c, c.Text != "", false, nil
		case e.Delta.Type == "thinking_delta" && b.kind == "thinking":
			b.th.Thinking += e.Delta.Thinking
			return c, false, false, nil
		case e.Delta.Type == "signature_delta" && b.kind == "thinking":
			b.th.Signature += e.Delta.Signature
			return c, false, false, nil
		case e.Delta.Type == "input_json_delta" && b.kind == "tool_use":
			b.delta = true
			c.Call = &react.CallDelta{Index: *e.Index, Args: e.Delta.PartialJSON}
			return c, true, false, nil
		case e.Delta.Type == "text_delta" || e.Delta.Type == "input_json_delta":
			return c, false, false, malformed("a %s for a %s block", e.Delta.Type, b.kind)
		}
		return c, false, false, nil // thinking, signature, citations, unknown deltas
	case "content_block_stop":
		b, err := p.open(e.Index)
		if err != nil {
			return c, false, false, err
		}
		b.open = false
		if b.th.Type != "" {
			p.parts[b.part] = thinkingPart(b.th)
		}
		if b.kind == "tool_use" && !b.delta && b.input != "" {
			c.Call = &react.CallDelta{Index: *e.Index, Args: b.input}
			return c, true, false, nil
		}
		return c, false, false, nil
	case "message_delta":
		if e.Delta != nil {
			c.FinishReason = e.Delta.StopReason
		}
		if e.Usage != nil {
			c.Usage = p.addUsage(e.Usage)
		}
		return c, true, false, nil
	case "message_stop":
		return c, false, true, nil
	}
	return c, false, false, nil // ping, and event types this adapter does not know
}

// known reports the event types of the Messages stream.
func known(t string) bool {
	switch t {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop":
		return true
	}
	return false
}

// open returns the open block at index.
func (p *parser) open(index *int) (*block, error) {
	if index == nil {
		return nil, malformed("a content block event without an index")
	}
	b, ok := p.blocks[*index]
	if !ok || !b.open {
		return nil, malformed("an event for content block %d, which is not open", *index)
	}
	return b, nil
}

// text records a fragment of text block b and returns the text to yield:
// the fragment, on a new line when it starts a block that follows another
// kind of block after some text (as fromMessage joins them).
func (p *parser) text(b *block, t string) string {
	if t == "" {
		return ""
	}
	p.parts[b.part].Text += t
	if b.texts {
		return t
	}
	b.texts = true
	return p.j.text(t)
}
