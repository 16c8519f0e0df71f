package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// The turn benchmark (issue "a guarded turn that costs a quarter of the
// best peer's"): a scripted model drives N turns, each with k calls of a
// trivial typed read tool with new arguments, then finishes. Three ways
// run the same script in the same benchmark, one after the other in every
// iteration, so that their ratio is measured under the same load:
//
//   - bare: a loop written here by hand that does the same work — call the
//     model, run each tool, encode its result, append the assistant and tool
//     messages — and nothing else;
//   - loop: react.Loop with no guards (the default invoker alone as its
//     handler), the default log observer on a discarded handler;
//   - guarded: react.Loop with every default guard, the same observer.
//
// Reported per turn: ns of the bare loop and the overhead of loop and
// guarded over it, and the same for allocations (counted apart, after the
// timed iterations, over at least 2,000 turns). Every run asserts the
// counts: finished, N·k executions.

type turnIn struct {
	Q string `json:"q"`
}

type turnOut struct {
	Found string `json:"found"`
	Score int    `json:"score"`
}

// turnTool is the trivial read tool of the benchmark; execs counts its
// executions.
func turnTool(execs *int) *tool.Tool {
	t := tool.New("lookup", "Looks a word up.", func(_ context.Context, in turnIn) (turnOut, error) {
		*execs++
		return turnOut{Found: in.Q, Score: len(in.Q)}, nil
	})
	t.Effect = tool.Read
	return t
}

// turnScript is the model's script: n turns of k lookup calls with
// arguments never seen before (salt differs in every iteration, so no
// cache of an earlier iteration helps), then a finish.
func turnScript(n, k, salt int) []react.Response {
	turns := make([]react.Response, n+1)
	for i := range n {
		calls := make([]react.ToolCall, k)
		for j := range calls {
			id := "c" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
			q := id + "_" + strconv.Itoa(salt)
			calls[j] = react.ToolCall{ID: id, Name: "lookup", Args: json.RawMessage(`{"q":"` + q + `"}`)}
		}
		turns[i] = react.Response{ToolCalls: calls}
	}
	turns[n] = react.Response{ToolCalls: []react.ToolCall{{ID: "done", Name: react.ToolFinish, Args: json.RawMessage(`{}`)}}}
	return turns
}

// replayer replays a script from the start on every reset.
type replayer struct {
	turns *[]react.Response
	next  int
}

func (r *replayer) Generate(context.Context, react.Request) (react.Response, error) {
	t := (*r.turns)[r.next]
	r.next++
	return t, nil
}

// bareLoop is the hand-written loop: the same model, the same tool, the
// messages a chat API needs, no checks.
func bareLoop(ctx context.Context, m react.Model, t *tool.Tool, task string) (int, error) {
	msgs := []react.Message{{Role: react.RoleUser, Content: task}}
	for rounds := 1; ; rounds++ {
		resp, err := m.Generate(ctx, react.Request{Messages: msgs})
		if err != nil {
			return rounds, err
		}
		msgs = append(msgs, react.Message{Role: react.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		for _, c := range resp.ToolCalls {
			if c.Name == react.ToolFinish {
				return rounds, nil
			}
			out, err := t.Func(ctx, tool.Request{CallID: c.ID, Args: c.Args})
			content := ""
			if err != nil {
				content = err.Error()
			} else {
				b, _ := json.Marshal(out)
				content = string(b)
			}
			msgs = append(msgs, react.Message{Role: react.RoleTool, Content: content, ToolCallID: c.ID, ToolName: c.Name})
		}
	}
}

// turnWay is one way of running the script.
type turnWay struct {
	name       string
	run        func() error
	execs      *int
	ns, allocs uint64
}

func BenchmarkTurn(b *testing.B) {
	for _, k := range []int{1, 4} {
		for _, n := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("calls=%d/N=%d", k, n), func(b *testing.B) { benchTurn(b, n, k) })
		}
	}
}

// turnWays returns the three ways of running the script, in the order
// bare, loop, guarded.
func turnWays(b *testing.B, n int, script *[]react.Response) []*turnWay {
	ctx := context.Background()
	node := react.Node{Name: "turns", Tools: []string{"lookup"}, MaxRounds: n + 1}
	silent := slog.New(slog.DiscardHandler)
	newWay := func(name string, guarded bool) *turnWay {
		w := &turnWay{name: name, execs: new(int)}
		model := &replayer{turns: script}
		t := turnTool(w.execs)
		cfg := react.Config{Model: model, Tools: tool.MustCatalog(t), Logger: silent}
		if !guarded {
			cfg.Handler = invoker.New(&invoker.Options{Logger: silent})
		}
		l, err := react.New(cfg)
		require.NoError(b, err)
		w.run = func() error {
			model.next = 0
			res, err := l.Run(ctx, node, "look every word up")
			if err == nil && res.Status != react.Finished {
				err = fmt.Errorf("%s: run %v, want finished", name, res.Status)
			}
			return err
		}
		return w
	}
	bare := &turnWay{name: "bare", execs: new(int)}
	{
		model := &replayer{turns: script}
		t := turnTool(bare.execs)
		tool.MustCatalog(t)
		bare.run = func() error {
			model.next = 0
			_, err := bareLoop(ctx, model, t, "look every word up")
			return err
		}
	}
	return []*turnWay{bare, newWay("loop", false), newWay("guarded", true)}
}

func benchTurn(b *testing.B, n, k int) {
	var script []react.Response
	ways := turnWays(b, n, &script)
	bare := ways[0]
	run := func(w *turnWay) {
		*w.execs = 0
		if err := w.run(); err != nil {
			b.Fatal(err)
		}
		if *w.execs != n*k {
			b.Fatalf("%s executed the tool %d times; want %d", w.name, *w.execs, n*k)
		}
	}
	// Warm up every way (the heap, the caches of the loop and its
	// guards) before timing, so that the first sub-benchmark of a run is
	// not charged for starting the process's heap.
	for i := range max(2, 200/n) {
		script = turnScript(n, k, -1-i)
		for _, w := range ways {
			run(w)
		}
	}
	iters := 0
	for b.Loop() {
		b.StopTimer()
		script = turnScript(n, k, iters)
		b.StartTimer()
		for _, w := range ways {
			start := time.Now()
			run(w)
			w.ns += uint64(time.Since(start))
		}
		iters++
	}
	// Allocations are counted apart, over enough turns, so that reading
	// the memory statistics (which stops the world) does not disturb the
	// times above.
	b.StopTimer()
	allocRuns := max(1, 2000/n)
	var ms runtime.MemStats
	for _, w := range ways {
		var total uint64
		for i := range allocRuns {
			script = turnScript(n, k, iters+i)
			runtime.ReadMemStats(&ms)
			before := ms.Mallocs
			run(w)
			runtime.ReadMemStats(&ms)
			total += ms.Mallocs - before
		}
		w.allocs = total * uint64(iters) / uint64(allocRuns) // per timed iteration
	}
	turns := float64(iters * n)
	per := func(w *turnWay) (float64, float64) { return float64(w.ns) / turns, float64(w.allocs) / turns }
	bareNs, bareAllocs := per(bare)
	for _, w := range ways[1:] {
		ns, allocs := per(w)
		b.ReportMetric(ns-bareNs, "ns/turn-over-bare("+w.name+")")
		b.ReportMetric(allocs-bareAllocs, "allocs/turn-over-bare("+w.name+")")
	}
	b.ReportMetric(bareNs, "ns/turn(bare)")
	b.ReportMetric(bareAllocs, "allocs/turn(bare)")
}

// BenchmarkTurnAlone runs one way at a time, alone in the process, for
// profiling what a way spends its time on (BenchmarkTurn measures the
// overheads). The scripts are made before timing; 64 of them are used in
// turn, each with arguments never seen in its run.
func BenchmarkTurnAlone(b *testing.B) {
	for _, way := range []string{"bare", "loop", "guarded"} {
		for _, k := range []int{1, 4} {
			for _, n := range []int{10, 100, 1000} {
				b.Run(fmt.Sprintf("%s/calls=%d/N=%d", way, k, n), func(b *testing.B) {
					scripts := make([][]react.Response, 64)
					for i := range scripts {
						scripts[i] = turnScript(n, k, i)
					}
					var script []react.Response
					var w *turnWay
					for _, x := range turnWays(b, n, &script) {
						if x.name == way {
							w = x
						}
					}
					b.ReportAllocs()
					b.ResetTimer()
					for i := range b.N {
						script = scripts[i%len(scripts)]
						*w.execs = 0
						if err := w.run(); err != nil {
							b.Fatal(err)
						}
						if *w.execs != n*k {
							b.Fatalf("%s executed the tool %d times; want %d", w.name, *w.execs, n*k)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/turn")
				})
			}
		}
	}
}
