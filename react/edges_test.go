package react_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// settable is a clock a test sets.
type settable struct{ t time.Time }

func (c *settable) now() time.Time { return c.t }

func TestSnapshotMaxAge_Exact(t *testing.T) {
	list, _, create := sitesTools()
	c := &settable{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	e.cfg.Now, e.cfg.SnapshotMaxAge = c.now, time.Second
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), approvalNode, "create a site called blog")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	for _, tt := range []struct {
		age  time.Duration
		want error
	}{
		{600 * time.Millisecond, nil}, // whole seconds used to make this 1 s: refused
		{time.Second, nil},
		{time.Second + time.Nanosecond, react.ErrSnapshotExpired},
	} {
		c.t = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).Add(tt.age)
		_, err := l.Inspect(context.Background(), res.Snapshot)
		if tt.want == nil {
			assert.NoError(t, err, "a snapshot %v old under a 1 s maximum", tt.age)
		} else {
			assert.ErrorIs(t, err, tt.want, "a snapshot %v old under a 1 s maximum", tt.age)
		}
	}
	e.cfg.SnapshotMaxAge = -time.Second
	_, err = react.New(e.cfg)
	assert.ErrorContains(t, err, "SnapshotMaxAge", "a negative maximum is refused, not read as no limit")
}

func TestMaxSnapshotBytes(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)

	e.cfg.MaxSnapshotBytes = len(res.Snapshot) - 1
	small, err := react.New(e.cfg)
	require.NoError(t, err)
	_, err = small.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	assert.ErrorIs(t, err, react.ErrSnapshotTooLarge, "one byte over the bound")
	e.cfg.MaxSnapshotBytes = len(res.Snapshot)
	e.cfg.Model = approvalAfter()
	exact, err := react.New(e.cfg)
	require.NoError(t, err)
	got, err := exact.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err, "a snapshot of exactly the bound is opened")
	assert.Equal(t, react.Finished, got.Status)
	e.cfg.MaxSnapshotBytes = len(res.Snapshot) - 1

	// A negative bound is none: any size is sealed and opened.
	e3 := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	e3.cfg.MaxSnapshotBytes = -1
	unbounded, err := react.New(e3.cfg)
	require.NoError(t, err)
	sus, err := unbounded.Run(context.Background(), approvalNode, "create a site called blog")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, sus.Status)
	done, err := e3.again(approvalAfter()).Resume(context.Background(), sus.Snapshot, react.Approve(sus.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, done.Status)

	// A forged document far over the bound is refused before it is read:
	// not even its JSON is looked at.
	forged := append([]byte(`{"format":"reactguard.react.snapshot","version":3,"key":"","mac":"","state":{"x":"`), bytes.Repeat([]byte("a"), 1<<20)...)
	_, err = small.Resume(context.Background(), forged, react.Approve(res.Suspension.Ticket))
	assert.ErrorIs(t, err, react.ErrSnapshotTooLarge)
	assert.NotErrorIs(t, err, react.ErrSnapshotCorrupt, "refused by size, not after decoding")

	// The loop never hands out a snapshot it would refuse: a run whose
	// state outgrows the bound stops interrupted with the error.
	e2 := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	e2.cfg.MaxSnapshotBytes = 512
	tight, err := react.New(e2.cfg)
	require.NoError(t, err)
	got, err = tight.Run(context.Background(), approvalNode, "create a site called blog")
	require.ErrorIs(t, err, react.ErrSnapshotTooLarge)
	assert.Equal(t, react.Interrupted, got.Status)
	assert.Empty(t, got.Snapshot)
	assert.Nil(t, got.Suspension)
}

// The default bound holds a long run of large results, and a snapshot
// keeps each result once (the transcript refers to the evidence's copy).
func TestSnapshot_ResultsKeptOnce(t *testing.T) {
	big := strings.Repeat("x", 20<<10)
	calls := 50
	var n int
	read := newFake("read_page", tool.Read, func(context.Context, tool.Request) (any, error) {
		n++
		return map[string]any{"page": n, "text": big}, nil
	})
	var turns []any
	for i := range calls {
		turns = append(turns, turn(call(fmt.Sprintf("r%d", i), "read_page", fmt.Sprintf(`{"page":%d}`, i))))
	}
	turns = append(turns, turn(call("q", react.ToolFollowUp, `{"question":"Which one?"}`)))
	e := newEnv(t, newScript(turns...), read.Tool)
	res := e.run(react.Node{Tools: []string{"read_page"}, MaxRounds: calls + 2}, "read them all")
	require.Equal(t, react.Suspended, res.Status)
	results := calls * len(big)
	assert.Less(t, len(res.Snapshot), results*13/10, "a %d-call run with %d KB results sealed %d bytes; each result must be kept once", calls, len(big)>>10, len(res.Snapshot))
	assert.Less(t, len(res.Snapshot), react.DefaultMaxSnapshotBytes)
	got, err := e.again(newScript(turn(finish("f")))).Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "the first"))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
	assert.Equal(t, toolMessage(t, res.Transcript, "r7").Content, toolMessage(t, got.Transcript, "r7").Content, "the result is restored from the evidence byte for byte")
}

func TestRunID_Refused(t *testing.T) {
	for _, tt := range []struct {
		name, id string
		ok       bool
	}{
		{"empty", "", false},
		{"not UTF-8", "run-\xff", false},
		{"past the bound", strings.Repeat("r", react.MaxRunID+1), false},
		{"at the bound", strings.Repeat("r", react.MaxRunID), true},
	} {
		e := newEnv(t, newScript(turn(finish("f"))))
		e.cfg.NewRunID = func(context.Context) string { return tt.id }
		l, err := react.New(e.cfg)
		require.NoError(t, err)
		res, err := l.Run(context.Background(), react.Node{}, "hi")
		if tt.ok {
			assert.NoError(t, err, tt.name)
			continue
		}
		assert.ErrorIs(t, err, react.ErrInvalidRunID, tt.name)
		assert.Zero(t, res.Status, "%s: nothing ran", tt.name)
		assert.Empty(t, e.model.reqs, "%s: the model was not called", tt.name)
	}
}

// NewRunID gets the context of the Run that starts the run.
func TestRunID_GetsTheContext(t *testing.T) {
	type key struct{}
	e := newEnv(t, newScript(turn(finish("f"))))
	e.cfg.NewRunID = func(ctx context.Context) string { return "req-" + ctx.Value(key{}).(string) }
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	res, err := l.Run(context.WithValue(context.Background(), key{}, "42"), react.Node{}, "hi")
	require.NoError(t, err)
	assert.Equal(t, "req-42", res.Run)
}

// A call id or a tool name longer than any store indexes is refused where
// it enters: the write is never gated, so no store limit can make its
// approval impossible.
func TestCallIDAndToolNameBounds(t *testing.T) {
	list, _, create := sitesTools()
	longID := strings.Repeat("i", react.MaxCallID+1)
	longName := strings.Repeat("n", react.MaxToolName+1)
	m := newScript(
		turn(call(longID, "create_site", `{"name":"blog"}`)),
		turn(call("ok-id", longName, `{}`)),
		turn(call(strings.Repeat("j", react.MaxCallID), "list_sites", `{}`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, list.Tool, create.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites", "create_site"}}, "create a site called blog")
	require.Equal(t, react.Finished, res.Status)
	for _, id := range []string{longID, "ok-id"} {
		msg := toolMessage(t, res.Transcript, id)
		assert.True(t, msg.IsError)
		assert.Contains(t, msg.Content, fmt.Sprint(react.MaxCallID), "the reason names the bound")
	}
	for _, ev := range e.rec.of("tool")[:2] {
		assert.Equal(t, outcome.Rejected.String()+" "+errcode.ToolCallInvalid.String(), ev.Outcome+" "+ev.Code, "call %s", ev.Tool)
	}
	_, gated, err := e.guards.Approvals.Gated(context.Background(), "run-1")
	require.NoError(t, err)
	assert.False(t, gated, "the write with the long id was never gated")
	assert.Zero(t, create.executions())
	assert.Equal(t, 1, list.executions(), "an id at the bound is accepted")
}

// MaxToolName is inclusive: a tool whose name is exactly MaxToolName bytes
// is run, not refused as too long (its id is as well: TestCallIDAndToolNameBounds).
func TestToolNameAtTheBound_IsRun(t *testing.T) {
	name := strings.Repeat("n", react.MaxToolName)
	long := newFake(name, tool.Read, ok(map[string]any{"n": 1}))
	m := newScript(
		turn(call("a", name, `{}`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, long.Tool)
	res := e.run(react.Node{Tools: []string{name}}, "hi")
	require.Equal(t, react.Finished, res.Status)
	msg := toolMessage(t, res.Transcript, "a")
	assert.False(t, msg.IsError, "a name at the bound is accepted: %s", msg.Content)
	assert.Equal(t, 1, long.executions())
	require.NotEmpty(t, e.rec.of("tool"))
	assert.Equal(t, outcome.Success.String(), e.rec.of("tool")[0].Outcome)
}

func TestResultTruncated_NamesOnlyAKeptPayload(t *testing.T) {
	for _, tt := range []struct {
		name   string
		size   int // bytes of the payload's text; 0: 40 KiB
		guards func(*guard.Options)
		custom bool
		ref    bool
	}{
		{"kept within the evidence guard's MaxPayload", 0, nil, false, true},
		{"reduced by the evidence guard", 0, func(g *guard.Options) { g.MaxPayload = 10 << 10 }, false, false},
		// MaxPayload 0 is the guard's default cap, not "no cap": a payload
		// over guard.DefaultMaxPayload is reduced, so it is not named.
		{"reduced at the evidence guard's default MaxPayload", guard.DefaultMaxPayload + 1, nil, false, false},
		{"offloaded", 0, func(g *guard.Options) {
			g.MaxPayload = 10 << 10
			g.Offload = func(context.Context, string, evidence.Record, []byte) (string, error) { return "blob-1", nil }
		}, false, true},
		{"no cap", 0, func(g *guard.Options) { g.MaxPayload = -1 }, false, true},
		// The payload is the result's JSON, {"text":"…"}: 11 bytes around
		// the text. A payload of exactly MaxPayload bytes is kept in full.
		{"exactly the evidence guard's MaxPayload", 40 << 10, func(g *guard.Options) { g.MaxPayload = 40<<10 + 11 }, false, true},
		{"one byte over the evidence guard's MaxPayload", 40 << 10, func(g *guard.Options) { g.MaxPayload = 40<<10 + 10 }, false, false},
		{"a custom handler the loop cannot see into", 0, nil, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			size := tt.size
			if size == 0 {
				size = 40 << 10
			}
			big := newFake("big", tool.Read, ok(map[string]any{"text": strings.Repeat("y", size)}))
			e := newEnv(t, newScript(turn(call("b1", "big", `{}`)), turn(finish("f"))), big.Tool)
			if tt.guards != nil {
				tt.guards(e.guards)
			}
			if tt.custom {
				e.cfg.Handler = invoker.Chain(invoker.New(nil))
			}
			l, err := react.New(e.cfg)
			require.NoError(t, err)
			res, err := l.Run(context.Background(), react.Node{Tools: []string{"big"}}, "read it")
			require.NoError(t, err)
			msg := toolMessage(t, res.Transcript, "b1").Content
			if tt.ref {
				assert.Contains(t, msg, "full payload: b1")
			} else {
				assert.NotContains(t, msg, "full payload")
				assert.Contains(t, msg, "the rest was not kept")
			}
		})
	}
}

func TestDecider_Refused(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	for _, by := range []string{"\xffalice", strings.Repeat("a", react.MaxDecider+1)} {
		_, err := e.loop.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket).DecidedBy(by))
		assert.ErrorIs(t, err, react.ErrDecision, "decider %q", by)
	}
	assert.Zero(t, create.executions())
	d := react.Approve(res.Suspension.Ticket).DecidedBy("alice")
	assert.Equal(t, "alice", d.Decider())
	assert.Equal(t, res.Suspension.Ticket, d.Ticket())
	got, err := e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket).DecidedBy(strings.Repeat("a", react.MaxDecider)))
	require.NoError(t, err, "a decider id of MaxDecider bytes is accepted")
	assert.Equal(t, react.Finished, got.Status)
	assert.Equal(t, 1, create.executions())
}

// Tickets that do not name the suspension are refused before anything
// runs: no ticket, text that is not one, a ticket whose seal was altered,
// another run's ticket.
func TestTicket_Refused(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	e2 := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	other := e2.run(approvalNode, "create a site called blog")
	good := res.Suspension.Ticket
	flipped := good[:len(good)-2] + map[bool]string{true: "AA", false: "AB"}[strings.HasSuffix(good, "AB")]
	for _, tt := range []struct {
		name, ticket string
		says         string // what the error tells the host
	}{
		{"none", "", "has no ticket"},
		{"not a ticket", "approve-please", "is not one (14 bytes)"},
		{"altered seal", flipped, "does not match suspension"},
		{"another run's", other.Suspension.Ticket, "which run run-1 does not wait on"},
		{"unknown snap id", "rgt1.00000000-0000-0000-0000-000000000000." + strings.Split(good, ".")[2], "which run run-1 does not wait on"},
	} {
		for _, d := range []react.Decision{react.Approve(tt.ticket), react.Decline(tt.ticket, "no")} {
			_, err := e.loop.Resume(context.Background(), res.Snapshot, d)
			require.ErrorIs(t, err, react.ErrTicket, "%s ticket, %v", tt.name, d)
			assert.Contains(t, err.Error(), tt.says, "%s ticket", tt.name)
		}
	}
	assert.Zero(t, create.executions())
	got, err := e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(good))
	require.NoError(t, err, "the refusals did not claim the snapshot")
	assert.Equal(t, react.Finished, got.Status)
}

// A model that calls a write again and again after it was applied is
// answered SUCCESS (reused) once, then FINGERPRINT_TRIP: it fails for no
// progress, never spins to the round limit, and the write ran once.
func TestReusedWriteCountsAsRepeat(t *testing.T) {
	create := newFake("create_site", tool.Write, ok(map[string]any{"id": 42}))
	g := memoryStores()
	g.RequireApproval = func(invoker.Call) bool { return false }
	var turns []any
	for i := range 18 {
		turns = append(turns, turn(call(fmt.Sprintf("w%d", i), "create_site", `{"name":"blog"}`)))
	}
	e := newEnv(t, newScript(turns...), create.Tool)
	e.cfg.Guards = g
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{Tools: []string{"create_site"}, MaxRounds: 18}, "create a site")
	require.NoError(t, err)
	require.Equal(t, react.Failed, res.Status)
	assert.Equal(t, react.FailedNoProgress, res.Failure.Kind, "stopped by the stalls of the repeats, not the round limit")
	assert.Less(t, res.Rounds, 18)
	assert.Equal(t, 1, create.executions())
	assert.Equal(t, react.ExecReused, res.Calls[1].Execution)
	assert.Equal(t, errcode.FingerprintTrip, res.Calls[2].Code)
}

// The resume's log line names the decision and who made it.
func TestResumeLogLine(t *testing.T) {
	list, _, create := sitesTools()
	var buf bytes.Buffer
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	e.cfg.Observer, e.cfg.Logger, e.cfg.Model = nil, slog.New(slog.NewTextHandler(&buf, nil)), approvalAfter()
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	_, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket).DecidedBy("alice@acme"))
	require.NoError(t, err)
	assert.Contains(t, buf.String(), `msg="REACT resumed" decision=approve by=alice@acme run=run-1`)
}

// Pending lays the write's arguments out with where each value came from.
func TestPending_Arguments(t *testing.T) {
	list := newFake("list_spaces", tool.Read, ok(map[string]any{"spaces": []any{map[string]any{"id": "sp-42", "name": "Marketing"}}}))
	create := tool.New("create_site", "Create a site.", func(context.Context, struct {
		Name    string `json:"name"`
		SpaceID string `json:"space_id"`
		Theme   string `json:"theme"`
	}) (any, error) {
		return map[string]any{"id": 1}, nil
	})
	create.Effect = tool.Write
	create.Params = map[string]tool.Source{"space_id": tool.Result("list_spaces", "spaces.id"), "name": tool.User()}
	m := newScript(
		turn(call("l", "list_spaces", `{}`)),
		turn(call("w", "create_site", `{"name":"Spring Sale","space_id":"sp-42","theme":"dark","theme":"light"}`)),
		turn(call("a", react.ToolApproval, `{"tool":"create_site","reason":"asked"}`)),
	)
	e := newEnv(t, m, list.Tool, create)
	e.cfg.Runs = runstore.NewMemory()
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{Tools: []string{"list_spaces", "create_site"}}, "Create Spring Sale in Marketing")
	require.NoError(t, err, "%+v", res.Transcript)
	require.Equal(t, react.Suspended, res.Status)
	p, err := l.Pending(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, p.Arguments, 4)
	byName := map[string]react.Argument{}
	for _, a := range p.Arguments {
		byName[a.Name] = a
	}
	assert.Equal(t, tool.FromUser, byName["name"].Source.Kind)
	assert.Equal(t, 0, byName["name"].UserText, "the user's task holds Spring Sale")
	assert.Equal(t, tool.FromResult, byName["space_id"].Source.Kind)
	assert.Equal(t, []string{"l"}, byName["space_id"].Calls, "list_spaces' result l holds sp-42")
	assert.Equal(t, -1, byName["space_id"].UserText)
	assert.True(t, p.Arguments[2].Shadowed, "the first theme is replaced by the second: the tool never receives dark")
	assert.False(t, p.Arguments[3].Shadowed)
	assert.JSONEq(t, `"light"`, string(p.Arguments[3].Value))
	assert.Equal(t, "asked", p.Suspension.Reason)
	assert.Equal(t, res.Suspension.Ticket, p.Suspension.Ticket)
	assert.False(t, p.Sealed.IsZero())
	assert.Nil(t, p.Decided)
}

// Pending shows an argument taken from an earlier task step's verified
// output as that step's record (step:<name>): found in the outputs of the
// step the parameter's source names, not in another step's.
func TestPending_ArgumentsFromAStep(t *testing.T) {
	book := tool.New("book", "Book a hotel.", func(context.Context, struct {
		HotelID string `json:"hotel_id"`
	}) (any, error) {
		return map[string]any{"booking": "b-1"}, nil
	})
	book.Effect = tool.Write
	book.Params = map[string]tool.Source{"hotel_id": tool.Step("search", "hotel_id")}
	m := newScript(
		turn(call("w", "book", `{"hotel_id":"h-1"}`)),
		turn(call("a", react.ToolApproval, `{"tool":"book","reason":"asked"}`)),
	)
	e := newEnv(t, m, book)
	e.cfg.Runs = runstore.NewMemory()
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	in := react.Inputs{Steps: []react.Input{
		{Step: "shortlist", Outputs: map[string]json.RawMessage{"hotel_id": json.RawMessage(`"h-7"`)}},
		{Step: "search", Outputs: map[string]json.RawMessage{"hotel_id": json.RawMessage(`"h-1"`)}},
	}}
	res, err := l.Run(context.Background(), react.Node{Tools: []string{"book"}}, "book it", react.WithInputs(in))
	require.NoError(t, err, "%+v", res.Transcript)
	require.Equal(t, react.Suspended, res.Status, "%+v", res.Calls)
	p, err := l.Pending(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, p.Arguments, 1)
	assert.Equal(t, tool.FromStep, p.Arguments[0].Source.Kind)
	assert.Equal(t, []string{"step:search"}, p.Arguments[0].Calls, "the search step's verified output holds h-1")
	assert.Equal(t, -1, p.Arguments[0].UserText)
}
