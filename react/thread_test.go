package react_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/threadstore"
	"github.com/reactguard/reactguard/tool"
)

var (
	bg        = context.Background()
	alice     = react.Owner{Tenant: "acme", User: "alice"}
	asAlice   = react.WithOwner(alice)
	deskKey   = []byte("thread tests: a snapshot key of 32 bytes or more")
	orderIDRe = regexp.MustCompile(`[A-Z]-\d+`)
)

// desk is a support desk's stores and tools, shared by the loops of one
// test as the processes of a service share their stores.
type desk struct {
	t       testing.TB
	threads threadstore.Store
	guards  *guard.Options
	runs    *runstore.Memory
	refund  *fake
	status  *fake
	tools   *tool.Catalog
	history react.HistoryPolicy
	handler invoker.Handler // Config.Handler; nil: the default chain
	claims  runstore.Claims // Config.Claims; nil: the loop's own
	ids     atomic.Int64
}

var deskNode = react.Node{Name: "desk", Tools: []string{"refund", "order_status"}, HostApproval: true, TextAnswers: true, MaxRounds: 12}

func newDesk(t testing.TB) *desk {
	t.Helper()
	d := &desk{t: t, threads: threadstore.NewMemory(), guards: memoryStores(), runs: runstore.NewMemory()}
	in := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"order_id": {Type: "string"}}, Required: []string{"order_id"}}
	d.refund = newFake("refund", tool.Write, func(_ context.Context, req tool.Request) (any, error) {
		return map[string]any{"refunded": orderIDRe.FindString(string(req.Args))}, nil
	})
	d.refund.InputSchema, d.refund.Params = in, map[string]tool.Source{"order_id": tool.User()}
	d.status = newFake("order_status", tool.Read, func(_ context.Context, req tool.Request) (any, error) {
		return map[string]any{"order": orderIDRe.FindString(string(req.Args)), "status": "shipped"}, nil
	})
	d.status.InputSchema, d.status.Params = in, map[string]tool.Source{"order_id": tool.User()}
	cat, err := tool.NewCatalog(d.refund.Tool, d.status.Tool)
	require.NoError(t, err)
	d.tools = cat
	return d
}

// loop returns a loop over the desk's stores with model m.
func (d *desk) loop(m react.Model, obs ...react.Observer) *react.Loop {
	d.t.Helper()
	obs = append(obs, react.DiscardObserver) // the first given, else none
	l, err := react.New(react.Config{
		Model: m, Tools: d.tools, Guards: d.guards, Handler: d.handler, Claims: d.claims, Observer: obs[0], Threads: d.threads, History: d.history, Runs: d.runs,
		SnapshotKeys: [][]byte{deskKey},
		NewRunID:     func(context.Context) string { return fmt.Sprintf("run-%d", d.ids.Add(1)) },
	})
	require.NoError(d.t, err)
	return l
}

// current returns the user's message the run answers and the run's own
// messages after it: the last user message that is not a note of the loop.
func current(req react.Request) (string, []react.Message) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == react.RoleUser && !strings.HasPrefix(m.Content, "[") && !strings.Contains(m.Content, "no tool call") {
			return m.Content, req.Messages[i+1:]
		}
	}
	return "", nil
}

// answered returns the tool message of call id among msgs.
func answered(msgs []react.Message, id string) (react.Message, bool) {
	for _, m := range msgs {
		if m.Role == react.RoleTool && m.ToolCallID == id {
			return m, true
		}
	}
	return react.Message{}, false
}

// orderIn returns the first order id of the request's messages before the
// run's own.
func orderIn(req react.Request) string {
	for _, m := range req.Messages[1:] {
		if id := orderIDRe.FindString(m.Content); id != "" {
			return id
		}
	}
	return ""
}

// clerk is the desk's model: it notes an order id, refunds the order it
// finds in the conversation, and when asked where the order is, looks it
// up, looks up an order id it invents, and refunds the order again (a
// model that repeats an approved write).
func clerk(req react.Request) react.Response {
	cur, own := current(req)
	switch {
	case strings.Contains(cur, "order is"):
		return text("Noted.")
	case strings.HasPrefix(cur, "Refund"):
		if _, ok := answered(own, "c1"); !ok {
			return turn(call("c1", "refund", `{"order_id":"`+orderIn(req)+`"}`))
		}
		return text("Refunded.")
	case strings.HasPrefix(cur, "Where"):
		steps := []react.ToolCall{
			call("c1", "order_status", `{"order_id":"A-17"}`),
			call("c2", "order_status", `{"order_id":"B-99"}`),
			call("c3", "refund", `{"order_id":"A-17"}`),
		}
		for _, c := range steps {
			if _, ok := answered(own, c.ID); !ok {
				return turn(c)
			}
		}
		return text("It has shipped.")
	}
	return text("Hello.")
}

func (d *desk) message(l *react.Loop, thread, text string) react.Result {
	d.t.Helper()
	res, err := l.Run(bg, deskNode, text, react.InThread(thread), asAlice)
	require.NoError(d.t, err)
	return res
}

// Three messages to one thread, the second and third resumed by other
// loops (other processes on the same stores): the order id the user gave
// in the first message is a user-given source in the third; an id the
// model invents is refused; the refund approved in the second runs once,
// and the same refund asked again in the third waits for a new approval
// (declined here) instead of running.
func TestThreadConversation(t *testing.T) {
	d := newDesk(t)
	m := reacttest.Func(clerk)
	a := d.loop(m)

	r1 := d.message(a, "t1", "My order is A-17.")
	require.Equal(t, react.Finished, r1.Status)
	assert.Equal(t, "Noted.", r1.Summary, "a text answer ends the turn (Node.TextAnswers)")
	assert.Equal(t, "t1", r1.Thread)
	assert.Equal(t, 1, r1.Turn)

	r2 := d.message(a, "t1", "Refund my order, please.")
	require.Equal(t, react.Suspended, r2.Status, "the refund waits for approval")
	assert.Equal(t, 2, r2.Turn)
	assert.Equal(t, `{"order_id":"A-17"}`, string(r2.Suspension.Approval.Args))
	_, err := a.Run(bg, deskNode, "Hello?", react.InThread("t1"), asAlice)
	var busy *react.ThreadBusyError
	require.ErrorAs(t, err, &busy, "a message while the thread waits for a decision")
	assert.True(t, busy.Waiting)
	assert.Equal(t, r2.Run, busy.Run)
	assert.Contains(t, err.Error(), "waits for a decision")

	b := d.loop(m) // another process approves
	p, err := b.Pending(bg, r2.Run, asAlice)
	require.NoError(t, err)
	assert.Equal(t, "t1", p.Thread)
	require.Len(t, p.Arguments, 1)
	assert.Equal(t, -1, p.Arguments[0].UserText, "A-17 is not in message 2's words")
	assert.True(t, p.Arguments[0].Earlier, "A-17 is in message 1's words: the inbox says so")
	r2, err = b.ResumeRun(bg, r2.Run, react.Approve(p.Suspension.Ticket).DecidedBy("alice"), asAlice)
	require.NoError(t, err)
	require.Equal(t, react.Finished, r2.Status)
	assert.Equal(t, "Refunded.", r2.Summary)
	assert.Equal(t, 1, d.refund.executions())

	c := d.loop(m) // a third process answers the third message
	r3, err := c.Run(bg, deskNode, "Where is my order?", react.InThread("t1"), asAlice)
	require.NoError(t, err)
	require.Equal(t, react.Suspended, r3.Status, "the same refund again waits for a new approval")
	verdicts := map[string]string{}
	for _, cr := range r3.Calls {
		verdicts[cr.CallID] = cr.Outcome.String() + " " + codeText(cr.Code)
	}
	assert.Equal(t, map[string]string{
		"c1": "SUCCESS -",                                 // the user's words of message 1
		"c2": "REJECTED PARAM_PROVENANCE_FOLLOW_UP_FIRST", // B-99: invented
	}, verdicts)
	assert.Equal(t, "c3", r3.Suspension.CallID)
	r3, err = c.ResumeRun(bg, r3.Run, react.Decline(r3.Suspension.Ticket, "already refunded"), asAlice)
	require.NoError(t, err)
	require.Equal(t, react.Finished, r3.Status)
	assert.Equal(t, 1, d.refund.executions(), "the refund ran once, in message 2")
	assert.Equal(t, 1, d.status.executions(), "the invented id never reached the tool")

	turns, err := a.Turns(bg, "t1", 1, 10, asAlice)
	require.NoError(t, err)
	require.Len(t, turns, 3)
	for i, want := range []struct{ user, answer string }{
		{"My order is A-17.", "Noted."}, {"Refund my order, please.", "Refunded."}, {"Where is my order?", "It has shipped."},
	} {
		assert.Equal(t, i+1, turns[i].Index)
		assert.Equal(t, want.user, turns[i].User)
		assert.Equal(t, want.answer, turns[i].Answer)
		assert.Equal(t, react.Finished, turns[i].Status)
		assert.Positive(t, turns[i].Tokens)
	}
	assert.Equal(t, "turn2_c1", turns[1].Messages[1].ToolCalls[0].ID, "earlier calls are marked with their turn")
	rec, found, err := d.threads.Evidence().Lookup(bg, "t1", "turn2_c1")
	require.NoError(t, err)
	require.True(t, found, "the refund's record is in the thread's evidence under its marked id")
	assert.Equal(t, outcome.Success, rec.Outcome)
}

func codeText(c errcode.Code) string {
	if c == 0 {
		return "-"
	}
	return c.String()
}

// What the history policy cuts from the prompt is not cut from what the
// guards check: after 24 more messages, with two earlier turns in the
// prompt and a summary that holds no order id, the order id the user gave
// in the first message is still a user-given source, and an id the model
// invents is still refused. Each turn is summarized once.
func TestThreadGuardsOutliveTheHistory(t *testing.T) {
	d := newDesk(t)
	var mu sync.Mutex
	summarized := map[int]int{}
	d.history = react.HistoryPolicy{MaxTurns: 2, Summarize: func(_ context.Context, prev string, turns []react.Turn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, tr := range turns {
			summarized[tr.Index]++
		}
		return fmt.Sprintf("The user talked about an order (%d turns).", turns[len(turns)-1].Index), nil
	}}
	m := reacttest.Func(clerk)
	l := d.loop(m)
	d.message(l, "t1", "My order is A-17.")
	for i := range 24 {
		d.message(l, "t1", fmt.Sprintf("Hello %d.", i))
	}
	res, err := l.Run(bg, deskNode, "Where is my order?", react.InThread("t1"), asAlice)
	require.NoError(t, err)
	assert.Equal(t, 26, res.Turn)
	require.Equal(t, outcome.Success, res.Calls[0].Outcome, "A-17, said 25 messages ago and cut from the prompt, passes the parameter contract")
	assert.Equal(t, errcode.ParamProvenanceFollowUpFirst, res.Calls[1].Code, "an invented id is refused")

	reqs := m.Requests()
	first := reqs[len(reqs)-1-len(res.Calls)] // the first request of the last message
	var all strings.Builder
	users := 0
	for _, msg := range first.Messages {
		all.WriteString(msg.Content)
		if msg.Role == react.RoleUser {
			users++
		}
	}
	assert.NotContains(t, all.String(), "A-17", "the order id is not in the prompt")
	assert.Contains(t, first.Messages[1].Content, "The user talked about an order (23 turns).")
	assert.Equal(t, 4, users, "the summary, two earlier turns and the message")
	for i := 1; i <= 23; i++ {
		assert.Equal(t, 1, summarized[i], "turn %d summarized once", i)
	}
	assert.Len(t, summarized, 23)
}

// A message while another run of the thread is answering one is refused,
// and so are all but one of many messages sent at once.
func TestThreadOneMessageAtATime(t *testing.T) {
	d := newDesk(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := react.ModelFunc(func(ctx context.Context, req react.Request) (react.Response, error) {
		once.Do(func() { close(entered) })
		<-release
		return clerk(req), nil
	})
	l := d.loop(slow)
	done := make(chan react.Result)
	go func() {
		res, err := l.Run(bg, deskNode, "My order is A-17.", react.InThread("t1"), asAlice)
		assert.NoError(t, err)
		done <- res
	}()
	<-entered
	_, err := d.loop(reacttest.Func(clerk)).Run(bg, deskNode, "Hello?", react.InThread("t1"), asAlice)
	var busy *react.ThreadBusyError
	require.ErrorAs(t, err, &busy)
	assert.False(t, busy.Waiting, "the first run is answering, not waiting")
	assert.Contains(t, err.Error(), "is answering a message")
	close(release)
	require.Equal(t, react.Finished, (<-done).Status)

	// Many messages at once: one runs, the others are refused, none lost
	// without an error.
	fast := d.loop(reacttest.Func(clerk))
	var ran, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			res, err := fast.Run(bg, deskNode, fmt.Sprintf("Hello %d.", i), react.InThread("t2"), asAlice)
			switch {
			case err == nil && res.Status == react.Finished:
				ran.Add(1)
			case errors.Is(err, react.ErrThreadBusy):
				refused.Add(1)
			default:
				t.Errorf("message %d: %v, %v", i, res.Status, err)
			}
		})
	}
	wg.Wait()
	turns, err := fast.Turns(bg, "t2", 1, 100, asAlice)
	require.NoError(t, err)
	assert.Equal(t, int(ran.Load()), len(turns), "every message that ran has its turn")
	assert.Equal(t, int32(16), ran.Load()+refused.Load())
	for i, tr := range turns {
		assert.Equal(t, i+1, tr.Index)
	}
}

// A thread belongs to the owner of its first message.
func TestThreadOwner(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	for _, o := range []react.Owner{{Tenant: "acme", User: "bob"}, {Tenant: "beta", User: "alice"}, {}} {
		_, err := l.Run(bg, deskNode, "Refund A-17.", react.InThread("t1"), react.WithOwner(o))
		require.ErrorIs(t, err, react.ErrNotOwner, "%v sends a message to alice's thread", o)
		_, err = l.Turns(bg, "t1", 1, 10, react.WithOwner(o))
		if o != (react.Owner{Tenant: "acme"}) {
			require.ErrorIs(t, err, react.ErrNotOwner, "%v reads alice's thread", o)
		}
	}
	turns, err := l.Turns(bg, "t1", 1, 10, react.WithOwner(react.Owner{Tenant: "acme"}))
	require.NoError(t, err, "the tenant's administrator reads the thread")
	assert.Len(t, turns, 1)
	assert.Equal(t, 0, d.refund.executions())
}

// Bad thread ids and a loop without a thread store are refused before
// anything runs.
func TestThreadRefusals(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	for _, id := range []string{"", strings.Repeat("x", threadstore.MaxID+1), "bad\xff"} {
		_, err := l.Run(bg, deskNode, "hi", react.InThread(id), asAlice)
		require.ErrorIs(t, err, threadstore.ErrInvalid, "thread id %q", id)
	}
	plain, err := react.New(react.Config{Model: reacttest.Func(clerk), Tools: d.tools})
	require.NoError(t, err)
	_, err = plain.Run(bg, deskNode, "hi", react.InThread("t1"))
	require.ErrorIs(t, err, react.ErrNoThreadStore)
	_, err = plain.Turns(bg, "t1", 1, 2)
	require.ErrorIs(t, err, react.ErrNoThreadStore)
	_, err = l.Turns(bg, "nope", 1, 2, asAlice)
	require.ErrorIs(t, err, react.ErrThreadNotFound)
}

// A run suspended in a thread whose decision will not come is let go with
// ReleaseThread: the next message runs, and the old run's resume is
// refused with ErrThreadMoved, changing nothing.
func TestThreadRelease(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	r2 := d.message(l, "t1", "Refund my order.")
	require.Equal(t, react.Suspended, r2.Status)
	require.ErrorIs(t, l.ReleaseThread(bg, "t1", react.WithOwner(react.Owner{Tenant: "beta"})), react.ErrNotOwner)
	require.NoError(t, l.ReleaseThread(bg, "t1", asAlice))
	r3 := d.message(l, "t1", "Hello.")
	assert.Equal(t, 2, r3.Turn, "the released run's message has no turn")
	_, err := l.Resume(bg, r2.Snapshot, react.Approve(r2.Suspension.Ticket), asAlice)
	require.ErrorIs(t, err, react.ErrThreadMoved)
	assert.NotContains(t, err.Error(), "thread store", "the thread taken back was released without an error")
	assert.Equal(t, 0, d.refund.executions(), "the old approval ran nothing")
	require.NoError(t, l.ReleaseThread(bg, "t1", asAlice), "a free thread: nothing to do")
}

// A resume refused because its thread went on without it gives its claim
// back: the refusal is returned as it is, and only a release that fails
// too adds its own error.
func TestThreadMovedResumeReleasesItsClaim(t *testing.T) {
	for _, tt := range []struct {
		name   string
		claims runstore.Claims
		failed bool
	}{
		{"the release succeeds: nothing added", runstore.NewMemoryClaims(), false},
		{"the release fails: its error joined", releaseFails{runstore.NewMemoryClaims()}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newDesk(t)
			d.claims = tt.claims
			l := d.loop(reacttest.Func(clerk))
			d.message(l, "t1", "My order is A-17.")
			r2 := d.message(l, "t1", "Refund my order.")
			require.Equal(t, react.Suspended, r2.Status)
			require.NoError(t, l.ReleaseThread(bg, "t1", asAlice))
			d.message(l, "t1", "Hello.")
			_, err := l.Resume(bg, r2.Snapshot, react.Approve(r2.Suspension.Ticket), asAlice)
			require.ErrorIs(t, err, react.ErrThreadMoved)
			if tt.failed {
				assert.ErrorIs(t, err, errRelease)
				assert.Contains(t, err.Error(), "release resume claim")
			} else {
				assert.NotContains(t, err.Error(), "release resume claim", "the release succeeded: nothing to add")
				_, err = l.Resume(bg, r2.Snapshot, react.Approve(r2.Suspension.Ticket), asAlice)
				require.ErrorIs(t, err, react.ErrThreadMoved, "the claim was given back: the same refusal again")
			}
			assert.Zero(t, d.refund.executions())
		})
	}
}

// A stopped run that the run store no longer holds (it expired) does not
// block its thread: the next message frees it.
func TestThreadExpiredRunFreesTheThread(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	r2 := d.message(l, "t1", "Refund my order.")
	require.Equal(t, react.Suspended, r2.Status)
	require.NoError(t, d.runs.Delete(bg, r2.Run))
	r3 := d.message(l, "t1", "Hello.")
	assert.Equal(t, react.Finished, r3.Status)
	assert.Equal(t, 2, r3.Turn)
}

// A message streamed with RunStream goes through the thread as Run does.
func TestThreadStream(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	var kinds []react.EventKind
	var end *react.RunEndEvent
	for e, err := range l.RunStream(bg, deskNode, "Where is my order?", react.InThread("t1"), asAlice) {
		kinds = append(kinds, e.Kind)
		if e.Kind == react.EventRunEnd {
			require.NoError(t, err)
			end = e.RunEnd
		}
	}
	require.NotNil(t, end)
	require.Equal(t, react.Suspended, end.Result.Status, "the refund asked again waits for approval")
	assert.Equal(t, outcome.Success, end.Result.Calls[0].Outcome, "A-17 from message 1")
	assert.Equal(t, 2, end.Result.Turn)
	assert.Contains(t, kinds, react.EventSuspended)
	var ended *react.RunEndEvent
	for e, err := range l.ResumeRunStream(bg, end.Result.Run, react.Decline(end.Result.Suspension.Ticket, "no"), asAlice) {
		require.NoError(t, err)
		if e.Kind == react.EventRunEnd {
			ended = e.RunEnd
		}
	}
	require.NotNil(t, ended)
	require.NoError(t, ended.Err)
	assert.Equal(t, react.Finished, ended.Result.Status)
	turns, err := l.Turns(bg, "t1", 1, 10, asAlice)
	require.NoError(t, err)
	assert.Len(t, turns, 2)
	_, err = l.Run(bg, deskNode, "x", react.InThread("t1"), asAlice) // free again
	require.NoError(t, err)
}

// A model that panics while answering a message does not leave the
// thread held: the next message runs.
func TestThreadPanicFreesTheThread(t *testing.T) {
	d := newDesk(t)
	boom := react.ModelFunc(func(context.Context, react.Request) (react.Response, error) { panic("model bug") })
	require.PanicsWithValue(t, "model bug", func() {
		_, _ = d.loop(boom).Run(bg, deskNode, "hi", react.InThread("t1"), asAlice)
	})
	res := d.message(d.loop(reacttest.Func(clerk)), "t1", "My order is A-17.")
	assert.Equal(t, 1, res.Turn)
}

// tamper is a thread store whose reads a test changes, as someone with
// access to the database could.
type tamper struct {
	threadstore.Store
	turns func([]threadstore.Turn) []threadstore.Turn
	get   func(threadstore.Thread) threadstore.Thread
}

func (s *tamper) Turns(ctx context.Context, id string, from, to int) ([]threadstore.Turn, error) {
	ts, err := s.Store.Turns(ctx, id, from, to)
	if s.turns != nil {
		ts = s.turns(ts)
	}
	return ts, err
}

func (s *tamper) Acquire(ctx context.Context, id string, o runstore.Owner, run string) (threadstore.Thread, string, error) {
	th, tok, err := s.Store.Acquire(ctx, id, o, run)
	if s.get != nil {
		th = s.get(th)
	}
	return th, tok, err
}

func (s *tamper) Get(ctx context.Context, id string) (threadstore.Thread, bool, error) {
	th, ok, err := s.Store.Get(ctx, id)
	if s.get != nil {
		th = s.get(th)
	}
	return th, ok, err
}

// A thread's history read back from the store is what the loop sealed: an
// edited turn, a turn of another thread or position, a thread moved to
// another owner, and a loop with other keys are refused with
// ErrThreadCorrupt, and nothing runs.
func TestThreadHistoryIsSealed(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	d.message(l, "t2", "My order is B-3.")
	other, err := d.threads.Turns(bg, "t2", 1, 2)
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		s    *tamper
	}{
		{"edited", &tamper{turns: func(ts []threadstore.Turn) []threadstore.Turn {
			for i := range ts {
				ts[i].Content = []byte(strings.Replace(string(ts[i].Content), "A-17", "A-18", 1))
			}
			return ts
		}}},
		{"another thread's turn", &tamper{turns: func(ts []threadstore.Turn) []threadstore.Turn {
			if len(ts) > 0 {
				ts[0].Content = other[0].Content
			}
			return ts
		}}},
		{"another position", &tamper{turns: func(ts []threadstore.Turn) []threadstore.Turn {
			for i := range ts {
				ts[i].Index++
			}
			return ts
		}}},
		{"moved to bob", &tamper{get: func(th threadstore.Thread) threadstore.Thread {
			if th.ID != "" {
				th.Owner = runstore.Owner{Tenant: "acme", User: "bob"}
			}
			return th
		}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.s.Store = d.threads
			l, err := react.New(react.Config{Model: reacttest.Func(clerk), Tools: d.tools, Guards: d.guards, Threads: c.s, Runs: d.runs,
				Observer: react.DiscardObserver, SnapshotKeys: [][]byte{deskKey}})
			require.NoError(t, err)
			owner := asAlice
			if c.name == "moved to bob" {
				owner = react.WithOwner(react.Owner{Tenant: "acme", User: "bob"})
			}
			_, err = l.Turns(bg, "t1", 1, 10, owner)
			require.ErrorIs(t, err, react.ErrThreadCorrupt)
		})
	}
	// A loop that opened thread t2's turn (and keeps it opened) still
	// refuses it when the store returns it as t1's.
	swap := &tamper{Store: d.threads}
	cached, err := react.New(react.Config{Model: reacttest.Func(clerk), Tools: d.tools, Guards: d.guards, Threads: swap,
		Observer: react.DiscardObserver, SnapshotKeys: [][]byte{deskKey}})
	require.NoError(t, err)
	_, err = cached.Turns(bg, "t2", 1, 10, asAlice)
	require.NoError(t, err)
	swap.turns = func(ts []threadstore.Turn) []threadstore.Turn {
		for i := range ts {
			ts[i].Content = other[0].Content
		}
		return ts
	}
	_, err = cached.Turns(bg, "t1", 1, 10, asAlice)
	require.ErrorIs(t, err, react.ErrThreadCorrupt, "a turn opened before is checked at every use")

	rotated, err := react.New(react.Config{Model: reacttest.Func(clerk), Tools: d.tools, Guards: d.guards, Threads: d.threads,
		Observer: react.DiscardObserver, SnapshotKeys: [][]byte{[]byte("another key of at least thirty-two bytes!")}})
	require.NoError(t, err)
	_, err = rotated.Run(bg, deskNode, "Where is my order?", react.InThread("t1"), asAlice)
	require.ErrorIs(t, err, react.ErrThreadCorrupt)
	assert.Contains(t, err.Error(), "Config.SnapshotKeys")
	assert.Equal(t, 0, d.status.executions(), "nothing ran")
	d.message(l, "t1", "Hello.") // the refusal left the thread free
}

// An earlier turn's result is a source of an output: sourceRef names it by
// its marked id; an id of no earlier call is refused.
func TestThreadEarlierResultIsASource(t *testing.T) {
	for _, tt := range []struct {
		name   string
		custom bool
	}{
		{"the default chain", false},
		// A custom Handler's guards see the run's own evidence only, but
		// builtin_output_set runs in the loop and reads the thread's too.
		{"a custom handler", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newDesk(t)
			if tt.custom {
				d.handler = invoker.Chain(invoker.New(nil), guard.Default(d.guards)...)
			}
			node := deskNode
			node.Outputs = []react.Output{{Key: "order", Required: true, Tool: "order_status", Field: "order"}}
			m := reacttest.Func(func(req react.Request) react.Response {
				cur, own := current(req)
				if strings.HasPrefix(cur, "Look") {
					if _, ok := answered(own, "c1"); !ok {
						return turn(call("c1", "order_status", `{"order_id":"A-17"}`))
					}
					return text("Shipped.")
				}
				for _, c := range []react.ToolCall{
					reacttest.OutputSet("c2", "order", "A-17", react.SourceToolResult, "turn9_c1"),
					reacttest.OutputSet("c3", "order", "A-17", react.SourceToolResult, "turn1_c1"),
				} {
					if _, ok := answered(own, c.ID); !ok {
						return turn(c)
					}
				}
				return text("Done.")
			})
			l := d.loop(m)
			res, err := l.Run(bg, deskNode, "Look up my order A-17.", react.InThread("t1"), asAlice)
			require.NoError(t, err)
			require.Equal(t, react.Finished, res.Status)
			res, err = l.Run(bg, node, "Note the order.", react.InThread("t1"), asAlice)
			require.NoError(t, err)
			require.Equal(t, react.Finished, res.Status)
			assert.Equal(t, errcode.OutputSourceRefUnknown, res.Calls[0].Code, "turn9_c1 names no call")
			assert.Equal(t, outcome.Success, res.Calls[1].Outcome, "turn1_c1 is the status call of message 1")
			assert.Equal(t, react.OutputValue{Value: []byte(`"A-17"`), Source: react.SourceToolResult, Ref: "turn1_c1"}, res.Outputs["order"])
			assert.Equal(t, react.GoalMet, res.Goal)
		})
	}
}

func (d *desk) threadsGet(id string) (threadstore.Thread, bool, error) { return d.threads.Get(bg, id) }

// flaky is a thread store whose Commit fails as told: before it applies
// (the database refused), or after (the reply was lost).
type flaky struct {
	threadstore.Store
	mu     sync.Mutex
	before int // Commits to refuse
	after  int // Commits to apply and then report failed
}

func (s *flaky) Commit(ctx context.Context, id, token string, t threadstore.Turn, sum *threadstore.Summary) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.before > 0 {
		s.before--
		return errors.New("database unavailable")
	}
	err := s.Store.Commit(ctx, id, token, t, sum)
	if s.after > 0 && err == nil {
		s.after--
		return errors.New("connection reset after the commit")
	}
	return err
}

// A turn whose commit failed is committed before the next message to the
// thread, and at the loop's next call; a commit whose reply was lost is
// not committed twice. The run's result is intact either way.
func TestThreadCommitFailures(t *testing.T) {
	for _, c := range []struct {
		name          string
		before, after int
	}{{"refused", 1, 0}, {"reply lost", 0, 1}} {
		t.Run(c.name, func(t *testing.T) {
			d := newDesk(t)
			f := &flaky{Store: d.threads, before: c.before, after: c.after}
			d.threads = f
			l := d.loop(reacttest.Func(clerk))
			res, err := l.Run(bg, deskNode, "My order is A-17.", react.InThread("t1"), asAlice)
			require.ErrorContains(t, err, "commit turn 1 of thread t1")
			require.Equal(t, react.Finished, res.Status, "the run's result is intact")
			assert.Equal(t, "Noted.", res.Summary)
			res = d.message(l, "t1", "Where is my order?")
			assert.Equal(t, 2, res.Turn, "the failed commit went through first")
			turns, err := l.Turns(bg, "t1", 1, 10, asAlice)
			require.NoError(t, err)
			require.Len(t, turns, 1, "the second message waits for approval; one turn committed, once")
			assert.Equal(t, "My order is A-17.", turns[0].User)
		})
	}
	// The retry at the loop's next call, whatever thread it concerns.
	d := newDesk(t)
	f := &flaky{Store: d.threads, before: 1}
	d.threads = f
	l := d.loop(reacttest.Func(clerk))
	_, err := l.Run(bg, deskNode, "My order is A-17.", react.InThread("t1"), asAlice)
	require.Error(t, err)
	d.message(l, "t2", "Hello.")
	th, _, err := f.Get(bg, "t1")
	require.NoError(t, err)
	assert.Equal(t, 1, th.Turns)
	assert.Empty(t, th.Run, "the thread is free")
}

// A message streamed to a busy thread is one RunEnd pair with the busy
// error.
func TestThreadStreamBusy(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	r2 := d.message(l, "t1", "Refund it.")
	require.Equal(t, react.Suspended, r2.Status)
	var pairs int
	for e, err := range l.RunStream(bg, deskNode, "Hello?", react.InThread("t1"), asAlice) {
		pairs++
		assert.Equal(t, react.EventRunEnd, e.Kind)
		var busy *react.ThreadBusyError
		require.ErrorAs(t, err, &busy)
		assert.Equal(t, r2.Run, busy.Run)
	}
	assert.Equal(t, 1, pairs)
}

// A resume whose decision cannot apply (the approvals store does not hold
// the gated call) leaves the run waiting in its thread, its snapshot
// unspent: the thread still refuses new messages, and the same decision,
// given where the store holds the call, applies.
func TestThreadResumeThatDoesNotApply(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	r2 := d.message(l, "t1", "Refund it.")
	require.Equal(t, react.Suspended, r2.Status)
	other := &desk{t: t, threads: d.threads, guards: memoryStores(), runs: d.runs, tools: d.tools} // a replica wired to other approvals
	_, err := other.loop(reacttest.Func(clerk)).Resume(bg, r2.Snapshot, react.Approve(r2.Suspension.Ticket), asAlice)
	require.ErrorIs(t, err, guard.ErrNotPending)
	_, err = l.Run(bg, deskNode, "Hello?", react.InThread("t1"), asAlice)
	var busy *react.ThreadBusyError
	require.ErrorAs(t, err, &busy)
	assert.True(t, busy.Waiting, "the run still waits in its thread")
	res, err := l.Resume(bg, r2.Snapshot, react.Approve(r2.Suspension.Ticket), asAlice)
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 1, d.refund.executions())
}

// A run's start says which thread and turn it answers, to observers and in
// the log.
func TestThreadRunStartEvent(t *testing.T) {
	d := newDesk(t)
	var buf strings.Builder
	var mu sync.Mutex
	var starts []react.RunStartEvent
	obs := react.Observers(react.NewLogObserver(slog.New(slog.NewTextHandler(&buf, nil))), observerFunc(func(ctx context.Context, e react.Event) context.Context {
		if e.Kind == react.EventRunStart {
			mu.Lock()
			starts = append(starts, *e.RunStart)
			mu.Unlock()
		}
		return ctx
	}))
	l := d.loop(reacttest.Func(clerk), obs)
	d.message(l, "t1", "My order is A-17.")
	r2 := d.message(l, "t1", "Refund it.")
	_, err := l.ResumeRun(bg, r2.Run, react.Approve(r2.Suspension.Ticket), asAlice)
	require.NoError(t, err)
	require.Len(t, starts, 3)
	for i, want := range []int{1, 2, 2} {
		assert.Equal(t, "t1", starts[i].Thread)
		assert.Equal(t, want, starts[i].Turn)
	}
	assert.Contains(t, buf.String(), "msg=\"REACT node_started\" run=run-2 node=desk thread=t1 turn=2")
	resumed := false
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, `msg="REACT resumed"`) {
			resumed = true
			assert.Contains(t, line, "thread=t1 turn=2")
		}
	}
	assert.True(t, resumed)
}

type observerFunc func(ctx context.Context, e react.Event) context.Context

func (f observerFunc) Observe(ctx context.Context, e react.Event) context.Context { return f(ctx, e) }

// A replica whose claim store decides in its claim (react.ClaimDecider, as
// the PostgreSQL store does) and whose approvals lack the gated call: the
// decision is refused in the claim's operation, nothing is claimed, and
// the run keeps waiting in its thread (a new message is refused as
// waiting); the same approval then applies where the store holds the call,
// and the refund runs once.
func TestThreadResumeRefusedByClaimDecider(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	r2 := d.message(l, "t1", "Refund it.")
	require.Equal(t, react.Suspended, r2.Status)

	other, cd := d.claimDecidingReplica(t)
	got, err := other.Resume(bg, r2.Snapshot, react.Approve(r2.Suspension.Ticket), asAlice)
	require.ErrorIs(t, err, guard.ErrNotPending)
	assert.Equal(t, react.Suspended, got.Status)
	assert.Equal(t, r2.Snapshot, got.Snapshot, "the same snapshot, to decide again")
	assert.Equal(t, "", cd.calls(), "nothing claimed, nothing released")
	th, _, err := d.threads.Get(bg, "t1")
	require.NoError(t, err)
	assert.Equal(t, r2.Run, th.Run, "the thread is still the waiting run's")
	assert.False(t, th.Held, "parked, not held by the refused resume")

	_, err = l.Run(bg, deskNode, "Hello?", react.InThread("t1"), asAlice)
	var busy *react.ThreadBusyError
	require.ErrorAs(t, err, &busy)
	assert.True(t, busy.Waiting, "the run still waits in its thread")

	res, err := l.Resume(bg, r2.Snapshot, react.Approve(r2.Suspension.Ticket), asAlice)
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 2, res.Turn)
	assert.Equal(t, 1, d.refund.executions())
	th, _, err = d.threads.Get(bg, "t1")
	require.NoError(t, err)
	assert.Equal(t, 2, th.Turns)
	assert.Empty(t, th.Run, "the thread is free")
}

// claimDecidingReplica returns a loop on the desk's threads and runs whose
// claim store decides in its claim over approvals of its own, which hold
// no gated call of the desk's runs.
func (d *desk) claimDecidingReplica(t *testing.T) (*react.Loop, *claimDecider) {
	t.Helper()
	mc := newMortalClaims()
	ap := &countingDecisions{MemoryApprovals: guard.NewMemoryApprovals()}
	cd := &claimDecider{mortalClaims: mc, mu2: &mc.mu, approvals: ap, audit: runstore.NewMemoryAudit()}
	g := *d.guards
	g.Approvals = ap
	l, err := react.New(react.Config{
		Model: reacttest.Func(clerk), Tools: d.tools, Guards: &g, Observer: react.DiscardObserver, Threads: d.threads, Runs: d.runs,
		Claims: cd, Audit: cd.audit, SnapshotKeys: [][]byte{deskKey},
	})
	require.NoError(t, err)
	return l, cd
}

// A decision refused in the claim's operation, on a run whose thread went
// on without it (released, then another message answered): the refusal is
// the answer, the thread is left as it is, and no claim that was never
// taken is released.
func TestThreadMovedResumeRefusedByClaimDecider(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	r2 := d.message(l, "t1", "Refund it.")
	require.Equal(t, react.Suspended, r2.Status)
	require.NoError(t, l.ReleaseThread(bg, "t1", asAlice))
	r3 := d.message(l, "t1", "Hello.")
	require.Equal(t, react.Finished, r3.Status)
	other, cd := d.claimDecidingReplica(t)
	_, err := other.Resume(bg, r2.Snapshot, react.Approve(r2.Suspension.Ticket), asAlice)
	require.ErrorIs(t, err, guard.ErrNotPending)
	assert.Equal(t, "", cd.calls(), "nothing claimed, nothing released")
	th, _, err := d.threads.Get(bg, "t1")
	require.NoError(t, err)
	assert.Equal(t, 2, th.Turns, "the thread keeps the turn of message 3 in place of message 2's")
	assert.Empty(t, th.Run)
	assert.Zero(t, d.refund.executions())
}

// Argument.Earlier marks only a value this run's own words do not hold: an
// order id the user repeats in the message that asks for the refund is
// this run's user text 0, not an earlier turn's, though message 1 said it
// too.
func TestThreadPending_EarlierOnlyWhenThisRunLacksIt(t *testing.T) {
	d := newDesk(t)
	a := d.loop(reacttest.Func(clerk))
	require.Equal(t, react.Finished, d.message(a, "t1", "My order is A-17.").Status)
	r2 := d.message(a, "t1", "Refund order A-17, please.")
	require.Equal(t, react.Suspended, r2.Status, "the refund waits for approval")
	p, err := a.Pending(bg, r2.Run, asAlice)
	require.NoError(t, err)
	require.Len(t, p.Arguments, 1)
	assert.Equal(t, 0, p.Arguments[0].UserText, "message 2's words hold A-17")
	assert.False(t, p.Arguments[0].Earlier, "this run's own words hold it: not an earlier turn's value")
}

// Argument.Earlier marks a value of a tool result of an earlier message as
// well as the user's words: a refund whose order id comes from an
// order_status result of message 1 shows, in message 2's approval, no call
// of its own run and Earlier set.
func TestThreadPending_EarlierResult(t *testing.T) {
	d := newDesk(t)
	d.refund.Params = map[string]tool.Source{"order_id": tool.Result("order_status", "order")}
	m := reacttest.Func(func(req react.Request) react.Response {
		cur, own := current(req)
		switch {
		case strings.HasPrefix(cur, "Look up"):
			if _, ok := answered(own, "s1"); !ok {
				return turn(call("s1", "order_status", `{"order_id":"A-17"}`))
			}
			return text("It has shipped.")
		case strings.HasPrefix(cur, "Refund"):
			if _, ok := answered(own, "r1"); !ok {
				return turn(call("r1", "refund", `{"order_id":"A-17"}`))
			}
			return text("Refunded.")
		}
		return text("Hello.")
	})
	a := d.loop(m)
	require.Equal(t, react.Finished, d.message(a, "t1", "Look up my order A-17.").Status)
	r2 := d.message(a, "t1", "Refund it, please.")
	require.Equal(t, react.Suspended, r2.Status, "the refund waits for approval: %+v", r2.Calls)
	p, err := a.Pending(bg, r2.Run, asAlice)
	require.NoError(t, err)
	require.Len(t, p.Arguments, 1)
	assert.Equal(t, tool.FromResult, p.Arguments[0].Source.Kind)
	assert.Empty(t, p.Arguments[0].Calls, "no order_status call of message 2")
	assert.True(t, p.Arguments[0].Earlier, "message 1's order_status result holds A-17")
}
