package react_test

import (
	"fmt"
	"testing"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

// BenchmarkThreadMessage: one message to a thread that already holds n
// turns (in-memory stores, the default history policy of 20 turns; each
// message makes three calls — a lookup, a lookup refused by the parameter
// contract, a write deferred for approval — and answers in text). The
// cost of a message does not grow with the thread; no-history sends no
// earlier turn (what opening the sealed turns of the prompt costs).
func BenchmarkThreadMessage(b *testing.B) {
	for _, c := range []struct {
		n       int
		history int // HistoryPolicy.MaxTurns
	}{{10, 0}, {100, 0}, {1000, 0}, {100, -1}} {
		n := c.n
		name := fmt.Sprintf("turns=%d", n)
		if c.history < 0 {
			name += "/no-history"
		}
		b.Run(name, func(b *testing.B) {
			d := newDesk(b)
			d.history.MaxTurns = c.history
			l := d.loop(reacttest.Func(clerk))
			node := deskNode
			node.HostApproval = false
			for i := range n {
				text := "Where is my order?" // three calls: a lookup, a refusal, a deferred write
				if i == 0 {
					text = "My order is A-17."
				}
				if _, err := l.Run(bg, node, text, react.InThread("t1"), asAlice); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := l.Run(bg, node, "Where is my order?", react.InThread("t1"), asAlice); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
