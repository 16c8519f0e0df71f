package react_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/threadstore"
)

// This file holds tests of a thread's state written to kill mutants that
// lived through the package's other tests (docs/mutation.md).

// A message whose run failed is a turn of the thread like a finished
// one: the next message's prompt holds it, and Loop.Turns shows it with
// its status. A turn of any other status is not one a run commits, and
// is refused as corrupt (history.go's openTurn).
func TestThreadFailedTurnIsHistory(t *testing.T) {
	d := newDesk(t)
	var prompts [][]react.Message
	m := reacttest.Func(func(req react.Request) react.Response {
		prompts = append(prompts, req.Messages)
		cur, own := current(req)
		if strings.HasPrefix(cur, "Check") {
			return turn(call("s"+string(rune('0'+len(own))), "order_status", `{"order_id":"A-17"}`))
		}
		return text("Hello.")
	})
	l := d.loop(m)
	node := deskNode
	node.MaxRounds = 1
	r1, err := l.Run(bg, node, "Check order A-17 for ever.", react.InThread("t"), asAlice)
	require.NoError(t, err)
	require.Equal(t, react.Failed, r1.Status, "the round limit ends the first message's run")

	r2, err := l.Run(bg, node, "Hi again.", react.InThread("t"), asAlice)
	require.NoError(t, err, "the failed turn opens as history")
	require.Equal(t, react.Finished, r2.Status)
	assert.Equal(t, 2, r2.Turn)
	var seen bool
	for _, msg := range prompts[len(prompts)-1] {
		seen = seen || msg.Content == "Check order A-17 for ever."
	}
	assert.True(t, seen, "the second message's prompt holds the failed turn's user message")

	turns, err := l.Turns(bg, "t", 1, 3, asAlice)
	require.NoError(t, err)
	require.Len(t, turns, 2)
	assert.Equal(t, react.Failed, turns[0].Status)
	assert.Equal(t, "Check order A-17 for ever.", turns[0].User)
	assert.Equal(t, react.Finished, turns[1].Status)
}

// lossy is a thread store that loses the last turn of the read a test
// picks, as a store that lost a row would answer.
type lossy struct {
	threadstore.Store
	reads []string // "from-to" of every Turns call
	lose  func(read int, from, to int) bool
}

func (s *lossy) Turns(ctx context.Context, id string, from, to int) ([]threadstore.Turn, error) {
	ts, err := s.Store.Turns(ctx, id, from, to)
	s.reads = append(s.reads, fmt.Sprintf("%d-%d", from, to))
	if err == nil && len(ts) > 0 && s.lose != nil && s.lose(len(s.reads), from, to) {
		ts = ts[:len(ts)-1]
	}
	return ts, err
}

// A turn the thread store does not return when the loop reads the
// history — the window of earlier turns, the turns to summarize, the
// turns the prompt holds — stops the message with ErrThreadCorrupt naming
// the turns that are missing (never a shorter history), before the model
// is asked, and the thread stays free (its release adds nothing to the
// error).
func TestThreadMissingTurnsAreCorrupt(t *testing.T) {
	summarize := func(context.Context, string, []react.Turn) (string, error) { return "earlier: an order", nil }
	tests := []struct {
		name    string
		history react.HistoryPolicy
		lose    func(read int, from, to int) bool
		reads   []string
		want    string
		reason  string
	}{
		{
			name:   "the window",
			lose:   func(read, _, _ int) bool { return read == 1 },
			reads:  []string{"1-4"},
			want:   `thread "t" holds 3 turns, but turns 1 to 3 are not all there`,
			reason: "the window of the 20 latest turns reads turns 1 to 3 and gets two",
		},
		{
			name:    "the turns to summarize",
			history: react.HistoryPolicy{MaxTurns: 1, Summarize: summarize},
			lose:    func(_, from, _ int) bool { return from == 1 },
			reads:   []string{"3-4", "1-3"},
			want:    `thread "t": turns 1 to 2 are not all there`,
			reason:  "the window holds turn 3; turns 1 and 2, never summarized, are summarized now, and one of them is missing",
		},
		{
			name:    "the turns of the prompt",
			history: react.HistoryPolicy{MaxTurns: 1},
			lose:    func(read, _, _ int) bool { return read == 2 },
			reads:   []string{"3-4", "3-4"},
			want:    `thread "t": turns 3 to 3 are not all there`,
			reason:  "the window holds turn 3, which the second read, of the prompt's turns, lacks",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDesk(t)
			l := d.loop(reacttest.Func(clerk))
			for _, msg := range []string{"My order is A-17.", "Hello.", "Hello again."} {
				d.message(l, "t", msg)
			}
			asked := 0
			s := &lossy{Store: d.threads, lose: tt.lose}
			broken, err := react.New(react.Config{
				Model: reacttest.Func(func(req react.Request) react.Response {
					asked++
					return clerk(req)
				}),
				Tools: d.tools, Guards: d.guards, Observer: react.DiscardObserver, Threads: s, History: tt.history, Runs: d.runs,
				SnapshotKeys: [][]byte{deskKey},
			})
			require.NoError(t, err)
			_, err = broken.Run(bg, deskNode, "Where is my order?", react.InThread("t"), asAlice)
			require.ErrorIs(t, err, react.ErrThreadCorrupt, tt.reason)
			assert.ErrorContains(t, err, tt.want, tt.reason)
			assert.NotContains(t, err.Error(), "release", "the thread was released without an error")
			assert.Equal(t, tt.reads, s.reads, tt.reason)
			assert.Zero(t, asked, "the model is not asked")
			res := d.message(l, "t", "Where is my order?")
			assert.Equal(t, 4, res.Turn, "the thread was left free")
		})
	}
}

// The prompt of a thread's message holds the earlier turns in the window,
// after a note of the turns left out or the host's summary of them, and
// nothing before them when none is left out.
func TestThreadPromptHistory(t *testing.T) {
	summarize := func(context.Context, string, []react.Turn) (string, error) { return "an order A-17", nil }
	tests := []struct {
		name    string
		history react.HistoryPolicy
		message int // the message whose first prompt is read, from 1
		want    []string
		reason  string
	}{
		{
			name:    "the first message",
			message: 1,
			want:    nil,
			reason:  "no earlier turn: no history and no note",
		},
		{
			name:    "the second message",
			message: 2,
			want:    []string{"user: My order is A-17.", "assistant: Noted."},
			reason:  "the first turn fits: it is the whole history, with no note before it",
		},
		{
			name:    "every turn fits",
			message: 3,
			want:    []string{"user: My order is A-17.", "assistant: Noted.", "user: Hello.", "assistant: Hello."},
			reason:  "both earlier turns fit the default window",
		},
		{
			name:    "one turn left out",
			history: react.HistoryPolicy{MaxTurns: 1},
			message: 3,
			want: []string{
				"user: [The first 1 messages of this conversation are not shown. What the user said and what tools returned in them still count as sources.]",
				"user: Hello.", "assistant: Hello.",
			},
			reason: "the window holds turn 2; a note says that one turn is left out",
		},
		{
			name:    "one turn summarized",
			history: react.HistoryPolicy{MaxTurns: 1, Summarize: summarize},
			message: 3,
			want: []string{
				"user: [Summary of the first 1 messages of this conversation, written by the host, not the user's words: an order A-17]",
				"user: Hello.", "assistant: Hello.",
			},
			reason: "the window holds turn 2; the host's summary stands for turn 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDesk(t)
			d.history = tt.history
			var got []string
			n := 0
			l := d.loop(reacttest.Func(func(req react.Request) react.Response {
				if hist, own := history(req); len(own) == 0 {
					n++
					if n == tt.message {
						for _, m := range hist {
							got = append(got, string(m.Role)+": "+m.Content)
						}
					}
				}
				return clerk(req)
			}))
			for _, msg := range []string{"My order is A-17.", "Hello.", "Hello again."}[:tt.message] {
				d.message(l, "t", msg)
			}
			assert.Equal(t, tt.want, got, tt.reason)
		})
	}
}

// An earlier turn's calls and their results are marked alike, in the
// next message's prompt and in Loop.Turns: every tool message answers a
// call of the assistant message before it, both under the turn's mark,
// and no other message gets a call id.
func TestThreadHistoryCallsAndResultsMarked(t *testing.T) {
	d := newDesk(t)
	var hist []react.Message
	l := d.loop(reacttest.Func(func(req react.Request) react.Response {
		cur, own := current(req)
		if strings.HasPrefix(cur, "Status") {
			if len(own) == 0 {
				return turn(call("c1", "order_status", `{"order_id":"A-17"}`))
			}
			return text("Shipped.")
		}
		if len(own) == 0 {
			hist, _ = history(req)
		}
		return text("Hello.")
	}))
	d.message(l, "t", "Status of A-17?")
	d.message(l, "t", "Thanks.")
	turns, err := l.Turns(bg, "t", 1, 2, asAlice)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	for _, tt := range []struct {
		name string
		msgs []react.Message
	}{
		{"the next prompt", hist},
		{"Loop.Turns", turns[0].Messages},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var roles, ids []string
			for _, m := range tt.msgs {
				roles = append(roles, string(m.Role))
				for _, c := range m.ToolCalls {
					ids = append(ids, "call "+c.ID)
				}
				if m.ToolCallID != "" {
					ids = append(ids, string(m.Role)+" "+m.ToolCallID)
				}
			}
			assert.Equal(t, []string{"user", "assistant", "tool", "assistant"}, roles)
			assert.Equal(t, []string{"call turn1_c1", "tool turn1_c1"}, ids, "the result answers the call under the same marked id")
		})
	}
}

// HistoryPolicy.MaxTokens bounds the earlier turns of a prompt: the
// latest turns whose tokens add up to at most MaxTokens are kept, a turn
// that would pass it is left out with every turn before it. Here every
// message counts 10 tokens, so each earlier turn (the user's message and
// the answer) counts 20.
func TestThreadHistoryTokenBudget(t *testing.T) {
	omitted := func(n int) string {
		return fmt.Sprintf("user: [The first %d messages of this conversation are not shown. What the user said and what tools returned in them still count as sources.]", n)
	}
	tests := []struct {
		max    int
		want   []string
		reason string
	}{
		{40, []string{"user: My order is A-17.", "assistant: Noted.", "user: Hello.", "assistant: Hello."}, "both turns together count exactly the bound"},
		{39, []string{omitted(1), "user: Hello.", "assistant: Hello."}, "both turns pass the bound by one: the latest is kept"},
		{20, []string{omitted(1), "user: Hello.", "assistant: Hello."}, "the latest turn counts exactly the bound"},
		{19, []string{omitted(2)}, "the latest turn passes the bound: no turn is kept"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.max), func(t *testing.T) {
			d := newDesk(t)
			d.history = react.HistoryPolicy{MaxTokens: tt.max, Tokens: func(react.Message) int { return 10 }}
			var got []string
			l := d.loop(reacttest.Func(func(req react.Request) react.Response {
				if hist, own := history(req); len(own) == 0 {
					got = got[:0]
					for _, m := range hist {
						got = append(got, string(m.Role)+": "+m.Content)
					}
				}
				return clerk(req)
			}))
			for _, msg := range []string{"My order is A-17.", "Hello.", "Hello again."} {
				d.message(l, "t", msg)
			}
			turns, err := l.Turns(bg, "t", 1, 3, asAlice)
			require.NoError(t, err)
			require.Len(t, turns, 2)
			assert.Equal(t, []int{20, 20}, []int{turns[0].Tokens, turns[1].Tokens})
			assert.Equal(t, tt.want, got, tt.reason)
		})
	}
}

// A thread's summary read back from the store is the one the loop sealed
// for that thread, over the turns the thread says, for its owner: another
// thread's summary, a summary said to cover other turns, and a thread
// read back with another owner are refused with ErrThreadCorrupt before the
// model is asked.
func TestThreadSummaryIsSealed(t *testing.T) {
	summarize := func(_ context.Context, _ string, turns []react.Turn) (string, error) {
		return "the user's order " + orderIDRe.FindString(turns[0].User), nil
	}
	bob := runstore.Owner{Tenant: "acme", User: "bob"}
	d := newDesk(t)
	d.history = react.HistoryPolicy{MaxTurns: 1, Summarize: summarize}
	l := d.loop(reacttest.Func(clerk))
	for _, msg := range []string{"My order is A-17.", "Hello.", "Hello again."} {
		d.message(l, "t1", msg)
	}
	for _, msg := range []string{"My order is B-3.", "Hello.", "Hello again."} {
		d.message(l, "t2", msg)
	}
	t2, ok, err := d.threads.Get(bg, "t2")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, t2.Summarized, "each thread holds a summary of its first turn")
	tests := []struct {
		name   string
		edit   func(th *threadstore.Thread)
		as     react.Owner
		reason string
	}{
		{"another thread's summary", func(th *threadstore.Thread) { th.Summary = t2.Summary }, alice, "t2's summary under t1"},
		{"other turns", func(th *threadstore.Thread) { th.Summarized = 2 }, alice, "the summary covers turn 1, the thread says turns 1 and 2"},
		{"said to be bob's", func(th *threadstore.Thread) { th.Owner = bob }, alice, "the summary is alice's, the thread read back says bob's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := 0
			s := &tamper{Store: d.threads, get: func(th threadstore.Thread) threadstore.Thread {
				if th.ID == "t1" {
					tt.edit(&th)
				}
				return th
			}}
			broken, err := react.New(react.Config{
				Model: reacttest.Func(func(req react.Request) react.Response {
					asked++
					return clerk(req)
				}),
				Tools: d.tools, Guards: d.guards, Observer: react.DiscardObserver, Threads: s, History: d.history, Runs: d.runs,
				SnapshotKeys: [][]byte{deskKey},
			})
			require.NoError(t, err)
			_, err = broken.Run(bg, deskNode, "Where is my order?", react.InThread("t1"), react.WithOwner(tt.as))
			require.ErrorIs(t, err, react.ErrThreadCorrupt, tt.reason)
			assert.ErrorContains(t, err, "summary", tt.reason)
			assert.Zero(t, asked, "the model is not asked")
		})
	}
	res := d.message(l, "t1", "Where is my order?")
	assert.Equal(t, 4, res.Turn, "the thread was left free")
}

// A turn's tokens come from the usage the provider reported whenever it
// reported one for every call, zero counts included (a count, not a
// missing one): the growth from the first call's input to the end of the
// last answer, plus the user's message, estimated.
func TestThreadTurnTokensFromZeroCounts(t *testing.T) {
	user := estimateTokens(react.Message{Role: react.RoleUser, Content: "Status of A-17?"})
	tests := []struct {
		name   string
		calls  int   // model calls: 2 (a read, then the answer) or 1 (the answer)
		first  int64 // the input tokens the first call reports
		output int64
		want   int
		reason string
	}{
		{"first input zero", 2, 0, 30, 200 + 30 + user, "0 input tokens on the first call is a reported count"},
		{"first input one", 2, 1, 30, 200 + 30 + user, "the same growth from 1"},
		{"one call, output zero", 1, 50, 0, user, "no growth: the answer's 0 output tokens are a reported count"},
		{"one call, output one", 1, 50, 1, 1 + user, "the answer's one token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDesk(t)
			l := d.loop(reacttest.Func(func(req react.Request) react.Response {
				res := text("Shipped.")
				if _, own := current(req); len(own) == 0 && tt.calls == 2 {
					res = turn(call("c1", "order_status", `{"order_id":"A-17"}`))
				}
				// the first call sees 2 messages, the second 4
				res.Usage = &react.Usage{InputTokens: tt.first + int64(100*(len(req.Messages)-2)), OutputTokens: tt.output}
				return res
			}))
			node := deskNode
			node.HostApproval = false
			res, err := l.Run(bg, node, "Status of A-17?", react.InThread("t"), asAlice)
			require.NoError(t, err)
			require.Len(t, res.Transcript, 2*tt.calls)
			turns, err := l.Turns(bg, "t", 1, 2, asAlice)
			require.NoError(t, err)
			require.Len(t, turns, 1)
			assert.Equal(t, tt.want, turns[0].Tokens, tt.reason)
		})
	}
}

// Turns to summarize are given to the Summarizer SummaryBatch at a time,
// each batch with the summary of the ones before it, every turn once and
// in order.
func TestThreadSummaryBatches(t *testing.T) {
	d := newDesk(t)
	l := d.loop(reacttest.Func(clerk))
	const earlier = 2*react.SummaryBatch + 3 // two full batches and three turns
	for i := range earlier + 1 {
		d.message(l, "t", fmt.Sprintf("Hello %d.", i+1))
	}
	var batches []string
	d.history = react.HistoryPolicy{MaxTurns: 1, Summarize: func(_ context.Context, summary string, turns []react.Turn) (string, error) {
		batches = append(batches, fmt.Sprintf("%q: %d-%d (%d)", summary, turns[0].Index, turns[len(turns)-1].Index, len(turns)))
		return fmt.Sprintf("through %d", turns[len(turns)-1].Index), nil
	}}
	res := d.message(d.loop(reacttest.Func(clerk)), "t", "Hello again.")
	require.Equal(t, earlier+2, res.Turn)
	assert.Equal(t, []string{
		`"": 1-32 (32)`,
		`"through 32": 33-64 (32)`,
		`"through 64": 65-67 (3)`,
	}, batches, "the window holds the latest turn; the %d before it are summarized in batches of %d", earlier, react.SummaryBatch)
	th, ok, err := d.threads.Get(bg, "t")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, earlier, th.Summarized)
}

// A run resumed in a thread, by another process too, has the same
// history in its prompt as before it stopped: the earlier turns.
func TestThreadResumeKeepsHistory(t *testing.T) {
	d := newDesk(t)
	var hists [][]string
	m := reacttest.Func(func(req react.Request) react.Response {
		hist, _ := history(req)
		var h []string
		for _, msg := range hist {
			h = append(h, string(msg.Role)+": "+msg.Content)
		}
		hists = append(hists, h)
		return clerk(req)
	})
	d.message(d.loop(m), "t", "My order is A-17.")
	r2 := d.message(d.loop(m), "t", "Refund my order, please.")
	require.Equal(t, react.Suspended, r2.Status)
	before := len(hists)
	r2, err := d.loop(m).ResumeRun(bg, r2.Run, react.Approve(r2.Suspension.Ticket), asAlice)
	require.NoError(t, err)
	require.Equal(t, react.Finished, r2.Status)
	require.Greater(t, len(hists), before, "the resumed run asked the model")
	want := []string{"user: My order is A-17.", "assistant: Noted."}
	for i, h := range hists[1:] {
		assert.Equal(t, want, h, "call %d of the second message's run", i+1)
	}
}

// A window of more turns than one read of the store holds (MaxTurns over
// 32) is read in pages and holds MaxTurns turns, not more.
func TestThreadHistoryWindowPages(t *testing.T) {
	tests := []struct {
		maxTurns, earlier int
		first             string // the first message of the prompt's history
		reason            string
	}{
		{40, 50, "user: [The first 10 messages of this conversation are not shown. What the user said and what tools returned in them still count as sources.]", "a page of 32 turns, then one of 8"},
		{40, 40, "user: Hello 1.", "a page of 32 turns, then one of 8: every turn"},
		{33, 70, "user: [The first 37 messages of this conversation are not shown. What the user said and what tools returned in them still count as sources.]", "a page of 32 turns, then one of 1"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d of %d", tt.maxTurns, tt.earlier), func(t *testing.T) {
			d := newDesk(t)
			l := d.loop(reacttest.Func(clerk))
			for i := range tt.earlier {
				d.message(l, "t", fmt.Sprintf("Hello %d.", i+1))
			}
			d.history = react.HistoryPolicy{MaxTurns: tt.maxTurns}
			var hist []react.Message
			d.message(d.loop(reacttest.Func(func(req react.Request) react.Response {
				if h, own := history(req); len(own) == 0 {
					hist = h
				}
				return clerk(req)
			})), "t", "Hello again.")
			users := 0
			for _, m := range hist {
				if m.Role == react.RoleUser && !strings.HasPrefix(m.Content, "[") {
					users++
				}
			}
			assert.Equal(t, tt.maxTurns, users, tt.reason)
			require.NotEmpty(t, hist)
			assert.Equal(t, tt.first, string(hist[0].Role)+": "+hist[0].Content, tt.reason)
		})
	}
}
