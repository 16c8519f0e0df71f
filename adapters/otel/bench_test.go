package otel_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	rgotel "github.com/reactguard/reactguard/adapters/otel"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// dropSpans is a span processor that drops every ended span: the spans
// are sampled and record everything, but nothing is exported, so the
// benchmark measures the instrumentation and the SDK, not an exporter.
type dropSpans struct{}

func (dropSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (dropSpans) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (dropSpans) Shutdown(context.Context) error                  { return nil }
func (dropSpans) ForceFlush(context.Context) error                { return nil }

// BenchmarkTelemetry measures what the observer adds to a run: one round
// of a model turn with 1 or 8 read calls through the default guard chain
// (the node's round limit is 1, so each iteration is a whole run), with
//
//   - none: react.DiscardObserver, no telemetry (the baseline);
//   - noop: this observer on the no-op providers of the OpenTelemetry API
//     (what a service gets when telemetry is wired but not configured);
//   - recording: this observer on the SDK providers, every span sampled
//     and recorded (then dropped, no exporter) and every metric aggregated
//     by a manual reader.
//
// ns/call is the time of a run divided by its calls: the run's and the
// model call's spans are shared by the calls of the round.
func BenchmarkTelemetry(b *testing.B) {
	recordingTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(dropSpans{}), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	recordingMP := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = recordingTP.Shutdown(context.Background())
		_ = recordingMP.Shutdown(context.Background())
	})
	providers := []struct {
		name string
		tp   trace.TracerProvider
		mp   metric.MeterProvider
	}{
		{"none", nil, nil},
		{"noop", nooptrace.NewTracerProvider(), noopmetric.NewMeterProvider()},
		{"recording", recordingTP, recordingMP},
	}
	for _, n := range []int{1, 8} {
		calls := make([]react.ToolCall, n)
		for i := range calls {
			id := "c" + strconv.Itoa(i+1)
			calls[i] = reacttest.Call(id, "lookup", `{"q":"`+id+`"}`)
		}
		turn := reacttest.Calls(calls...)
		for _, p := range providers {
			b.Run("calls="+strconv.Itoa(n)+"/"+p.name, func(b *testing.B) {
				obs := react.DiscardObserver
				if p.tp != nil {
					o, err := rgotel.New(p.tp, p.mp, &rgotel.Options{Getenv: func(string) string { return "" }})
					require.NoError(b, err)
					obs = o
				}
				ledger := evidence.NewMemory()
				m := model{Model: reacttest.Func(func(react.Request) react.Response { return turn }),
					info: react.ModelInfo{Provider: "openai", Name: "gpt-4.1"}}
				l, err := react.New(react.Config{
					Model:    m,
					Tools:    tool.MustCatalog(reacttest.Succeed("lookup", map[string]any{"found": true}).Tool),
					Guards:   &guard.Options{Ledger: ledger, Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()},
					Observer: obs,
					Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
				})
				require.NoError(b, err)
				node := react.Node{Name: "bench", Tools: []string{"lookup"}, MaxRounds: 1}
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					res, err := l.Run(ctx, node, "look things up")
					if err != nil || res.Status != react.Failed {
						b.Fatalf("Run = %v, %v; want one round ending at the round limit", res.Status, err)
					}
					ledger.Forget(res.Run)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
			})
		}
	}
}
