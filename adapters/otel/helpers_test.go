package otel_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	rgotel "github.com/reactguard/reactguard/adapters/otel"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// telemetry is an SDK tracer provider recording every span and an SDK
// meter provider read by hand.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t testing.TB) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

// observer returns a new Observer on tel's providers.
func (tel *telemetry) observer(t testing.TB, opts *rgotel.Options) *rgotel.Observer {
	t.Helper()
	if opts == nil {
		opts = &rgotel.Options{}
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	o, err := rgotel.New(tel.tp, tel.mp, opts)
	require.NoError(t, err)
	return o
}

// metrics collects the metrics recorded so far, by name.
func (tel *telemetry) metrics(t testing.TB) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// ended returns the ended spans whose name is name.
func (tel *telemetry) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// attrs returns a span's attributes as a map of their emitted values.
func attrs(s sdktrace.ReadOnlySpan) map[string]any {
	out := map[string]any{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

// counts returns the sums of an int64 counter by the value of key.
func counts(t testing.TB, m metricdata.Metrics, keys ...attribute.Key) map[string]int64 {
	t.Helper()
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is an int64 sum", m.Name)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		label := ""
		for i, k := range keys {
			v, _ := dp.Attributes.Value(k)
			if i > 0 {
				label += " "
			}
			label += v.String()
		}
		out[label] += dp.Value
	}
	return out
}

// sortedNames returns the names of spans, sorted.
func sortedNames(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name()
	}
	sort.Strings(out)
	return out
}

// model is a scripted model that names itself as OpenAI's gpt-4.1 and
// reports usage on every turn.
type model struct {
	*reacttest.Model
	info react.ModelInfo
}

func (m model) Describe() react.ModelInfo { return m.info }

func (m model) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	r, err := m.Model.Generate(ctx, req)
	if err == nil {
		r.ID, r.Model, r.FinishReason = "chatcmpl-1", "gpt-4.1-2025-04-14", "tool_calls"
		r.Usage = &react.Usage{InputTokens: 100, OutputTokens: 10, CachedInputTokens: 64}
	}
	return r, err
}

func openAI(turns ...react.Response) model {
	return model{Model: reacttest.Script(turns...), info: react.ModelInfo{Provider: "openai", Name: "gpt-4.1"}}
}

// clock advances by one millisecond at every reading.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// site is the tools of the tests: list_sites (read), get_stats (read,
// unavailable), create_site (write).
type site struct {
	list, stats, create *reacttest.Fake
	catalog             *tool.Catalog
}

func newSite(t testing.TB) *site {
	t.Helper()
	s := &site{
		list:   reacttest.Succeed("list_sites", []any{map[string]any{"id": 7, "name": "blog"}}),
		stats:  reacttest.Fail("get_stats", tool.KindUnavailable, "stats backend down"),
		create: reacttest.Succeed("create_site", map[string]any{"id": 42}).Write(),
	}
	var err error
	s.catalog, err = tool.NewCatalog(s.list.Tool, s.stats.Tool, s.create.Tool)
	require.NoError(t, err)
	return s
}

func siteNode() react.Node {
	return react.Node{Name: "sites", Tools: []string{"list_sites", "get_stats", "create_site"}}
}

// loop returns a loop over s with m, observer o and the shared stores.
func (s *site) loop(t testing.TB, m react.Model, o react.Observer, stores *guard.Options) *react.Loop {
	t.Helper()
	l, err := react.New(react.Config{
		Model: m, Tools: s.catalog, Guards: stores, Observer: o,
		NewRunID: func(context.Context) string { return "run-1" }, Now: (&clock{}).now,
	})
	require.NoError(t, err)
	return l
}

// setGlobals makes tel's providers the global ones and returns the
// function that restores the previous ones.
func setGlobals(tel *telemetry) func() {
	tp, mp := gotel.GetTracerProvider(), gotel.GetMeterProvider()
	gotel.SetTracerProvider(tel.tp)
	gotel.SetMeterProvider(tel.mp)
	return func() {
		gotel.SetTracerProvider(tp)
		gotel.SetMeterProvider(mp)
	}
}

// stores returns in-memory stores to share between loops, as a service
// shares its database between processes.
func stores() *guard.Options {
	return &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
}
