package otel_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	rgotel "github.com/reactguard/reactguard/adapters/otel"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

func ExampleNew() {
	// A host's providers; here an in-memory recorder and a manual reader.
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()

	tel, err := rgotel.New(tp, mp, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	catalog := tool.MustCatalog(
		reacttest.Succeed("list_sites", []string{"blog"}).Tool,
		reacttest.Fail("get_stats", tool.KindUnavailable, "stats backend down").Tool,
	)
	loop, _ := react.New(react.Config{
		Model: reacttest.Script(
			reacttest.Calls(reacttest.Call("c1", "get_stats", `{}`)),
			reacttest.Calls(reacttest.Call("c2", "list_sites", `{}`)),
			reacttest.Calls(reacttest.Finish("c3", "one site")),
		),
		Tools:    catalog,
		Observer: react.Observers(react.DiscardObserver, tel), // with react.NewLogObserver(logger) in a service
	})
	res, _ := loop.Run(context.Background(), react.Node{Name: "sites", Tools: []string{"list_sites", "get_stats"}}, "list my sites")
	fmt.Println(res.Status)

	for _, s := range spans.Ended() {
		outcome := ""
		for _, kv := range s.Attributes() {
			if kv.Key == rgotel.KeyOutcome {
				outcome = kv.Value.AsString()
			}
		}
		fmt.Printf("%-32s %-7s %s\n", s.Name(), outcome, s.Status().Code)
	}
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == rgotel.MetricToolCalls {
			fmt.Println(m.Name, "data points:", len(m.Data.(metricdata.Sum[int64]).DataPoints))
		}
	}
	// Output:
	// finished
	// chat                                     Unset
	// execute_tool get_stats           FAILED  Error
	// chat                                     Unset
	// execute_tool list_sites          SUCCESS Unset
	// chat                                     Unset
	// execute_tool builtin_node_finish SUCCESS Unset
	// invoke_agent sites                       Unset
	// reactguard.tool.calls data points: 3
}
