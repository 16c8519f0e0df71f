package react

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
)

// Chunk is one piece of a model's turn as a streaming API delivers it:
// a text fragment, a fragment of a tool call, and what the API says about
// the turn (its id, the model, the finish reason, the usage). Any field
// may be empty; a chunk may carry several of them. [Assembler] puts the
// chunks of a turn together into a [Response].
type Chunk struct {
	// Text is a fragment of the model's text: the turn's text is the
	// concatenation of its chunks' Text, in order.
	Text string
	// Call is a fragment of a tool call; nil when the chunk has none. A
	// call is identified by its Index in the turn: its ID and Name may
	// come with any of its fragments (usually the first), its arguments
	// are the concatenation of its fragments' Args.
	Call *CallDelta
	// ID is the API's id of the response, Model the model that answered,
	// as the API names them ("" when this chunk does not say).
	ID    string
	Model string
	// FinishReason is why the model stopped, in the API's words ("" when
	// this chunk does not say).
	FinishReason string
	// Usage is the turn's token usage so far, as the API reported it (nil
	// when this chunk does not say): a later Usage replaces an earlier
	// one, so an adapter whose API reports usage in pieces sends the sum.
	Usage *Usage
	// Parts are the turn's pieces in order (see [Part]), as far as the
	// adapter assembled them (nil when this chunk does not say): a later
	// Parts replaces an earlier one, so an adapter sends them once, with
	// its last chunk.
	Parts []Part
}

// StreamModel is a [Model] that can also deliver a turn as it is
// generated. [New] checks once whether Config.Model implements it; the
// loop then makes every model call through GenerateStream (in Run and
// Resume as in their streaming forms, so observers see the same run
// either way), reports each chunk's text and call fragments as
// [EventTextDelta] and [EventCallDelta], and assembles the turn with an
// [Assembler]. Generate must answer what [Collect] of GenerateStream
// would.
//
// GenerateStream returns the chunks of one turn, in order. The sequence
// ends after the turn's last chunk, with a nil error only when the turn
// is complete: when the API's answer did not end as the API promises (the
// connection closed before the end marker, an in-band error event, a
// malformed event), the last pair carries a non-nil error and the loop
// discards the whole turn. Nothing of a turn runs before its sequence
// ended without an error, so a call cut by a dropped connection never
// executes; the run is interrupted with a resumable snapshot, as for any
// model error. The loop stops reading (breaks out of the sequence) when
// the context is done or the host stops reading the run's stream; the
// sequence must then release what it holds (close the response body) and
// return. An error should be a [*modelerr.Error] for the host to branch
// on, as Generate's are.
//
// GenerateStream may return nil to say that it does not stream this
// request (an adapter configured not to stream, for a server that cannot):
// the loop then calls Generate and reports its answer as one delta, as for
// a model that does not stream.
type StreamModel interface {
	Model
	GenerateStream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
}

// ErrMalformedStream is wrapped by the error of an [Assembler] given
// chunks that do not make one turn: a call whose id or name changes
// between its fragments, a negative call index, or more than
// [MaxStreamCalls] calls.
var ErrMalformedStream = errors.New("react: malformed model stream")

// MaxStreamCalls bounds the tool calls of one streamed turn.
const MaxStreamCalls = 1024

// Assembler puts the chunks of one streamed turn together into a
// [Response]: the text fragments concatenated, each call's fragments
// joined by its index (in the order the calls first appear), the first
// non-empty ID and Model, the last non-empty FinishReason, the last
// Usage and the last non-nil Parts. It keeps every call's arguments exactly as sent, complete or
// not: whether the turn is complete is for the stream to say (see
// [StreamModel]); an argument text cut by a token limit stays invalid
// JSON, which the loop answers REJECTED without executing it. The zero
// value is ready to use; an Assembler is used by one goroutine at a time.
// Adapters use it to implement Generate with their stream ([Collect]).
type Assembler struct {
	text   strings.Builder
	calls  []assembling
	id     string
	model  string
	finish string
	usage  *Usage
	parts  []Part
}

// assembling is a call whose fragments are being joined.
type assembling struct {
	index    int
	id, name string
	args     []byte
}

// Add adds chunk c to the turn. It returns an error wrapping
// [ErrMalformedStream] when c does not fit the chunks added before; the
// turn is then unusable.
func (a *Assembler) Add(c Chunk) error {
	a.text.WriteString(c.Text)
	if c.ID != "" && a.id == "" {
		a.id = c.ID
	}
	if c.Model != "" && a.model == "" {
		a.model = c.Model
	}
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
	if c.Usage != nil {
		u := *c.Usage
		a.usage = &u
	}
	if c.Parts != nil {
		a.parts = c.Parts
	}
	if d := c.Call; d != nil {
		return a.addCall(d)
	}
	return nil
}

func (a *Assembler) addCall(d *CallDelta) error {
	if d.Index < 0 {
		return fmt.Errorf("%w: call index %d", ErrMalformedStream, d.Index)
	}
	var p *assembling
	for i := len(a.calls) - 1; i >= 0; i-- {
		if a.calls[i].index == d.Index {
			p = &a.calls[i]
			break
		}
	}
	if p == nil {
		if len(a.calls) == MaxStreamCalls {
			return fmt.Errorf("%w: more than %d calls in a turn", ErrMalformedStream, MaxStreamCalls)
		}
		a.calls = append(a.calls, assembling{index: d.Index})
		p = &a.calls[len(a.calls)-1]
	}
	switch {
	case d.ID != "" && p.id != "" && d.ID != p.id:
		return fmt.Errorf("%w: call %d changed its id from %q to %q", ErrMalformedStream, d.Index, p.id, d.ID)
	case d.Name != "" && p.name != "" && d.Name != p.name:
		return fmt.Errorf("%w: call %d changed its name from %q to %q", ErrMalformedStream, d.Index, p.name, d.Name)
	}
	if p.id == "" {
		p.id = d.ID
	}
	if p.name == "" {
		p.name = d.Name
	}
	p.args = append(p.args, d.Args...)
	return nil
}

// Response returns the assembled turn and resets a for the next one; the
// Response owns its memory.
func (a *Assembler) Response() Response {
	resp := Response{Text: a.text.String(), ID: a.id, Model: a.model, FinishReason: a.finish, Usage: a.usage, Parts: a.parts}
	if len(a.calls) > 0 {
		resp.ToolCalls = make([]ToolCall, len(a.calls))
		for i, c := range a.calls {
			resp.ToolCalls[i] = ToolCall{ID: c.id, Name: c.name, Args: c.args}
		}
	}
	a.Reset()
	return resp
}

// Reset empties a.
func (a *Assembler) Reset() { *a = Assembler{} }

// Collect reads a stream of chunks to its end and returns the assembled
// [Response], or the stream's first error (or the [Assembler]'s), with an
// empty Response: a turn with an error is never partly returned.
func Collect(stream iter.Seq2[Chunk, error]) (Response, error) {
	var a Assembler
	for c, err := range stream {
		if err != nil {
			return Response{}, err
		}
		if err := a.Add(c); err != nil {
			return Response{}, err
		}
	}
	return a.Response(), nil
}

// ask makes the model call of a round: through [StreamModel] when the
// model streams (askStream), else through Generate, reporting the whole
// text and each call as one delta. It returns the time from start to the
// first chunk (0 when start is zero, the call was not streamed, or no
// chunk came) and whether the call was streamed.
func (r *run) ask(ctx context.Context, req Request, start time.Time) (Response, time.Duration, bool, error) {
	re := r.roundEvent()
	re.Round++
	if sm := r.l.streamer; sm != nil {
		if stream := sm.GenerateStream(ctx, req); stream != nil {
			resp, first, err := r.askStream(ctx, re, stream, start)
			return resp, first, true, err
		}
	}
	resp, err := r.l.model.Generate(ctx, req)
	if err == nil {
		r.deltas(ctx, re, resp)
	}
	return resp, 0, false, err
}

// askStream reads a model's stream, reporting each chunk's fragments as
// deltas and assembling them. (Apart from ask so that the variables the
// loop body shares, which move to the heap, cost only a streamed call.)
func (r *run) askStream(ctx context.Context, re RoundEvent, stream iter.Seq2[Chunk, error], start time.Time) (Response, time.Duration, error) {
	text, calls := r.hears(EventTextDelta), r.hears(EventCallDelta)
	var (
		a     Assembler
		first time.Duration
		got   bool
		fail  error
	)
	done := ctx.Done()
	for c, err := range stream {
		if err != nil {
			fail = err
			break
		}
		if !got {
			got = true
			if !start.IsZero() {
				first = r.l.now().Sub(start)
			}
		}
		if err := a.Add(c); err != nil {
			fail = err
			break
		}
		if text && c.Text != "" {
			r.emit(ctx, Event{Kind: EventTextDelta, RoundEvent: re, Text: c.Text})
		}
		if calls && c.Call != nil {
			r.emit(ctx, Event{Kind: EventCallDelta, RoundEvent: re, Call: c.Call})
		}
		select {
		case <-done: // cancelled, or the host stopped reading: the turn is dropped
			fail = ctx.Err()
		default:
		}
		if fail != nil {
			break
		}
	}
	if fail != nil {
		return Response{}, first, fail
	}
	return a.Response(), first, nil
}

// deltas reports the answer of a model that does not stream as one text
// delta and one delta per call.
func (r *run) deltas(ctx context.Context, re RoundEvent, resp Response) {
	if resp.Text != "" && r.hears(EventTextDelta) {
		r.emit(ctx, Event{Kind: EventTextDelta, RoundEvent: re, Text: resp.Text})
	}
	if !r.hears(EventCallDelta) {
		return
	}
	for i, c := range resp.ToolCalls {
		r.emit(ctx, Event{Kind: EventCallDelta, RoundEvent: re, Call: &CallDelta{Index: i, ID: c.ID, Name: c.Name, Args: string(c.Args)}})
	}
}

// sink feeds the events of a run to the host iterating over its stream,
// on the goroutine that runs the loop.
type sink struct {
	yield  func(Event, error) bool
	cancel context.CancelCauseFunc
	// closed: no event may be yielded any more (the host broke out of the
	// iteration, its loop body is panicking, or the run ended).
	closed  bool
	started bool // EventRunStart was yielded
}

// ErrStreamClosed is the cause of the context of a run whose host broke
// out of the iteration of [Loop.RunStream] or [Loop.ResumeStream]
// (context.Cause): the run is interrupted as if cancelled.
var ErrStreamClosed = errors.New("react: the host stopped reading the run's stream")

// put yields e to the host. When the host breaks out, the run's context
// is cancelled and nothing more is yielded. A yield that panics (the
// host's loop body) never returns, so closed stays set: the run unwinds
// without yielding again.
func (s *sink) put(e Event) {
	if s.closed {
		return
	}
	var err error
	switch e.Kind {
	case EventRunEnd:
		err = e.RunEnd.Err
	case EventRunStart:
		s.started = true
	default:
	}
	s.closed = true
	if s.yield(e, err) && e.Kind != EventRunEnd {
		s.closed = false
		return
	}
	if e.Kind != EventRunEnd && s.cancel != nil {
		s.cancel(ErrStreamClosed)
	}
}

// stream runs drive with a sink that yields the run's events and ends the
// sequence with EventRunEnd, also when drive refused to start the run.
func (l *Loop) stream(ctx context.Context, yield func(Event, error) bool, drive func(context.Context, *sink) (Result, error)) {
	s := &sink{yield: yield}
	if ctx != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		s.cancel = cancel
	}
	res, err := drive(ctx, s)
	if !s.started {
		// Refused before it started (a nil context, an invalid node, a
		// refused snapshot or decision): the sequence still ends with the
		// result and error Run or Resume would return.
		re := RoundEvent{NodeEvent: NodeEvent{Run: res.Run}, Round: res.Rounds}
		s.put(Event{Kind: EventRunEnd, RoundEvent: re, RunEnd: &RunEndEvent{
			RoundEvent: re, Status: res.Status, Failure: res.Failure, Suspension: res.Suspension,
			Stalls: res.Stalls, Goal: res.Goal, Err: err, Result: &res,
		}})
	}
}

// RunStream is [Loop.Run] as a stream: iterating over it runs the node and
// yields every [Event] of the run as it happens, on the iterating
// goroutine — the model's text and call fragments as they arrive, each
// call's start and verdict, stalls, round ends, the suspension with what
// the person must decide — the same events [Config].Observer receives,
// which it still receives. The last pair is the [EventRunEnd], whose
// RunEnd holds the Result and the error Run would have returned; that
// error is also the pair's error (every other pair's is nil). A run that
// cannot start (nil ctx, invalid node) is that one pair.
//
// The run proceeds only as the host reads: an event is yielded before
// the loop goes on, so a slow reader slows the run and nothing is
// buffered. Breaking out of the iteration cancels the run's context
// (cause [ErrStreamClosed]): the run stops as when ctx is cancelled, with
// an Interrupted result whose snapshot resumes it with [Continue]. That
// result is kept in Config.Runs when the loop has a run store (resume it
// with [Loop.ResumeRun]) and reported to the observers' EventRunEnd; a
// host without a run store that needs the snapshot cancels ctx instead
// of breaking out and reads the EventRunEnd. A panic in the loop body
// goes on through the run as a panic of the model would.
//
// Each iteration is a new run; iterate once.
func (l *Loop) RunStream(ctx context.Context, node Node, userInput string, opts ...RunOption) iter.Seq2[Event, error] {
	o := applyOptions(opts)
	return func(yield func(Event, error) bool) {
		l.stream(ctx, yield, func(ctx context.Context, s *sink) (Result, error) {
			return l.run(ctx, node, userInput, o, s)
		})
	}
}

// ResumeStream is [Loop.Resume] as a stream, as [Loop.RunStream] is Run:
// the resumed run's events, ending with EventRunEnd (its Result and error;
// a refused snapshot or decision is that one pair). Breaking out after
// the decision applied leaves an Interrupted result as RunStream does;
// before (at EventRunStart), the claim is given back and the same
// snapshot stays resumable. Iterate once: a second iteration resumes the
// same snapshot again and is refused with [ErrAlreadyResumed] once the
// first applied the decision.
func (l *Loop) ResumeStream(ctx context.Context, snapshot []byte, d Decision, opts ...RunOption) iter.Seq2[Event, error] {
	o := applyOptions(opts)
	return func(yield func(Event, error) bool) {
		l.stream(ctx, yield, func(ctx context.Context, s *sink) (Result, error) {
			return l.resumeBytes(ctx, snapshot, d, o, s)
		})
	}
}

// ResumeRunStream is [Loop.ResumeRun] as a stream, as [Loop.ResumeStream]
// is Resume.
func (l *Loop) ResumeRunStream(ctx context.Context, id string, d Decision, opts ...RunOption) iter.Seq2[Event, error] {
	o := applyOptions(opts)
	return func(yield func(Event, error) bool) {
		l.stream(ctx, yield, func(ctx context.Context, s *sink) (Result, error) {
			return l.resumeRun(ctx, id, d, o, s)
		})
	}
}
