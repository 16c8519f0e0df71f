package guard_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

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

// BenchmarkDefaultChain measures a call through the whole default chain
// around a no-op tool, against the bare default invoker. The fingerprint
// limit is lifted so that the same call can repeat; the evidence ledger is
// the in-memory one and grows with every iteration, as in a long run.
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
