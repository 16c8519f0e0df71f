package guard_test

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/tool"
)

type benchIn struct {
	Query string `json:"query"`
	Page  int    `json:"page,omitempty"`
}

// benchTools returns a no-op read tool and a no-op write tool, catalogued.
func benchTools(b *testing.B) (read, write *tool.Tool) {
	read = tool.New("search_sites", "searches sites", func(context.Context, benchIn) (string, error) { return "ok", nil })
	read.Effect = tool.Read
	write = tool.New("create_site", "creates a site", func(context.Context, benchIn) (string, error) { return "ok", nil })
	write.Effect = tool.Write
	if _, err := tool.NewCatalog(read, write); err != nil {
		b.Fatal(err)
	}
	return read, write
}

var benchArgs = json.RawMessage(`{"query":"blog sites in eu-west","page":2}`)

func benchRun(b *testing.B, h invoker.Handler, call invoker.Call) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDefaultChain measures the same call, repeated, through the whole
// default chain around a no-op tool with two arguments, against the bare
// default invoker: the repeated-arguments case. The fingerprint limit is
// lifted so that the same call can repeat. Every call after the first has
// the same bytes, so the arg policy's cache of passed arguments serves it,
// and the same call id and attempt, so the in-memory evidence ledger keeps
// the first record (BenchmarkChainDistinct is the case without repeats).
// read-uncached turns the arg policy's cache off.
func BenchmarkDefaultChain(b *testing.B) {
	read, write := benchTools(b)
	readCall := invoker.Call{ID: "c1", Name: read.Name, Args: benchArgs, Tool: read, Run: "run-1", Round: 1}

	b.Run("invoker-only", func(b *testing.B) {
		benchRun(b, invoker.New(nil), readCall)
	})
	b.Run("read", func(b *testing.B) {
		opts := guard.Options{FingerprintLimit: math.MaxInt}
		benchRun(b, invoker.Chain(invoker.New(nil), guard.Default(&opts)...), readCall)
	})
	b.Run("read-uncached", func(b *testing.B) {
		opts := guard.Options{FingerprintLimit: math.MaxInt, ArgCache: -1}
		benchRun(b, invoker.Chain(invoker.New(nil), guard.Default(&opts)...), readCall)
	})
	b.Run("write-reused", func(b *testing.B) {
		opts := guard.Options{FingerprintLimit: math.MaxInt, RequireApproval: func(invoker.Call) bool { return false }}
		h := invoker.Chain(invoker.New(nil), guard.Default(&opts)...)
		call := invoker.Call{ID: "c1", Name: write.Name, Args: benchArgs, Tool: write, Run: "run-1", Round: 1}
		if _, err := h(context.Background(), call); err != nil {
			b.Fatal(err)
		}
		benchRun(b, h, call)
	})
}

// callsPerRun is how many calls the run-cycling benchmarks put into one
// run before they move to a new one and forget the old: a node run makes
// tens of calls, and a long-running service forgets a run once it is over.
const callsPerRun = 100

// cycler hands out calls with a distinct call id each, in runs of
// callsPerRun calls; the ids and run names are made before the timer
// starts, so the loop itself allocates nothing. args, when set, rewrites
// the arguments of each call in place (the chain keeps no reference to
// them).
type cycler struct {
	ledger *evidence.Memory
	ids    [callsPerRun]string
	runs   [64]string
	n      int
	args   func(buf []byte, n int) []byte
	buf    []byte
}

func newCycler(ledger *evidence.Memory, args func(buf []byte, n int) []byte) *cycler {
	c := &cycler{ledger: ledger, args: args}
	for i := range c.ids {
		c.ids[i] = "call-" + strconv.Itoa(i)
	}
	for i := range c.runs {
		c.runs[i] = "run-" + strconv.Itoa(i)
	}
	return c
}

// next returns call with the next id, run and arguments.
func (c *cycler) next(call invoker.Call) invoker.Call {
	i := c.n % callsPerRun
	r := (c.n / callsPerRun) % len(c.runs)
	if i == 0 && c.ledger != nil && c.n > 0 {
		c.ledger.Forget(c.runs[(r+len(c.runs)-1)%len(c.runs)])
	}
	c.n++
	call.ID, call.Run, call.Round = c.ids[i], c.runs[r], i+1
	if c.args != nil {
		c.buf = c.args(c.buf[:0], c.n)
		call.Args = c.buf
	}
	return call
}

func benchCycle(b *testing.B, h invoker.Handler, c *cycler, call invoker.Call) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		obs, err := h(ctx, c.next(call))
		if err != nil {
			b.Fatal(err)
		}
		if !obs.Outcome().Advances() {
			b.Fatalf("h(call %d) = %s; want SUCCESS", c.n, obs.Message())
		}
	}
}

// BenchmarkChainNoop is the literal case: a true no-op read tool
// (schema {"type":"object"}, no arguments, returns nothing) through the
// whole default chain, against the bare default invoker. Every call has its
// own call id; runs hold callsPerRun calls. The arguments are the same
// bytes ({}) every time, as a model sends them for a tool without
// parameters, so the arg policy's cache of passed arguments serves every
// call after the first: that is the honest figure for this tool;
// chain-uncached turns the cache off to show what it saves.
func BenchmarkChainNoop(b *testing.B) {
	noop := &tool.Tool{
		Name:        "noop",
		Description: "does nothing",
		InputSchema: &jsonschema.Schema{Type: "object"},
		Effect:      tool.Read,
		Func:        func(context.Context, tool.Request) (any, error) { return nil, nil },
	}
	if _, err := tool.NewCatalog(noop); err != nil {
		b.Fatal(err)
	}
	call := invoker.Call{Name: noop.Name, Args: json.RawMessage(`{}`), Tool: noop}
	b.Run("invoker-only", func(b *testing.B) {
		benchCycle(b, invoker.New(nil), newCycler(nil, nil), call)
	})
	for _, c := range []struct {
		name  string
		cache int
	}{{"chain", 0}, {"chain-uncached", -1}} {
		b.Run(c.name, func(b *testing.B) {
			ledger := evidence.NewMemory()
			opts := guard.Options{Ledger: ledger, FingerprintLimit: math.MaxInt, ArgCache: c.cache}
			benchCycle(b, invoker.Chain(invoker.New(nil), guard.Default(&opts)...), newCycler(ledger, nil), call)
		})
	}
}

// distinctArgs writes the arguments of call n: the same two-argument
// object as benchArgs with the page set to n, so that no two calls share
// their bytes or their fingerprint.
func distinctArgs(buf []byte, n int) []byte {
	buf = append(buf, `{"query":"blog sites in eu-west","page":`...)
	buf = strconv.AppendInt(buf, int64(n), 10)
	return append(buf, '}')
}

// BenchmarkChainDistinct is the realistic read tool of BenchmarkDefaultChain
// called with distinct arguments every time (the page is a counter) and a
// distinct call id, in runs of callsPerRun calls: the fingerprint guard
// never trips, no cache of validated arguments ever hits, and the evidence
// ledger indexes every result.
func BenchmarkChainDistinct(b *testing.B) {
	read, _ := benchTools(b)
	call := invoker.Call{Name: read.Name, Tool: read}
	b.Run("invoker-only", func(b *testing.B) {
		benchCycle(b, invoker.New(nil), newCycler(nil, distinctArgs), call)
	})
	b.Run("chain", func(b *testing.B) {
		ledger := evidence.NewMemory()
		opts := guard.Options{Ledger: ledger}
		benchCycle(b, invoker.Chain(invoker.New(nil), guard.Default(&opts)...), newCycler(ledger, distinctArgs), call)
	})
}

// BenchmarkGuard measures each guard of the default chain alone around a
// handler that does nothing, to show where the chain's time goes.
func BenchmarkGuard(b *testing.B) {
	read, _ := benchTools(b)
	call := invoker.Call{ID: "c1", Name: read.Name, Args: benchArgs, Tool: read, Run: "run-1", Round: 1}
	ok := observation.Success("ok", "ok")
	noop := func(context.Context, invoker.Call) (observation.Observation, error) { return ok, nil }
	ledger := evidence.NewMemory()
	guards := []struct {
		name string
		ic   invoker.Interceptor
	}{
		{"ArgPolicy", guard.ArgPolicy(guard.ArgPolicyOptions{})},
		{"ArgPolicy-uncached", guard.ArgPolicy(guard.ArgPolicyOptions{Cache: -1})},
		{"ParamContract", guard.ParamContract(guard.ParamContractOptions{Ledger: ledger})},
		{"Fingerprint", guard.Fingerprint(guard.FingerprintOptions{Ledger: ledger})},
		{"WriteGate", guard.WriteGate(guard.WriteGateOptions{})},
		{"Retry", guard.Retry(guard.RetryOptions{})},
		{"Evidence", guard.Evidence(guard.EvidenceOptions{Ledger: evidence.NewMemory()})},
		{"ResponseContract", guard.ResponseContract(guard.ResponseContractOptions{})},
	}
	for _, g := range guards {
		b.Run(g.name, func(b *testing.B) {
			benchRun(b, invoker.Chain(noop, g.ic), call)
		})
	}
}
