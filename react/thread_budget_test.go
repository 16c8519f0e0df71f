package react_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

// history returns the messages of req between the system message and the
// message the run answers, and the run's own messages.
func history(req react.Request) (hist, own []react.Message) {
	cur, own := current(req)
	for i := len(req.Messages) - len(own) - 1; i >= 0; i-- {
		if req.Messages[i].Role == react.RoleUser && req.Messages[i].Content == cur {
			return req.Messages[1:i], own
		}
	}
	return nil, own
}

// A turn's tokens are counted from the usage the provider reported: the
// growth of the prompt over the run and the last answer, plus the user's
// message (which no reported count isolates), estimated. A model that
// reports no usage gets an estimate; the host's Tokens counts instead of
// both.
func TestThreadTurnTokens(t *testing.T) {
	usage := func(req react.Request) *react.Usage {
		return &react.Usage{InputTokens: int64(100 * len(req.Messages)), OutputTokens: 30}
	}
	m := func(withUsage bool) react.Model {
		return reacttest.Func(func(req react.Request) react.Response {
			res := text("Shipped.")
			if _, own := current(req); len(own) == 0 {
				res = turn(call("c1", "order_status", `{"order_id":"A-17"}`))
			}
			if withUsage {
				res.Usage = usage(req)
			}
			return res
		})
	}
	est := func(s string) int { return (len(s)+3)/4 + 4 }
	for _, c := range []struct {
		name   string
		model  react.Model
		policy react.HistoryPolicy
		want   int
	}{
		// Two calls: the first sees system + the user's message (2
		// messages), the second 2 more; 200 of growth + 30 of answer.
		{"reported", m(true), react.HistoryPolicy{}, 200 + 30 + est("Status of A-17?")},
		{"estimated", m(false), react.HistoryPolicy{}, -1},
		{"host's tokenizer", m(true), react.HistoryPolicy{Tokens: func(m react.Message) int { return 1000 }}, 4000},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDesk(t)
			d.history = c.policy
			l := d.loop(c.model)
			node := deskNode
			node.HostApproval = false
			res, err := l.Run(bg, node, "Status of A-17?", react.InThread("t1"), asAlice)
			require.NoError(t, err)
			require.Len(t, res.Transcript, 4, "the user's message, a call, its result, the answer")
			turns, err := l.Turns(bg, "t1", 1, 2, asAlice)
			require.NoError(t, err)
			want := c.want
			if want < 0 {
				want = 0
				for _, msg := range res.Transcript {
					want += estimateTokens(msg)
				}
			}
			assert.Equal(t, want, turns[0].Tokens)
		})
	}
}

// estimateTokens is the loop's estimate of a message's tokens.
func estimateTokens(m react.Message) int {
	n := len(m.Content) + len(m.ToolCallID) + len(m.ToolName)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Args)
	}
	return (n+3)/4 + 4
}

// A thread of 1,000 messages: every prompt holds at most MaxTokens of
// earlier turns (counted by the host's Tokens), whole turns, the most
// recent first; the user's words of message 1 are a source at message
// 1,000; and what answering a message allocates does not grow with the
// thread (the bytes allocated per message over messages 901 to 1,000 are
// within 25% of those over messages 101 to 200).
func TestThreadThousandMessages(t *testing.T) {
	const n, budget = 1000, 600
	d := newDesk(t)
	d.history = react.HistoryPolicy{MaxTurns: 1 << 20, MaxTokens: budget, Tokens: func(m react.Message) int { return len(m.Content) + 8 }}
	tokens := d.history.Tokens
	var worst, fullest, emptiest int
	emptiest = 1 << 30
	m := reacttest.Func(func(req react.Request) react.Response {
		hist, own := history(req)
		sum, turns := 0, 0
		for _, msg := range hist {
			if msg.Role == react.RoleUser && strings.HasPrefix(msg.Content, "[") {
				continue // the note that earlier turns are left out
			}
			sum += tokens(msg)
			if msg.Role == react.RoleUser {
				turns++
			}
		}
		worst = max(worst, sum)
		if cur, _ := current(req); len(own) == 0 && cur != "My order is A-17." {
			fullest, emptiest = max(fullest, turns), min(emptiest, turns)
		}
		return clerk(req)
	})
	l := d.loop(m)
	node := deskNode
	node.HostApproval = false
	var perMessage [n + 1]uint64
	var ms runtime.MemStats
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("Hello %d, %s.", i, strings.Repeat("a", i%37))
		if i == 1 {
			text = "My order is A-17."
		}
		if i == n {
			text = "Where is my order?"
		}
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		res, err := l.Run(bg, node, text, react.InThread("t1"), asAlice)
		require.NoError(t, err)
		require.Equal(t, i, res.Turn)
		runtime.ReadMemStats(&ms)
		perMessage[i] = ms.TotalAlloc - before
		if i == n {
			require.Equal(t, "SUCCESS", res.Calls[0].Outcome.String(), "A-17 of message 1 is a source at message %d", n)
			require.Equal(t, "REJECTED", res.Calls[1].Outcome.String(), "an invented id is refused")
		}
	}
	assert.LessOrEqual(t, worst, budget, "no prompt held more than the budget of earlier turns")
	assert.Greater(t, emptiest, 0, "after the first message, every prompt holds earlier turns")
	assert.Greater(t, fullest, 2, "the budget holds several turns")
	sum := func(from, to int) (s uint64) {
		for i := from; i <= to; i++ {
			s += perMessage[i]
		}
		return s
	}
	early, late := sum(101, 200), sum(901, 1000)
	t.Logf("bytes allocated per message: %d over messages 101-200, %d over 901-1000", early/100, late/100)
	assert.Less(t, float64(late), 1.25*float64(early), "what a message allocates does not grow with the thread")
}

// A summarizer's error stops the message before it runs, and the thread
// stays free.
func TestThreadSummarizerError(t *testing.T) {
	d := newDesk(t)
	fail := true
	d.history = react.HistoryPolicy{MaxTurns: 1, Summarize: func(context.Context, string, []react.Turn) (string, error) {
		if fail {
			return "", fmt.Errorf("summarizer down")
		}
		return "earlier: an order", nil
	}}
	l := d.loop(reacttest.Func(clerk))
	d.message(l, "t1", "My order is A-17.")
	d.message(l, "t1", "Hello.")
	_, err := l.Run(bg, deskNode, "Hello again.", react.InThread("t1"), asAlice)
	require.ErrorContains(t, err, "summarizer down")
	require.ErrorContains(t, err, "HistoryPolicy.Summarize (turns 1 to 1 of thread t1)")
	fail = false
	res := d.message(l, "t1", "Hello again.")
	assert.Equal(t, 3, res.Turn)
	th, ok, err := d.threadsGet("t1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 1, th.Summarized)
}
