package bedrock

import (
	"context"
	"errors"
	"iter"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// GenerateStream implements [react.StreamModel]: the same request as
// ConverseStream, whose answer is the AWS event-stream binary encoding,
// decoded by the SDK's own reader. Each text delta is Text; a toolUse
// block's start gives a [react.CallDelta] with its id and name, each of
// its input deltas a fragment of its arguments; messageStop gives the
// stop reason, metadata the usage; the Parts (reasoning blocks with their
// signatures, texts apart) come with the last chunk.
//
// Its edges are errors, each a [*modelerr.Error]: a stream that ends
// without messageStop (the connection closed cleanly mid-answer) →
// [modelerr.Truncated], and nothing of the turn runs; an exception sent
// in the stream (throttlingException, serviceUnavailableException,
// modelStreamErrorException, internalServerException,
// validationException) → its kind; a message the decoder cannot read →
// as the SDK reports it (a failed read: Unreachable; a bad frame:
// Malformed); HTTP errors before the stream starts → as for Generate.
//
// With Options.NoStream it returns nil: the loop then calls Generate.
func (m *Model) GenerateStream(ctx context.Context, req react.Request) iter.Seq2[react.Chunk, error] {
	if m.opts.NoStream {
		return nil
	}
	return func(yield func(react.Chunk, error) bool) {
		in, err := m.input(req)
		if err != nil {
			yield(react.Chunk{}, requestErr(err))
			return
		}
		sin := &bedrockruntime.ConverseStreamInput{ModelId: in.ModelId, Messages: in.Messages, System: in.System,
			ToolConfig: in.ToolConfig, InferenceConfig: in.InferenceConfig}
		out, err := m.client.ConverseStream(ctx, sin, m.retries)
		if err != nil {
			yield(react.Chunk{}, classify(ctx, err))
			return
		}
		stream := out.GetStream()
		defer func() { _ = stream.Close() }()
		p := parser{blocks: map[int32]*block{}, id: requestID(out.ResultMetadata)}
		first := true
		for ev := range stream.Events() {
			c, err := p.event(ev)
			if err != nil {
				yield(react.Chunk{}, err)
				return
			}
			if first {
				c.ID, first = p.id, false
			}
			if empty(c) {
				continue
			}
			if !yield(c, nil) {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(react.Chunk{}, streamErr(ctx, err))
			return
		}
		if !p.stopped {
			yield(react.Chunk{}, modelkit.StreamError(ctx, name, nil, modelerr.Truncated, errors.New("the stream ended before messageStop")))
			return
		}
		for _, c := range p.end() {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// streamErr classifies the error the stream ended with: the context's,
// an exception the API sent (its kind), or what the decoder or the
// connection reported.
func streamErr(ctx context.Context, err error) *modelerr.Error {
	if ctx.Err() != nil {
		return modelkit.StreamError(ctx, name, nil, modelerr.Unknown, err)
	}
	var apiErr interface{ ErrorCode() string }
	if errors.As(err, &apiErr) {
		return inBand(err)
	}
	e := modelkit.StreamError(ctx, name, nil, modelerr.Unknown, err)
	if e.Kind == modelerr.Request { // no transport error: the decoder refused a frame
		e.Kind, e.StatusCode = modelerr.Malformed, 200
	}
	return e
}

// block is a content block being streamed.
type block struct {
	part int       // its index in parser.out.Parts
	call int       // a toolUse block's index among the calls; -1 else
	r    reasoning // a reasoning block's content so far
	text bool      // a text block
}

// parser converts the events of one stream.
type parser struct {
	blocks  map[int32]*block
	out     react.Response // parts, calls (ids and names), finish, usage
	id      string
	stopped bool
}

// event converts one event into the chunk to yield (zero for none).
func (p *parser) event(ev types.ConverseStreamOutput) (react.Chunk, error) {
	var c react.Chunk
	switch v := ev.(type) {
	case *types.ConverseStreamOutputMemberMessageStart:
	case *types.ConverseStreamOutputMemberContentBlockStart:
		i := aws.ToInt32(v.Value.ContentBlockIndex)
		if i < 0 || i >= react.MaxParts {
			return c, malformed("content block index %d", i)
		}
		if _, ok := p.blocks[i]; ok {
			return c, malformed("content block %d started twice", i)
		}
		start, ok := v.Value.Start.(*types.ContentBlockStartMemberToolUse)
		if !ok {
			return c, nil // image, tool result starts: not part of a turn's text or calls
		}
		b := &block{part: len(p.out.Parts), call: len(p.out.ToolCalls)}
		p.blocks[i] = b
		p.out.Parts = append(p.out.Parts, react.Part{Kind: react.PartCall, Call: b.call})
		p.out.ToolCalls = append(p.out.ToolCalls, react.ToolCall{ID: aws.ToString(start.Value.ToolUseId), Name: aws.ToString(start.Value.Name)})
		c.Call = &react.CallDelta{Index: b.call, ID: aws.ToString(start.Value.ToolUseId), Name: aws.ToString(start.Value.Name)}
	case *types.ConverseStreamOutputMemberContentBlockDelta:
		i := aws.ToInt32(v.Value.ContentBlockIndex)
		if i < 0 || i >= react.MaxParts {
			return c, malformed("content block index %d", i)
		}
		b := p.blocks[i]
		switch d := v.Value.Delta.(type) {
		case *types.ContentBlockDeltaMemberText:
			if b == nil {
				b = &block{part: len(p.out.Parts), call: -1, text: true}
				p.blocks[i] = b
				p.out.Parts = append(p.out.Parts, react.Part{Kind: react.PartText})
			}
			if !b.text {
				return c, malformed("a text delta for content block %d, which is not text", i)
			}
			p.out.Parts[b.part].Text += d.Value
			c.Text = d.Value
		case *types.ContentBlockDeltaMemberToolUse:
			if b == nil || b.call < 0 {
				return c, malformed("a toolUse delta for content block %d, which is not a toolUse", i)
			}
			c.Call = &react.CallDelta{Index: b.call, Args: aws.ToString(d.Value.Input)}
		case *types.ContentBlockDeltaMemberReasoningContent:
			if b == nil {
				b = &block{part: len(p.out.Parts), call: -1}
				p.blocks[i] = b
				p.out.Parts = append(p.out.Parts, react.Part{Kind: react.PartOpaque, API: API})
			}
			if b.text || b.call >= 0 {
				return c, malformed("a reasoning delta for content block %d, which is not reasoning", i)
			}
			switch r := d.Value.(type) {
			case *types.ReasoningContentBlockDeltaMemberText:
				b.r.Text += r.Value
			case *types.ReasoningContentBlockDeltaMemberSignature:
				b.r.Signature += r.Value
			case *types.ReasoningContentBlockDeltaMemberRedactedContent:
				b.r.Redacted = append(b.r.Redacted, r.Value...)
			}
			p.out.Parts[b.part] = b.r.part()
		}
	case *types.ConverseStreamOutputMemberContentBlockStop:
	case *types.ConverseStreamOutputMemberMessageStop:
		p.stopped = true
		c.FinishReason = string(v.Value.StopReason)
	case *types.ConverseStreamOutputMemberMetadata:
		c.Usage = usage(v.Value.Usage)
	}
	return c, nil
}

// end returns the last chunks: ids for calls streamed without one (as
// Generate gives them) and the Parts.
func (p *parser) end() []react.Chunk {
	resp := (&turn{out: p.out}).response()
	var out []react.Chunk
	for i, c := range resp.ToolCalls {
		if p.out.ToolCalls[i].ID == "" {
			out = append(out, react.Chunk{Call: &react.CallDelta{Index: i, ID: c.ID}})
		}
	}
	if len(p.out.Parts) > 0 {
		out = append(out, react.Chunk{Parts: p.out.Parts})
	}
	return out
}

// empty reports a chunk that says nothing.
func empty(c react.Chunk) bool {
	return c.Text == "" && c.Call == nil && c.ID == "" && c.Model == "" && c.FinishReason == "" && c.Usage == nil && c.Parts == nil
}
