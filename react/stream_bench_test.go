package react_test

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/reactguard/reactguard/react"
)

// deltaModel answers its first turn with n text deltas of 4 bytes (or, not
// streaming, with their whole text at once) and its second with
// builtin_node_finish. It allocates nothing per delta: the chunks are
// built once.
type deltaModel struct {
	chunks []react.Chunk
	text   string
	turn   int
}

func newDeltaModel(n int) *deltaModel {
	m := &deltaModel{chunks: make([]react.Chunk, n)}
	text := strings.Repeat("abc ", n)
	for i := range m.chunks {
		m.chunks[i] = react.Chunk{Text: text[4*i : 4*i+4]}
	}
	m.text = text
	return m
}

var finishTurn = react.Response{ToolCalls: []react.ToolCall{{ID: "f", Name: react.ToolFinish, Args: json.RawMessage(`{}`)}}}

func (m *deltaModel) Generate(context.Context, react.Request) (react.Response, error) {
	m.turn++
	if m.turn%2 == 1 {
		return react.Response{Text: m.text}, nil
	}
	return finishTurn, nil
}

// streaming is m as a StreamModel.
type streamingDelta struct{ *deltaModel }

func (m streamingDelta) GenerateStream(context.Context, react.Request) iter.Seq2[react.Chunk, error] {
	m.turn++
	if m.turn%2 == 0 {
		return func(yield func(react.Chunk, error) bool) {
			yield(react.Chunk{Call: &react.CallDelta{ID: "f", Name: react.ToolFinish, Args: `{}`}}, nil)
		}
	}
	return func(yield func(react.Chunk, error) bool) {
		for _, c := range m.chunks {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// deltaLoops returns a loop on the plain model and one on the streaming
// model, both with n deltas, no observer and the same stores.
func deltaLoops(tb testing.TB, n int) (plain, streamed *react.Loop) {
	tb.Helper()
	var err error
	plain, err = react.New(react.Config{Model: newDeltaModel(n), Observer: react.DiscardObserver})
	if err != nil {
		tb.Fatal(err)
	}
	streamed, err = react.New(react.Config{Model: streamingDelta{newDeltaModel(n)}, Observer: react.DiscardObserver})
	if err != nil {
		tb.Fatal(err)
	}
	return plain, streamed
}

// runPlain runs the node with Run; runStreamed iterates over RunStream,
// reading every event.
func runPlain(tb testing.TB, l *react.Loop) {
	if _, err := l.Run(context.Background(), react.Node{}, "talk"); err != nil {
		tb.Fatal(err)
	}
}

var sinkLen int

func runStreamed(tb testing.TB, l *react.Loop) {
	for e, err := range l.RunStream(context.Background(), react.Node{}, "talk") {
		if err != nil {
			tb.Fatal(err)
		}
		sinkLen += len(e.Text)
	}
}

// BenchmarkStreamDeltas: the same run streamed (RunStream over a
// StreamModel giving the answer in n deltas) and not (Run over a model
// giving it whole). The streamed/ benchmark reports ns/delta and
// allocs/delta over the plain run of the same n, measured in the same
// benchmark (the plain run timed as many times right after the
// streamed one).
func BenchmarkStreamDeltas(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		plain, streamed := deltaLoops(b, n)
		b.Run("plain/n="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				runPlain(b, plain)
			}
		})
		b.Run("streamed/n="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				runStreamed(b, streamed)
			}
			streamedNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			// The plain run, as many times, right after (untimed by b).
			start := time.Now()
			for range b.N {
				runPlain(b, plain)
			}
			plainNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			b.ReportMetric((streamedNs-plainNs)/float64(n), "ns/delta")
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// A streamed text delta costs at most one allocation over the same run
// not streamed (target of docs/performance.md: ≤ 1 per delta; the text
// itself grows by doubling), and memory stays flat: a 10,000-delta
// answer allocates no more per byte of text than a 100-delta one.
func TestStreamDeltaCost(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts over 10,000-delta runs")
	}
	perDelta := map[int]float64{}
	for _, n := range []int{100, 10000} {
		plain, streamed := deltaLoops(t, n)
		a := testing.AllocsPerRun(5, func() { runPlain(t, plain) })
		s := testing.AllocsPerRun(5, func() { runStreamed(t, streamed) })
		perDelta[n] = (s - a) / float64(n)
		if perDelta[n] > 1 {
			t.Errorf("n=%d: %.3f allocations per delta over the plain run (%.0f against %.0f); want ≤ 1", n, perDelta[n], s, a)
		}
	}
	if perDelta[10000] > perDelta[100]+0.01 {
		t.Errorf("allocations per delta grow with the answer: %.3f at 100, %.3f at 10,000", perDelta[100], perDelta[10000])
	}
}
