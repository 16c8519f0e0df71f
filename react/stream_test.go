package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

func chunkText(s string) react.Chunk { return react.Chunk{Text: s} }

func chunkCall(i int, id, name, args string) react.Chunk {
	return react.Chunk{Call: &react.CallDelta{Index: i, ID: id, Name: name, Args: args}}
}

func TestAssembler(t *testing.T) {
	usage := func(in, out int64) *react.Usage { return &react.Usage{InputTokens: in, OutputTokens: out} }
	for _, tt := range []struct {
		name   string
		why    string
		chunks []react.Chunk
		want   react.Response
		err    string
	}{
		{
			name: "text", why: "fragments are joined in order",
			chunks: []react.Chunk{chunkText("Hel"), chunkText(""), chunkText("lo, "), chunkText("世界")},
			want:   react.Response{Text: "Hello, 世界"},
		},
		{
			name: "a call's arguments in many chunks", why: "a call is its fragments joined by index",
			chunks: []react.Chunk{chunkCall(0, "c1", "pay", `{"to`), chunkCall(0, "", "", `":"al`), chunkCall(0, "", "", `ice","amount":5}`)},
			want:   react.Response{ToolCalls: []react.ToolCall{{ID: "c1", Name: "pay", Args: json.RawMessage(`{"to":"alice","amount":5}`)}}},
		},
		{
			name: "interleaved calls, id and name late", why: "each fragment goes to its index; id and name may come with any fragment",
			chunks: []react.Chunk{
				chunkCall(3, "", "", `{"a"`), chunkCall(1, "b1", "read", `{}`), chunkCall(3, "a1", "write", `:1}`),
				chunkText("done"),
			},
			want: react.Response{Text: "done", ToolCalls: []react.ToolCall{
				{ID: "a1", Name: "write", Args: json.RawMessage(`{"a":1}`)},
				{ID: "b1", Name: "read", Args: json.RawMessage(`{}`)},
			}},
		},
		{
			name: "metadata", why: "first id and model, last finish reason and usage",
			chunks: []react.Chunk{
				{ID: "r1", Model: "m-1", Usage: usage(10, 0)},
				{ID: "r2", Model: "m-2", FinishReason: "length"},
				{FinishReason: "stop", Usage: usage(10, 7)},
				{},
			},
			want: react.Response{ID: "r1", Model: "m-1", FinishReason: "stop", Usage: usage(10, 7)},
		},
		{
			name: "a cut argument text", why: "kept as sent: invalid JSON the loop rejects, never replaced by {}",
			chunks: []react.Chunk{chunkCall(0, "c", "pay", `{"to":"al`), {FinishReason: "max_tokens"}},
			want:   react.Response{FinishReason: "max_tokens", ToolCalls: []react.ToolCall{{ID: "c", Name: "pay", Args: json.RawMessage(`{"to":"al`)}}},
		},
		{
			name: "id changes", why: "two ids for one index is not one call",
			chunks: []react.Chunk{chunkCall(0, "a", "pay", "{"), chunkCall(0, "b", "", "}")},
			err:    `call 0 changed its id from "a" to "b"`,
		},
		{
			name: "name changes", why: "two tools for one index is not one call",
			chunks: []react.Chunk{chunkCall(0, "a", "pay", "{"), chunkCall(0, "", "refund", "}")},
			err:    `call 0 changed its name from "pay" to "refund"`,
		},
		{
			name: "negative index", why: "no position in a turn",
			chunks: []react.Chunk{chunkCall(-1, "a", "pay", "{}")},
			err:    "call index -1",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var a react.Assembler
			var err error
			for _, c := range tt.chunks {
				if err = a.Add(c); err != nil {
					break
				}
			}
			if tt.err != "" {
				require.ErrorIs(t, err, react.ErrMalformedStream, tt.why)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err, tt.why)
			assert.Equal(t, tt.want, a.Response(), tt.why)
			assert.Equal(t, react.Response{}, a.Response(), "Response resets the assembler")
		})
	}
}

func TestAssemblerBoundsCalls(t *testing.T) {
	var a react.Assembler
	for i := range react.MaxStreamCalls {
		require.NoError(t, a.Add(chunkCall(i, fmt.Sprint("c", i), "t", "{}")))
	}
	require.NoError(t, a.Add(chunkCall(0, "", "", "")), "a known call is not a new one")
	err := a.Add(chunkCall(react.MaxStreamCalls, "x", "t", "{}"))
	require.ErrorIs(t, err, react.ErrMalformedStream)
}

func TestCollect(t *testing.T) {
	cut := errors.New("connection closed before the end marker")
	resp, err := react.Collect(reacttest.Stream(reacttest.StreamTurn{
		Chunks: []react.Chunk{chunkText("hi"), chunkCall(0, "c", "pay", `{"to":`)}, Err: cut,
	}).GenerateStream(context.Background(), react.Request{}))
	require.ErrorIs(t, err, cut)
	assert.Equal(t, react.Response{}, resp, "a turn with an error is never partly returned")

	want := reacttest.Turn("paying", reacttest.Call("c", "pay", `{"to":"alice"}`))
	want.FinishReason, want.ID = "tool_calls", "r1"
	resp, err = react.Collect(reacttest.Stream(reacttest.Split(want, 2)).GenerateStream(context.Background(), react.Request{}))
	require.NoError(t, err)
	assert.Equal(t, want, resp)
}

// streamLoop is a loop on a streaming model, with a run store, a write
// tool (pay) and a read tool (look).
type streamLoop struct {
	loop  *react.Loop
	cfg   react.Config
	rec   *recorder
	runs  *runstore.Memory
	pay   *fake
	look  *fake
	model *reacttest.StreamModel
	node  react.Node
}

func newStreamLoop(t *testing.T, turns ...reacttest.StreamTurn) *streamLoop {
	t.Helper()
	s := &streamLoop{
		pay:   newFake("pay", tool.Write, ok(map[string]any{"paid": true})),
		look:  newFake("look", tool.Read, ok(map[string]any{"balance": 7})),
		model: reacttest.Stream(turns...),
		runs:  runstore.NewMemory(),
		node:  react.Node{Name: "pay", Tools: []string{"pay", "look"}, ParallelReads: true},
	}
	e := newEnv(t, newScript(), s.pay.Tool, s.look.Tool)
	s.rec = e.rec
	s.cfg = e.cfg
	s.cfg.Model, s.cfg.Runs = s.model, s.runs
	var err error
	s.loop, err = react.New(s.cfg)
	require.NoError(t, err)
	return s
}

// collect iterates over a stream to its end and returns its events and the
// error of its last pair.
func collect(t *testing.T, seq func(func(react.Event, error) bool)) ([]react.Event, error) {
	t.Helper()
	var events []react.Event
	var last error
	for e, err := range seq {
		events = append(events, e)
		last = err
		if e.Kind != react.EventRunEnd {
			require.NoError(t, err, "only the run end pair carries an error")
		}
	}
	require.NotEmpty(t, events)
	end := events[len(events)-1]
	require.Equal(t, react.EventRunEnd, end.Kind, "the last event is the run end")
	require.Equal(t, last, end.RunEnd.Err)
	return events, last
}

func kinds(events []react.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Kind.String()
	}
	return out
}

func textOf(events []react.Event) string {
	var b strings.Builder
	for _, e := range events {
		if e.Kind == react.EventTextDelta {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// A streamed run yields the text as it comes, the fragments of a call the
// model writes, then each call's start and verdict, the round's end, and
// the run end with the Result; the observer sees the same run.
func TestRunStream(t *testing.T) {
	pay := reacttest.Turn("Paying alice now.", reacttest.Call("c1", "pay", `{"to":"alice","amount":5}`))
	s := newStreamLoop(t,
		reacttest.Split(pay, 1),
		reacttest.Split(reacttest.Calls(reacttest.Call("a", react.ToolApproval, `{"tool":"pay"}`)), 3),
	)
	events, err := collect(t, s.loop.RunStream(context.Background(), s.node, "pay alice 5"))
	require.NoError(t, err)
	assert.Equal(t, "Paying alice now.", textOf(events))
	var args strings.Builder
	deltas := 0
	for _, e := range events {
		if e.Kind == react.EventCallDelta && e.Round == 1 {
			deltas++
			args.WriteString(e.Call.Args)
		}
	}
	assert.Equal(t, len(`{"to":"alice","amount":5}`), deltas, "one delta per fragment")
	assert.Equal(t, `{"to":"alice","amount":5}`, args.String())

	var verdict, susp *react.Event
	for i := range events {
		switch events[i].Kind {
		case react.EventToolInvoked:
			verdict = &events[i]
		case react.EventSuspended:
			susp = &events[i]
		default:
		}
	}
	require.NotNil(t, verdict)
	assert.Equal(t, "c1", verdict.Tool.CallID)
	assert.Equal(t, outcome.Deferred, verdict.Tool.Outcome)
	assert.Equal(t, errcode.ApprovalRequired, verdict.Tool.Code)
	assert.Equal(t, react.CallDeferred, verdict.Tool.Layers.Call)
	require.NotNil(t, susp)
	require.NotNil(t, susp.Suspend.Suspension.Approval, "what the person must decide")
	assert.Equal(t, "pay", susp.Suspend.Suspension.Approval.Tool)
	assert.JSONEq(t, `{"to":"alice","amount":5}`, string(susp.Suspend.Suspension.Approval.Args))

	end := events[len(events)-1].RunEnd
	require.NotNil(t, end.Result)
	assert.Equal(t, react.Suspended, end.Result.Status)
	assert.NotEmpty(t, end.Result.Snapshot)
	assert.Zero(t, s.pay.executions())

	// The observer heard the run as without streaming.
	plain := newStreamLoop(t, reacttest.Split(pay, 1000), reacttest.Split(reacttest.Calls(reacttest.Call("a", react.ToolApproval, `{"tool":"pay"}`)), 1000))
	res, err := plain.loop.Run(context.Background(), plain.node, "pay alice 5")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	assert.Equal(t, plain.rec.kinds(), s.rec.kinds(), "observers see the same run streamed or not")
	assert.Equal(t, res.Transcript, end.Result.Transcript)
}

// A model that does not stream works through the same API: one text delta
// per turn and one delta per call.
func TestRunStreamPlainModel(t *testing.T) {
	read := newFake("read", tool.Read, ok(map[string]any{"n": 1}))
	e := newEnv(t, newScript(
		react.Response{Text: "looking", ToolCalls: []react.ToolCall{call("r", "read", `{"q":1}`)}},
		turn(call("f", react.ToolFinish, `{}`)),
	), read.Tool)
	events, err := collect(t, e.loop.RunStream(context.Background(), react.Node{Tools: []string{"read"}}, "go"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"run_start",
		"model_start", "text_delta", "call_delta", "model_end", "tool_start", "tool_end", "tool_invoked", "round_end",
		"model_start", "call_delta", "model_end", "tool_start", "tool_end", "tool_invoked", "round_end",
		"finished", "run_end",
	}, kinds(events))
	assert.Equal(t, "looking", events[2].Text)
	assert.Equal(t, react.CallDelta{Index: 0, ID: "r", Name: "read", Args: `{"q":1}`}, *events[3].Call)
	assert.Equal(t, react.Finished, events[len(events)-1].RunEnd.Result.Status)
}

// A stream cut in the middle of a call is a model error: the run is
// interrupted with a resumable snapshot and nothing of the turn runs; the
// same goes for a malformed stream.
func TestRunStreamCutCallNeverExecutes(t *testing.T) {
	cut := &modelerr.Error{Kind: modelerr.Malformed, Provider: "test", Err: errors.New("stream ended before its end marker")}
	for _, tt := range []struct {
		name string
		turn reacttest.StreamTurn
		is   error
	}{
		{"cut", reacttest.StreamTurn{Chunks: []react.Chunk{chunkText("paying"), chunkCall(0, "c1", "pay", `{"to":"alice","amo`)}, Err: cut}, cut},
		{"complete arguments, then cut", reacttest.StreamTurn{Chunks: []react.Chunk{chunkCall(0, "c1", "pay", `{"to":"alice","amount":5}`)}, Err: cut}, cut},
		{"malformed", reacttest.StreamTurn{Chunks: []react.Chunk{chunkCall(0, "c1", "pay", `{"to":"alice",`), chunkCall(0, "c2", "pay", `"amount":5}`)}}, react.ErrMalformedStream},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStreamLoop(t, tt.turn, reacttest.Split(reacttest.Calls(reacttest.Call("f", react.ToolFinish, `{}`)), 4))
			events, err := collect(t, s.loop.RunStream(context.Background(), s.node, "pay alice 5"))
			require.ErrorIs(t, err, tt.is)
			for _, e := range events {
				assert.NotContains(t, []react.EventKind{react.EventToolStart, react.EventToolInvoked}, e.Kind, "nothing of the turn runs")
			}
			res := events[len(events)-1].RunEnd.Result
			assert.Equal(t, react.Interrupted, res.Status)
			assert.Zero(t, s.pay.executions())
			assert.Equal(t, 0, res.Rounds, "the cut turn is not in the run")

			again, err := s.loop.ResumeRun(context.Background(), res.Run, react.Continue())
			require.NoError(t, err)
			assert.Equal(t, react.Finished, again.Status)
			assert.Zero(t, s.pay.executions())
		})
	}
}

// A call whose arguments a token limit cut is answered REJECTED
// (TOOL_CALL_CUT_OFF: the turn ended at max_tokens), never run, never
// replaced by a valid {}.
func TestRunStreamCutByTokenLimit(t *testing.T) {
	s := newStreamLoop(t,
		reacttest.StreamTurn{Chunks: []react.Chunk{chunkCall(0, "c1", "pay", `{"to":"alice","amo`), {FinishReason: "max_tokens"}}},
		reacttest.Split(reacttest.Calls(reacttest.Call("f", react.ToolFinish, `{}`)), 4),
	)
	res, err := s.loop.Run(context.Background(), s.node, "pay alice 5")
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status)
	require.NotEmpty(t, res.Calls)
	assert.Equal(t, outcome.Rejected, res.Calls[0].Outcome)
	assert.Equal(t, errcode.ToolCallCutOff, res.Calls[0].Code)
	assert.Zero(t, s.pay.executions())
}

// Breaking out of the iteration cancels the run: it stops, interrupted,
// with its snapshot in the run store, and resumes from there.
func TestRunStreamBreak(t *testing.T) {
	for _, tt := range []struct {
		name   string
		at     react.EventKind
		looked int // reads run before the break
	}{
		// the turn being streamed is dropped: on resume the model is asked again
		{"at the first text delta", react.EventTextDelta, 0},
		{"at a call's fragment", react.EventCallDelta, 0},
		// the turn was complete: its read ran once, and is not run again
		{"at a verdict", react.EventToolInvoked, 1},
		{"at the round end", react.EventRoundEnd, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStreamLoop(t,
				reacttest.Split(reacttest.Turn("let me look", reacttest.Call("l1", "look", `{}`)), 2),
				reacttest.Split(reacttest.Calls(reacttest.Call("f", react.ToolFinish, `{}`)), 4),
			)
			var run string
			n := 0
			for e, err := range s.loop.RunStream(context.Background(), s.node, "how much") {
				require.NoError(t, err)
				run = e.Run
				n++
				if e.Kind == tt.at {
					break
				}
			}
			require.NotEmpty(t, run)
			assert.Equal(t, tt.looked, s.look.executions())
			stored, ok, err := s.runs.Get(context.Background(), run)
			require.NoError(t, err)
			require.True(t, ok, "the interrupted run is kept")
			assert.Equal(t, runstore.Interrupted, stored.Kind)
			ends := s.rec.of("finished")
			assert.Empty(t, ends)

			res, err := s.loop.ResumeRun(context.Background(), run, react.Continue())
			require.NoError(t, err)
			assert.Equal(t, react.Finished, res.Status)
			assert.Equal(t, tt.looked, s.look.executions(), "nothing ran twice")
			assert.Equal(t, 2, s.model.Turns(), "the script's two turns, the finish after the resume")
		})
	}
}

// The observers see the interruption of a run whose host broke out,
// with its error and snapshot.
func TestRunStreamBreakReportsTheEnd(t *testing.T) {
	s := newStreamLoop(t, reacttest.Split(reacttest.Text("a long answer"), 1))
	var ends []react.RunEndEvent
	var cause error
	s.cfg.Observer = react.ObserverFunc(func(ctx context.Context, e react.Event) {
		if e.Kind == react.EventRunEnd {
			ends = append(ends, *e.RunEnd)
			cause = context.Cause(ctx)
		}
	})
	loop, err := react.New(s.cfg)
	require.NoError(t, err)
	for _, err := range loop.RunStream(context.Background(), s.node, "talk") {
		require.NoError(t, err)
		break
	}
	require.Len(t, ends, 1)
	assert.ErrorIs(t, cause, react.ErrStreamClosed, "the run's context says why it was cancelled")
	assert.ErrorIs(t, ends[0].Err, context.Canceled)
	assert.Equal(t, react.Interrupted, ends[0].Status)
	assert.NotEmpty(t, ends[0].Result.Snapshot)
}

// A slow consumer slows the run: the model produces a chunk only once the
// consumer took the previous one, so nothing is buffered between them.
func TestRunStreamSlowConsumer(t *testing.T) {
	const n = 10000
	chunks := make([]react.Chunk, n)
	for i := range chunks {
		chunks[i] = chunkText("x")
	}
	s := newStreamLoop(t, reacttest.StreamTurn{Chunks: chunks}, reacttest.Split(reacttest.Calls(reacttest.Call("f", react.ToolFinish, `{}`)), 4))
	got := 0
	maxAhead := int64(0)
	for e, err := range s.loop.RunStream(context.Background(), s.node, "talk") {
		require.NoError(t, err)
		if e.Kind != react.EventTextDelta {
			continue
		}
		got++
		maxAhead = max(maxAhead, s.model.Sent()-int64(got))
		if got%1000 == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	assert.Equal(t, n, got)
	assert.Zero(t, maxAhead, "the model is never ahead of the consumer")
}

// The events of a batch of parallel reads reach the stream in call order,
// on the iterating goroutine, after the batch.
func TestRunStreamParallelReads(t *testing.T) {
	s := newStreamLoop(t,
		reacttest.Split(reacttest.Calls(reacttest.Call("l1", "look", `{"a":1}`), reacttest.Call("l2", "look", `{"a":2}`), reacttest.Call("l3", "look", `{"a":3}`)), 5),
		reacttest.Split(reacttest.Calls(reacttest.Call("f", react.ToolFinish, `{}`)), 4),
	)
	var mu sync.Mutex // the race detector checks that the loop body is never run concurrently
	var order []string
	events, err := collect(t, func(yield func(react.Event, error) bool) {
		for e, err := range s.loop.RunStream(context.Background(), s.node, "look thrice") {
			mu.Lock()
			if e.Kind == react.EventToolStart || e.Kind == react.EventToolEnd {
				id := ""
				if e.ToolStart != nil {
					id = e.ToolStart.CallID
				} else {
					id = e.ToolEnd.CallID
				}
				order = append(order, e.Kind.String()+" "+id)
			}
			mu.Unlock()
			if !yield(e, err) {
				return
			}
		}
	})
	require.NoError(t, err)
	assert.Equal(t, react.Finished, events[len(events)-1].RunEnd.Result.Status)
	assert.Equal(t, []string{
		"tool_start l1", "tool_end l1", "tool_start l2", "tool_end l2", "tool_start l3", "tool_end l3",
		"tool_start f", "tool_end f",
	}, order)
	assert.Equal(t, 3, s.look.executions())
}

// ResumeStream streams the resumed run; a refused decision is one pair,
// the run end with the error, and leaves the snapshot resumable.
func TestResumeStream(t *testing.T) {
	s := newStreamLoop(t,
		reacttest.Split(reacttest.Calls(reacttest.Call("c1", "pay", `{"to":"alice","amount":5}`)), 7),
		reacttest.Split(reacttest.Calls(reacttest.Call("a", react.ToolApproval, `{"tool":"pay"}`)), 7),
		reacttest.Split(reacttest.Calls(reacttest.Call("c2", "pay", `{"to":"alice","amount":5}`)), 7),
		reacttest.Split(reacttest.Turn("Paid.", reacttest.Call("f", react.ToolFinish, `{}`)), 2),
	)
	res, err := s.loop.Run(context.Background(), s.node, "pay alice 5")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)

	events, err := collect(t, s.loop.ResumeStream(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "yes")))
	require.ErrorIs(t, err, react.ErrDecision)
	assert.Equal(t, []string{"run_end"}, kinds(events))

	events, err = collect(t, s.loop.ResumeStream(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket)))
	require.NoError(t, err)
	assert.Equal(t, "run_start", events[0].Kind.String())
	assert.True(t, events[0].RunStart.Resumed)
	assert.Equal(t, "Paid.", textOf(events))
	assert.Equal(t, react.Finished, events[len(events)-1].RunEnd.Result.Status)
	assert.Equal(t, 1, s.pay.executions())

	events, err = collect(t, s.loop.ResumeStream(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket)))
	require.ErrorIs(t, err, react.ErrAlreadyResumed)
	assert.Len(t, events, 1)
	assert.Equal(t, 1, s.pay.executions())
}

// Breaking out of ResumeStream before the decision applied gives the claim
// back: the same snapshot resumes with the same decision.
func TestResumeStreamBreakBeforeTheDecision(t *testing.T) {
	s := newStreamLoop(t,
		reacttest.Split(reacttest.Calls(reacttest.Call("c1", "pay", `{"to":"alice","amount":5}`)), 7),
		reacttest.Split(reacttest.Calls(reacttest.Call("a", react.ToolApproval, `{"tool":"pay"}`)), 7),
		reacttest.Split(reacttest.Calls(reacttest.Call("c2", "pay", `{"to":"alice","amount":5}`)), 7),
		reacttest.Split(reacttest.Calls(reacttest.Call("f", react.ToolFinish, `{}`)), 7),
	)
	res, err := s.loop.Run(context.Background(), s.node, "pay alice 5")
	require.NoError(t, err)
	for e, err := range s.loop.ResumeRunStream(context.Background(), res.Run, react.Approve(res.Suspension.Ticket)) {
		require.NoError(t, err)
		require.Equal(t, react.EventRunStart, e.Kind)
		break
	}
	assert.Zero(t, s.pay.executions())
	res, err = s.loop.ResumeRun(context.Background(), res.Run, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 1, s.pay.executions())
}

// A run that cannot start is one pair: the run end with the error.
func TestRunStreamRefused(t *testing.T) {
	s := newStreamLoop(t)
	events, err := collect(t, s.loop.RunStream(context.Background(), react.Node{Tools: []string{"nope"}}, "x"))
	require.ErrorIs(t, err, react.ErrInvalidNode)
	assert.Len(t, events, 1)
	//nolint:staticcheck // a nil context on purpose
	events, err = collect(t, s.loop.RunStream(nil, s.node, "x"))
	require.ErrorIs(t, err, react.ErrNilContext)
	assert.Len(t, events, 1)
}

// A panic in the loop body goes on through the run; the observers get the
// run's end (ErrPanicked) and the stream yields nothing more.
func TestRunStreamPanickingConsumer(t *testing.T) {
	s := newStreamLoop(t, reacttest.Split(reacttest.Text("hello"), 1))
	var ends []error
	s.cfg.Observer = react.ObserverFunc(func(_ context.Context, e react.Event) {
		if e.Kind == react.EventRunEnd {
			ends = append(ends, e.RunEnd.Err)
		}
	})
	loop, err := react.New(s.cfg)
	require.NoError(t, err)
	defer func() {
		assert.Equal(t, "consumer", recover())
		assert.Equal(t, []error{react.ErrPanicked}, ends)
	}()
	for e, err := range loop.RunStream(context.Background(), s.node, "hi") {
		require.NoError(t, err)
		if e.Kind == react.EventTextDelta {
			panic("consumer")
		}
	}
}

// A streamed model call reports the time to its first chunk.
func TestRunStreamFirstChunk(t *testing.T) {
	s := newStreamLoop(t, reacttest.Split(reacttest.Calls(reacttest.Call("f", react.ToolFinish, `{}`)), 2))
	var ends []react.ModelEndEvent
	s.cfg.Observer = react.ObserverFunc(func(_ context.Context, e react.Event) {
		if e.Kind == react.EventModelEnd {
			ends = append(ends, *e.ModelEnd)
		}
	})
	loop, err := react.New(s.cfg)
	require.NoError(t, err)
	_, err = loop.Run(context.Background(), s.node, "hi")
	require.NoError(t, err)
	require.Len(t, ends, 1)
	assert.True(t, ends[0].Streamed)
	assert.Equal(t, time.Millisecond, ends[0].FirstChunk, "the test clock advances 1 ms a reading: start, then the first chunk")
	assert.Greater(t, ends[0].Duration, ends[0].FirstChunk)
}

// nilStream streams nothing: GenerateStream returns nil, so the loop
// calls Generate.
type nilStream struct{ *script }

func (nilStream) GenerateStream(context.Context, react.Request) iter.Seq2[react.Chunk, error] {
	return nil
}

// A StreamModel that does not stream a request (GenerateStream returns
// nil) is asked with Generate, and its answer is one delta.
func TestStreamModelDeclines(t *testing.T) {
	e := newEnv(t, newScript(react.Response{Text: "whole", ToolCalls: []react.ToolCall{call("f", react.ToolFinish, `{}`)}}))
	var ends []react.ModelEndEvent
	e.cfg.Model = nilStream{e.model}
	e.cfg.Observer = react.ObserverFunc(func(_ context.Context, ev react.Event) {
		if ev.Kind == react.EventModelEnd {
			ends = append(ends, *ev.ModelEnd)
		}
	})
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	events, err := collect(t, l.RunStream(context.Background(), react.Node{}, "go"))
	require.NoError(t, err)
	assert.Equal(t, "whole", textOf(events))
	require.Len(t, ends, 1)
	assert.False(t, ends[0].Streamed)
	assert.Zero(t, ends[0].FirstChunk)
}

// Metrics count a streamed run as the same run not streamed.
func TestRunStreamMetrics(t *testing.T) {
	turns := func() []reacttest.StreamTurn {
		return []reacttest.StreamTurn{
			reacttest.Split(reacttest.Turn("looking", reacttest.Call("l1", "look", `{}`), reacttest.Call("l2", "look", `{"b":1}`)), 3),
			reacttest.Split(reacttest.Text("hmm"), 1),
			reacttest.Split(reacttest.Calls(reacttest.Call("c1", "pay", `{"to":"bob"}`)), 3),
			reacttest.Split(reacttest.Calls(reacttest.Call("a", react.ToolApproval, `{"tool":"pay"}`)), 3),
		}
	}
	var snaps []react.MetricsSnapshot
	for _, streamed := range []bool{false, true} {
		s := newStreamLoop(t, turns()...)
		var m react.Metrics
		s.cfg.Observer = &m
		loop, err := react.New(s.cfg)
		require.NoError(t, err)
		if streamed {
			_, err = collect(t, loop.RunStream(context.Background(), s.node, "pay bob"))
		} else {
			_, err = loop.Run(context.Background(), s.node, "pay bob")
		}
		require.NoError(t, err)
		snaps = append(snaps, m.Snapshot())
	}
	assert.Equal(t, snaps[0], snaps[1])
	assert.EqualValues(t, 1, snaps[1].Business.Approvals)
	assert.EqualValues(t, 1, snaps[1].Business.NodesStarted)
}
