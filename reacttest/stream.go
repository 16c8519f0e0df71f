package reacttest

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/reactguard/reactguard/react"
)

// StreamTurn is one turn of a [StreamModel]: the chunks it delivers, in
// order, with the boundaries the test chose, and, when Err is set, the
// error that ends the stream after them (a connection cut before the end
// marker, an in-band error event): the loop then discards the turn.
type StreamTurn struct {
	Chunks []react.Chunk
	Err    error
}

// StreamModel is a scripted [react.StreamModel]: each request streams the
// next [StreamTurn]'s chunks. Build it with [Stream]; turns are consumed
// in the order the requests arrive, and a request past the script fails
// with [ErrScriptExhausted]. It is safe for concurrent use and records a
// deep copy of every request, as [Model] does.
type StreamModel struct {
	mu       sync.Mutex
	turns    []StreamTurn
	requests []react.Request
	sent     atomic.Int64
}

var _ react.StreamModel = (*StreamModel)(nil)

// Stream returns a model that streams turns in order, one per request.
func Stream(turns ...StreamTurn) *StreamModel {
	return &StreamModel{turns: slices.Clone(turns)}
}

// Generate implements [react.Model]: the next turn assembled with
// [react.Collect], as a model that does not stream would answer it.
func (m *StreamModel) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	return react.Collect(m.GenerateStream(ctx, req))
}

// GenerateStream implements [react.StreamModel]. Iterating the sequence
// consumes the next turn (a done ctx yields ctx.Err() without consuming
// one) and yields its chunks one by one, checking ctx before each, then
// the turn's Err if it has one. The loop's reading paces it: a chunk is
// produced only when the previous one was taken ([StreamModel.Sent]
// counts them).
func (m *StreamModel) GenerateStream(ctx context.Context, req react.Request) iter.Seq2[react.Chunk, error] {
	return func(yield func(react.Chunk, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(react.Chunk{}, err)
			return
		}
		m.mu.Lock()
		n := len(m.requests) + 1
		m.requests = append(m.requests, cloneRequest(req))
		total := len(m.turns)
		var t StreamTurn
		if n <= total {
			t = m.turns[n-1]
		}
		m.mu.Unlock()
		if n > total {
			yield(react.Chunk{}, fmt.Errorf("%w: turn %d requested, the script has %d turn(s); last message: %s",
				ErrScriptExhausted, n, total, describeLast(req)))
			return
		}
		for _, c := range t.Chunks {
			if err := ctx.Err(); err != nil {
				yield(react.Chunk{}, err)
				return
			}
			m.sent.Add(1)
			if !yield(c, nil) {
				return
			}
		}
		if t.Err != nil {
			yield(react.Chunk{}, t.Err)
		}
	}
}

// Requests returns copies of the requests received so far, in order.
func (m *StreamModel) Requests() []react.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// Turns returns the number of turns requested so far.
func (m *StreamModel) Turns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// Sent returns the number of chunks delivered so far, over every turn.
func (m *StreamModel) Sent() int64 { return m.sent.Load() }

// Split returns resp as a streamed turn whose text and each call's
// arguments come in fragments of at most size bytes (cut between UTF-8
// sequences; size < 1 counts as 1): first the text's chunks, then each
// call's, its id and tool name with its first fragment (a call without
// arguments is one chunk). The last chunk carries resp's ID, Model,
// FinishReason and Usage. [react.Collect] of the result is resp (with nil
// arguments for a call that had none).
func Split(resp react.Response, size int) StreamTurn {
	size = max(size, 1)
	var chunks []react.Chunk
	for _, s := range pieces(resp.Text, size) {
		chunks = append(chunks, react.Chunk{Text: s})
	}
	for i, c := range resp.ToolCalls {
		args := pieces(string(c.Args), size)
		if len(args) == 0 {
			args = []string{""}
		}
		for k, a := range args {
			d := &react.CallDelta{Index: i, Args: a}
			if k == 0 {
				d.ID, d.Name = c.ID, c.Name
			}
			chunks = append(chunks, react.Chunk{Call: d})
		}
	}
	if len(chunks) == 0 {
		chunks = append(chunks, react.Chunk{})
	}
	last := &chunks[len(chunks)-1]
	last.ID, last.Model, last.FinishReason = resp.ID, resp.Model, resp.FinishReason
	if resp.Usage != nil {
		u := *resp.Usage
		last.Usage = &u
	}
	return StreamTurn{Chunks: chunks}
}

// pieces cuts s into pieces of at most size bytes, never inside a UTF-8
// sequence (a sequence longer than size is one piece).
func pieces(s string, size int) []string {
	var out []string
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 {
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// Streaming returns a [react.StreamModel] that streams whatever m answers,
// cut by [Split] into fragments of at most size bytes: a scripted [Model]
// (or any model) made to stream, so that a test or an offline demo runs
// its agent through the loop's streaming path. An error of m ends the
// stream without a chunk.
func Streaming(m react.Model, size int) react.StreamModel {
	return streaming{m: m, size: size}
}

type streaming struct {
	m    react.Model
	size int
}

// Generate asks the model it streams.
func (s streaming) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	return s.m.Generate(ctx, req)
}

// GenerateStream asks the model it streams and yields the answer's
// fragments.
func (s streaming) GenerateStream(ctx context.Context, req react.Request) iter.Seq2[react.Chunk, error] {
	return func(yield func(react.Chunk, error) bool) {
		resp, err := s.m.Generate(ctx, req)
		if err != nil {
			yield(react.Chunk{}, err)
			return
		}
		for _, c := range Split(resp, s.size).Chunks {
			if err := ctx.Err(); err != nil {
				yield(react.Chunk{}, err)
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}
