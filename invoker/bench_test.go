package invoker_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/tool"
)

func noopTool() *tool.Tool {
	return fnTool("noop", func(context.Context, tool.Request) (any, error) { return nil, nil })
}

// BenchmarkInvoke measures the default invoker around a no-op tool.
func BenchmarkInvoke(b *testing.B) {
	ctx := context.Background()
	cases := []struct {
		name string
		tool *tool.Tool
		opts *invoker.Options
	}{
		{"success", noopTool(), nil},
		{"success_timeout", noopTool(), &invoker.Options{DefaultTimeout: time.Minute}},
		{"not_found", failing("nf", tool.NotFound("order A1")), nil},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			inv := invoker.New(tc.opts)
			c := invoker.Call{ID: "c1", Name: tc.tool.Name, Args: json.RawMessage(`{}`), Tool: tc.tool, Attempt: 1}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := inv(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChain measures what three pass-through interceptors add.
func BenchmarkChain(b *testing.B) {
	pass := func(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
		return next(ctx, call)
	}
	h := invoker.Chain(invoker.New(nil), pass, pass, pass)
	c := invoker.Call{ID: "c1", Name: "noop", Args: json.RawMessage(`{}`), Tool: noopTool(), Attempt: 1}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}
