package acceptance

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	rt "github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// lookupTool is a read tool that echoes its argument after latency (0:
// at once).
func lookupTool(latency time.Duration) *tool.Tool {
	return rt.Respond("lookup", func(_ context.Context, req tool.Request) (any, error) {
		if latency > 0 {
			time.Sleep(latency)
		}
		return map[string]any{"found": string(req.Args)}, nil
	}).Tool
}

// benchLoop returns a loop over model with the lookup tool, no log output
// and a fresh in-memory evidence ledger (returned so that a benchmark can
// forget the runs it has finished, as a long-running service must).
func benchLoop(tb testing.TB, model react.Model, latency time.Duration) (*react.Loop, *evidence.Memory) {
	tb.Helper()
	ledger := evidence.NewMemory()
	l, err := react.New(react.Config{
		Model:    model,
		Tools:    tool.MustCatalog(lookupTool(latency)),
		Guards:   &guard.Options{Ledger: ledger},
		Observer: react.DiscardObserver,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(tb, err)
	return l, ledger
}

// lookups returns a turn of n lookup calls with distinct arguments.
func lookups(prefix string, n int) react.Response {
	calls := make([]react.ToolCall, n)
	for i := range calls {
		id := prefix + "_" + strconv.Itoa(i+1)
		calls[i] = rt.Call(id, "lookup", `{"q":"`+id+`"}`)
	}
	return rt.Calls(calls...)
}

// BenchmarkRound measures one round of a run: the model's turn with 1 or
// 8 read calls, each through the default guard chain and invoker, their
// tool messages and events. The node's round limit is 1, so every
// iteration is a whole run of exactly one round (run setup included).
// "parallel" runs the reads of the wave concurrently (Node.ParallelReads,
// at most DefaultMaxParallel at a time); "latency" gives every read a
// 1 ms wait, as a remote tool would have.
func BenchmarkRound(b *testing.B) {
	for _, bc := range []struct {
		n        int
		parallel bool
		latency  time.Duration
	}{{1, false, 0}, {8, false, 0}, {8, true, 0}, {8, false, time.Millisecond}, {8, true, time.Millisecond}} {
		name := fmt.Sprintf("calls=%d", bc.n)
		if bc.parallel {
			name += "/parallel"
		}
		if bc.latency > 0 {
			name += "/latency=" + bc.latency.String()
		}
		b.Run(name, func(b *testing.B) {
			turn := lookups("c", bc.n)
			l, ledger := benchLoop(b, react.ModelFunc(func(context.Context, react.Request) (react.Response, error) {
				return turn, nil
			}), bc.latency)
			node := react.Node{Name: "bench", Tools: []string{"lookup"}, MaxRounds: 1, ParallelReads: bc.parallel}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := l.Run(ctx, node, "look things up")
				if err != nil || res.Status != react.Failed || res.Rounds != 1 {
					b.Fatalf("Run = %v, %v; want one round ending at the round limit", res.Status, err)
				}
				ledger.Forget(res.Run)
			}
		})
	}
}

// longRounds is the length of the long node.
const longRounds = 1000

// longNode runs a node of longRounds rounds, each calling lookup once
// with new arguments (a SUCCESS, so nothing trips and no stall is
// counted), then finishing. mark is called at the start of every model
// turn with the turn's number, 1-based.
func longNode(tb testing.TB, mark func(turn int)) {
	tb.Helper()
	turns := make([]react.Response, longRounds+1)
	for i := range longRounds {
		turns[i] = lookups("r"+strconv.Itoa(i+1), 1)
	}
	turns[longRounds] = rt.Calls(rt.Finish("done", ""))
	k := 0
	l, _ := benchLoop(tb, react.ModelFunc(func(context.Context, react.Request) (react.Response, error) {
		k++
		mark(k)
		return turns[k-1], nil
	}), 0)
	res, err := l.Run(context.Background(), react.Node{Name: "long", Tools: []string{"lookup"}, MaxRounds: longRounds + 1}, "look everything up")
	require.NoError(tb, err)
	require.Equal(tb, react.Finished, res.Status, "the long node finishes")
	require.Equal(tb, longRounds+1, res.Rounds)
}

// window returns the median of per-round costs over rounds [from, to].
func window(costs []float64, from, to int) float64 {
	w := slices.Clone(costs[from : to+1])
	slices.Sort(w)
	return w[len(w)/2]
}

// BenchmarkLongNode measures the cost of a round late in a long node
// against an early one: the time from one model turn to the next (the
// loop's own work for a round: the call through the guards, its tool
// message, evidence, events, the next system prompt), median over rounds
// 1–20 ("round 10") and 981–1000 ("round 1000"), averaged over the
// iterations. A loop that copied its history every round would show a
// ratio far above 1.
func BenchmarkLongNode(b *testing.B) {
	sums := make([]float64, longRounds+2)
	iters := 0
	b.ReportAllocs()
	for b.Loop() {
		var last time.Time
		longNode(b, func(turn int) {
			now := time.Now()
			if turn > 1 {
				sums[turn-1] += float64(now.Sub(last).Nanoseconds())
			}
			last = now
		})
		iters++
	}
	costs := make([]float64, len(sums))
	for i, s := range sums {
		costs[i] = s / float64(iters)
	}
	early, late := window(costs, 1, 20), window(costs, longRounds-19, longRounds)
	b.ReportMetric(early, "ns/round@10")
	b.ReportMetric(late, "ns/round@1000")
	b.ReportMetric(late/early, "late/early")
}

// TestLongNodeAllocationsStayFlat is the deterministic form of the
// benchmark: the bytes a round allocates must not grow with the history
// (no quadratic copying). It compares the median bytes allocated per round
// over rounds 1–20 with rounds 981–1000; append's occasional doubling of
// the history is amortised and the median ignores it.
func TestLongNodeAllocationsStayFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("long node")
	}
	bytes := make([]float64, longRounds+2)
	var ms runtime.MemStats
	var last uint64
	longNode(t, func(turn int) {
		runtime.ReadMemStats(&ms)
		if turn > 1 {
			bytes[turn-1] = float64(ms.TotalAlloc - last)
		}
		runtime.ReadMemStats(&ms) // exclude the first read's own cost
		last = ms.TotalAlloc
	})
	early, late := window(bytes, 1, 20), window(bytes, longRounds-19, longRounds)
	t.Logf("bytes allocated per round: round 10 %.0f, round 1000 %.0f, ratio %.2f", early, late, late/early)
	require.LessOrEqual(t, late, 1.5*early,
		"a round at 1000 allocates %.0f bytes, at 10 %.0f: the loop's per-round work grows with the history", late, early)
}
