package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// Floor is what the database costs at the least, measured on the stores'
// own pool: a statement that does nothing, and one upsert of one row.
type Floor struct {
	// Select1 sends SELECT 1.
	Select1 func(ctx context.Context) error
	// Upsert inserts or updates row k (one statement).
	Upsert func(ctx context.Context, k int64) error
}

// Concurrencies are the closed-loop concurrencies DurablePath measures.
var Concurrencies = []int{1, 8, 32}

// closedLoop runs n calls of op from c goroutines, each making its next
// call as soon as its last returned, and returns every call's latency and
// the wall time.
func closedLoop(c, n int, op func(worker, i int) error) ([]time.Duration, time.Duration, error) {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var first error
	var once sync.Once
	start := time.Now()
	for w := range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t := time.Now()
				if err := op(w, i); err != nil {
					once.Do(func() { first = err })
					return
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	return lat, time.Since(start), first
}

// series collects latencies of one kind of call.
type series struct {
	lat     []time.Duration
	elapsed time.Duration
}

func (s *series) add(lat []time.Duration, elapsed time.Duration) {
	s.lat = append(s.lat, lat...)
	s.elapsed += elapsed
}

func (s *series) quantile(q float64) time.Duration {
	l := slices.Clone(s.lat)
	slices.Sort(l)
	return l[int(q*float64(len(l)-1))]
}

func (s *series) perSecond() float64 { return float64(len(s.lat)) / s.elapsed.Seconds() }

// DurablePath measures, at each of Concurrencies, in the same run and on
// the same pool: the floor (SELECT 1 and a one-row upsert), a guarded read
// (a read tool through the default guard chain over the stores, as a loop
// runs it) and an approved write (its claim with the approval, the call,
// its record with the evidence). Each worker of the closed loop makes the
// four calls in turn, one after the other, so they share the machine's
// conditions call by call (the approved writes are gated and approved,
// each in a run that read first, before each round, outside the
// measurement). It reports, per
// concurrency, the p50 and p99 of each in microseconds, the ratios of the
// read's and the write's p50 to the upsert's, and the calls per second of
// each.
func DurablePath(b *testing.B, s Stores, floor Floor) {
	for _, c := range Concurrencies {
		b.Run("c="+strconv.Itoa(c), func(b *testing.B) {
			ctx := context.Background()
			h, read, write := chain(b, s)
			cycles := 32 * c // per round: each of the four, cycles times
			stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
			runs := make([]string, c) // each worker reads in a run of its own, loaded before the timer
			for w := range runs {
				runs[w] = fmt.Sprintf("floor-read-%s-%d-%d", stamp, c, w)
				guardedRead(b, h, read, runs[w], -1)
			}
			kinds := []string{"select1", "upsert", "read", "write"}
			all := make([]series, len(kinds))
			var key atomic.Int64
			key.Store(time.Now().UnixNano())
			for round := range b.N {
				calls := make([]invoker.Call, cycles)
				for i := range calls {
					// A run reads, and its write waits for approval and is
					// approved (as a resume's claim marks the run's evidence
					// written, the read does here): outside the measurement.
					run := fmt.Sprintf("floor-write-%s-%d-%d-%d", stamp, c, round, i)
					guardedRead(b, h, read, run, -1)
					calls[i] = gateAndApprove(b, h, s, write, run, i)
				}
				lat := make([][]time.Duration, len(kinds))
				for k := range lat {
					lat[k] = make([]time.Duration, cycles)
				}
				_, elapsed, err := closedLoop(c, cycles, func(w, i int) error {
					for k := range kinds {
						t := time.Now()
						var err error
						switch k {
						case 0:
							err = floor.Select1(ctx)
						case 1:
							err = floor.Upsert(ctx, key.Add(1))
						case 2:
							err = readErr(ctx, h, read, runs[w], round*cycles+i)
						case 3:
							err = writeErr(ctx, h, calls[i])
						}
						if err != nil {
							return err
						}
						lat[k][i] = time.Since(t)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				var sum time.Duration
				for k := range kinds {
					for _, d := range lat[k] {
						sum += d
					}
				}
				for k := range kinds {
					var own time.Duration
					for _, d := range lat[k] {
						own += d
					}
					// Each kind's share of the wall time: calls per second as
					// if the loop made only that kind.
					all[k].add(lat[k], time.Duration(float64(elapsed)*float64(own)/float64(sum)))
				}
			}
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
			for k, name := range kinds {
				b.ReportMetric(us(all[k].quantile(0.5)), "p50-us/"+name)
				b.ReportMetric(us(all[k].quantile(0.99)), "p99-us/"+name)
				b.ReportMetric(all[k].perSecond(), name+"/s")
			}
			b.ReportMetric(float64(all[2].quantile(0.5))/float64(all[1].quantile(0.5)), "read/upsert-p50")
			b.ReportMetric(float64(all[3].quantile(0.5))/float64(all[1].quantile(0.5)), "write/upsert-p50")
			b.ReportMetric(0, "ns/op") // the time of an iteration (four kinds of calls) says nothing
		})
	}
}

// readErr is guardedRead, answering an error.
func readErr(ctx context.Context, h invoker.Handler, read *tool.Tool, run string, i int) error {
	id := strconv.Itoa(i)
	obs, err := h(ctx, invoker.Call{ID: "c" + id, Name: read.Name, Tool: read, Args: json.RawMessage(`{"id":"` + id + `"}`), Run: run, Round: 1})
	if err != nil || obs.Outcome() != outcome.Success {
		return fmt.Errorf("guarded read = %v, %w; want SUCCESS", obs, err)
	}
	return nil
}

// writeErr sends an approved write call through h.
func writeErr(ctx context.Context, h invoker.Handler, call invoker.Call) error {
	obs, err := h(ctx, call)
	if err != nil || obs.Outcome() != outcome.Success {
		return fmt.Errorf("approved write = %v, %w; want SUCCESS", obs, err)
	}
	return nil
}

// Runs measures whole runs of the story of issue 19 through a loop over
// the stores (two guarded reads, a write deferred for approval, the
// approval, ResumeRun, the approved write, the end), at concurrency c in
// one process: runs per second and the p50 and p99 of a run's two calls
// (Run and ResumeRun, the model answering at once).
func Runs(b *testing.B, s Stores, c int) {
	l, err := storyLoop(s)
	if err != nil {
		b.Fatal(err)
	}
	var all series
	for round := range b.N {
		n := 4 * c
		lat, el, err := closedLoop(c, n, func(_, i int) error {
			ctx := context.Background()
			res, err := l.Run(ctx, storyNode, "Create the Spring Sale site in sp-42.")
			if err != nil || res.Status != react.Suspended {
				return fmt.Errorf("run %d of round %d: %s, %w; want suspended", i, round, res.Status, err)
			}
			res, err = l.ResumeRun(ctx, res.Run, react.Approve(res.Suspension.Ticket))
			if err != nil || res.Status != react.Finished {
				return fmt.Errorf("resume %s: %s, %w; want finished", res.Run, res.Status, err)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		all.add(lat, el)
	}
	b.ReportMetric(all.perSecond(), "runs/s")
	b.ReportMetric(float64(all.quantile(0.5).Microseconds())/1e3, "p50-ms/run")
	b.ReportMetric(float64(all.quantile(0.99).Microseconds())/1e3, "p99-ms/run")
	b.ReportMetric(0, "ns/op")
}

var storyNode = react.Node{Name: "storetest-story", Tools: []string{"get_site", "update_site"}, MaxRounds: 10}

// storyLoop is a loop over s whose model plays the story: get_site twice,
// update_site (deferred), the approval, update_site again (approved), the
// end.
func storyLoop(s Stores) (*react.Loop, error) {
	read, write := siteTools()
	tools, err := tool.NewCatalog(read, write)
	if err != nil {
		return nil, err
	}
	model := react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) {
		answered := func(id string) bool { _, ok := reacttest.ToolMessage(req, id); return ok }
		switch {
		case !answered("r1"):
			return reacttest.Calls(reacttest.Call("r1", "get_site", `{"id":"1"}`)), nil
		case !answered("r2"):
			return reacttest.Calls(reacttest.Call("r2", "get_site", `{"id":"2"}`)), nil
		case !answered("w1"):
			return reacttest.Calls(reacttest.Call("w1", "update_site", `{"id":"1"}`)), nil
		case !answered("a1"):
			return reacttest.Calls(reacttest.Approval("a1", "update_site", "please")), nil
		case !answered("w2"):
			return reacttest.Calls(reacttest.Call("w2", "update_site", `{"id":"1"}`)), nil
		}
		return reacttest.Calls(reacttest.Finish("f", "done")), nil
	})
	var n atomic.Int64
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	return react.New(react.Config{Model: model, Tools: tools, Observer: react.DiscardObserver,
		Guards: &guard.Options{Ledger: s.Ledger, Approvals: s.Approvals, WriteLedger: s.WriteLedger}, Claims: s.Claims, Runs: s.Runs, Audit: s.Audit,
		NewRunID: func(context.Context) string { return "story-" + stamp + "-" + strconv.FormatInt(n.Add(1), 10) }})
}
