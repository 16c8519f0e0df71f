package otel_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	rgotel "github.com/reactguard/reactguard/adapters/otel"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// A full approval run: the run suspends for approval, a new loop with a new
// observer resumes the snapshot, the write runs and the node finishes. The
// spans form one tree per call of Run and Resume, the second linked to the
// first; the metrics count what happened.
func TestApprovalRunSpansAndMetrics(t *testing.T) {
	tel := newTelemetry(t)
	s := newSite(t)
	shared := stores()
	first := openAI(
		reacttest.Calls(reacttest.Call("c1", "get_stats", `{}`), reacttest.Call("c2", "list_sites", `{}`)), // FAILED, skipped
		reacttest.Calls(reacttest.Call("c3", "nope", `{}`)),                                                // REJECTED
		reacttest.Calls(reacttest.Call("c4", "list_sites", `{}`)),                                          // SUCCESS
		reacttest.Calls(reacttest.Call("c5", "create_site", `{"name":"shop"}`)),                            // DEFERRED
		reacttest.Calls(reacttest.Approval("c6", "create_site", "the user asked for a shop")),              // suspends
	)
	res, err := s.loop(t, first, react.Observers(react.DiscardObserver, tel.observer(t, nil)), shared).
		Run(context.Background(), siteNode(), "create a shop site")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)

	// The first call: one invoke_agent span, every chat and execute_tool
	// span its child.
	runs := tel.ended("invoke_agent sites")
	require.Len(t, runs, 1)
	run1 := runs[0]
	assert.False(t, run1.Parent().IsValid(), "the run span is a root here (ctx had no span)")
	assert.Equal(t, trace.SpanKindInternal, run1.SpanKind())
	assert.Equal(t, codes.Unset, run1.Status().Code, "a suspension is not an error")
	assert.Equal(t, map[string]any{
		"gen_ai.operation.name":      "invoke_agent",
		"gen_ai.system":              "openai",
		"gen_ai.agent.name":          "sites",
		"gen_ai.conversation.id":     "run-1",
		"gen_ai.request.model":       "gpt-4.1",
		"reactguard.run.resumed":     false,
		"reactguard.run.status":      "suspended",
		"reactguard.run.rounds":      int64(5),
		"reactguard.run.stalls":      int64(0),
		"reactguard.run.outputs":     int64(0),
		"reactguard.run.goal":        "none",
		"reactguard.suspension.kind": "approval",
	}, attrs(run1))
	var events []string
	for _, e := range run1.Events() {
		events = append(events, e.Name)
	}
	assert.Equal(t, []string{"reactguard.stall", "reactguard.stall", "reactguard.stall_reset"}, events)

	children := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range tel.spans.Ended() {
		if sp.SpanContext().SpanID() == run1.SpanContext().SpanID() {
			continue
		}
		assert.Equal(t, run1.SpanContext().SpanID(), sp.Parent().SpanID(), "%s is a child of the run span", sp.Name())
		assert.Equal(t, run1.SpanContext().TraceID(), sp.SpanContext().TraceID())
		children[sp.Name()] = append(children[sp.Name()], sp)
	}
	assert.Len(t, children["chat gpt-4.1"], 5)
	assert.Equal(t, []string{
		"chat gpt-4.1", "chat gpt-4.1", "chat gpt-4.1", "chat gpt-4.1", "chat gpt-4.1",
		"execute_tool builtin_node_approval", "execute_tool create_site", "execute_tool get_stats",
		"execute_tool list_sites", "execute_tool nope",
	}, sortedNames(tel.spans.Ended()[:len(tel.spans.Ended())-1]), "the skipped c2 never ran: no span")

	chat := children["chat gpt-4.1"][0]
	assert.Equal(t, trace.SpanKindClient, chat.SpanKind())
	assert.Equal(t, map[string]any{
		"gen_ai.operation.name":          "chat",
		"gen_ai.system":                  "openai",
		"gen_ai.request.model":           "gpt-4.1",
		"gen_ai.response.model":          "gpt-4.1-2025-04-14",
		"gen_ai.response.id":             "chatcmpl-1",
		"gen_ai.response.finish_reasons": []string{"tool_calls"},
		"gen_ai.usage.input_tokens":      int64(100),
		"gen_ai.usage.output_tokens":     int64(10),
		"gen_ai.conversation.id":         "run-1",
		"reactguard.round":               int64(1),
	}, attrs(chat), "v1.36.0: no cache attributes, no content")

	failed := children["execute_tool get_stats"][0]
	assert.Equal(t, codes.Error, failed.Status().Code, "FAILED is an error")
	assert.Equal(t, map[string]any{
		"gen_ai.operation.name":        "execute_tool",
		"gen_ai.tool.name":             "get_stats",
		"gen_ai.tool.description":      "fake tool get_stats",
		"gen_ai.tool.call.id":          "c1",
		"gen_ai.tool.type":             "function",
		"reactguard.tool.builtin":      false,
		"reactguard.round":             int64(1),
		"reactguard.tool.outcome":      "FAILED",
		"reactguard.tool.code":         "TOOL_UNAVAILABLE",
		"reactguard.tool.layer":        "execution",
		"reactguard.tool.status_class": "temporarily_unavailable",
		"reactguard.tool.call_status":  "valid",
		"reactguard.tool.first_status": "temporarily_unavailable",
		"reactguard.tool.attempts":     int64(1),
		"error.type":                   "TOOL_UNAVAILABLE",
	}, attrs(failed))

	rejected := children["execute_tool nope"][0]
	assert.Equal(t, codes.Unset, rejected.Status().Code, "REJECTED is a verdict, not an error")
	assert.Equal(t, "CATALOG_DENIED", attrs(rejected)["reactguard.tool.code"])
	assert.Equal(t, "call", attrs(rejected)["reactguard.tool.layer"])
	assert.Equal(t, "unknown_tool", attrs(rejected)["reactguard.tool.call_status"])
	assert.Equal(t, "none", attrs(rejected)["reactguard.tool.status_class"], "nothing executed")
	assert.NotContains(t, attrs(rejected), "reactguard.tool.attempts")
	assert.NotContains(t, attrs(rejected), "error.type")

	deferred := children["execute_tool create_site"][0]
	assert.Equal(t, codes.Unset, deferred.Status().Code, "DEFERRED is a verdict, not an error")
	assert.Equal(t, "DEFERRED", attrs(deferred)["reactguard.tool.outcome"])
	assert.Equal(t, "APPROVAL_REQUIRED", attrs(deferred)["reactguard.tool.code"])
	assert.Equal(t, "deferred", attrs(deferred)["reactguard.tool.call_status"])

	approval := children["execute_tool builtin_node_approval"][0]
	assert.Equal(t, "approval", attrs(approval)["reactguard.suspension.kind"])
	assert.Equal(t, true, attrs(approval)["reactguard.tool.builtin"])
	assert.Equal(t, "SUCCESS", attrs(approval)["reactguard.tool.outcome"])

	// The second call, in a new loop with a new observer, as another
	// process would: its span links to the first run's span.
	tel.spans.Reset()
	second := openAI(
		reacttest.Calls(reacttest.Call("c7", "create_site", `{"name":"shop"}`)),
		reacttest.Calls(reacttest.Finish("c8", "created the shop")),
	)
	res, err = s.loop(t, second, tel.observer(t, nil), shared).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket).DecidedBy("alice@acme"))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 1, s.create.Executions())

	runs = tel.ended("invoke_agent sites")
	require.Len(t, runs, 1)
	run2 := runs[0]
	require.Len(t, run2.Links(), 1, "the resumed run links to the run it resumes")
	assert.Equal(t, run1.SpanContext().TraceID(), run2.Links()[0].SpanContext.TraceID())
	assert.Equal(t, run1.SpanContext().SpanID(), run2.Links()[0].SpanContext.SpanID())
	assert.Equal(t, true, attrs(run2)["reactguard.run.resumed"])
	assert.Equal(t, "approve", attrs(run2)["reactguard.decision"])
	assert.Equal(t, "alice@acme", attrs(run2)["reactguard.decision.by"], "the resume's span carries the decider")
	assert.Equal(t, "finished", attrs(run2)["reactguard.run.status"])
	assert.Equal(t, "unverified", attrs(run2)["reactguard.run.goal"], "no required output: the model's word only")
	assert.Equal(t, int64(7), attrs(run2)["reactguard.run.rounds"])
	assert.Equal(t, "run-1", attrs(run2)["gen_ai.conversation.id"], "the same conversation")
	assert.Equal(t, []string{"chat gpt-4.1", "chat gpt-4.1", "execute_tool builtin_node_finish", "execute_tool create_site", "invoke_agent sites"},
		sortedNames(tel.spans.Ended()), "the decision answers the approval call: no second span for it")
	for _, sp := range tel.spans.Ended() {
		if sp.Name() != "invoke_agent sites" {
			assert.Equal(t, run2.SpanContext().SpanID(), sp.Parent().SpanID())
		}
	}
	assert.Equal(t, len(tel.spans.Started()), len(tel.spans.Ended()), "every span ended")

	// The metrics of both calls.
	ms := tel.metrics(t)
	dur := ms["gen_ai.client.operation.duration"]
	assert.Equal(t, "s", dur.Unit)
	h, ok := dur.Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	require.Len(t, h.DataPoints, 1)
	assert.Equal(t, uint64(7), h.DataPoints[0].Count, "one per model call")
	assert.Equal(t, rgotel.DurationBuckets, h.DataPoints[0].Bounds)
	assert.InDelta(t, 0.007, h.DataPoints[0].Sum, 1e-9, "1ms per call on the test clock")
	want := attribute.NewSet(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.system", "openai"),
		attribute.String("gen_ai.request.model", "gpt-4.1"), attribute.String("gen_ai.response.model", "gpt-4.1-2025-04-14"))
	assert.True(t, want.Equals(&h.DataPoints[0].Attributes), "attributes: %v", h.DataPoints[0].Attributes.ToSlice())

	usage := ms["gen_ai.client.token.usage"]
	assert.Equal(t, "{token}", usage.Unit)
	uh, ok := usage.Data.(metricdata.Histogram[int64])
	require.True(t, ok)
	byType := map[string]int64{}
	for _, dp := range uh.DataPoints {
		v, _ := dp.Attributes.Value("gen_ai.token.type")
		byType[v.AsString()] = dp.Sum
		assert.Equal(t, rgotel.TokenBuckets, dp.Bounds)
		assert.Equal(t, uint64(7), dp.Count)
	}
	assert.Equal(t, map[string]int64{"input": 700, "output": 70}, byType)

	assert.Equal(t, map[string]int64{
		"get_stats FAILED TOOL_UNAVAILABLE execution false": 1,
		"nope REJECTED CATALOG_DENIED call false":           1,
		"list_sites SUCCESS   false":                        1,
		"create_site DEFERRED APPROVAL_REQUIRED call false": 1,
		"create_site SUCCESS   false":                       1,
		"builtin_node_approval SUCCESS   true":              1,
		"builtin_node_finish SUCCESS   true":                1,
	}, counts(t, ms[rgotel.MetricToolCalls], "gen_ai.tool.name", rgotel.KeyOutcome, rgotel.KeyCode, rgotel.KeyLayer, rgotel.KeyBuiltin))
	assert.Equal(t, map[string]int64{"list_sites": 1}, counts(t, ms[rgotel.MetricToolSkipped], "gen_ai.tool.name"))
	assert.Equal(t, map[string]int64{"FAILED": 1, "REJECTED": 1}, counts(t, ms[rgotel.MetricStalls], rgotel.KeyStallReason))
	assert.Equal(t, map[string]int64{"approval": 1}, counts(t, ms[rgotel.MetricSuspensions], rgotel.KeySuspension))
	assert.Equal(t, map[string]int64{"suspended false none": 1, "finished true unverified": 1},
		counts(t, ms[rgotel.MetricRuns], rgotel.KeyRunStatus, rgotel.KeyResumed, rgotel.KeyGoal))
	assert.Equal(t, map[string]int64{"valid ok evidence": 2, "valid temporarily_unavailable ": 1},
		counts(t, ms[rgotel.MetricToolAttempts], rgotel.KeyCallStatus, rgotel.KeyStatusClass, rgotel.KeyBusinessStatus),
		"executed attempts: list_sites, create_site (evidence), get_stats (failed, no business judgment)")
	assert.Equal(t, map[string]int64{"true": 7}, counts(t, ms[rgotel.MetricTurns], rgotel.KeyTurnCalls), "every turn called a tool")
	for name, m := range ms {
		assert.NotContains(t, fmt.Sprintf("%+v", m.Data), string(rgotel.KeyDecidedBy), "metric %s names the decider", name)
		assert.NotContains(t, fmt.Sprintf("%+v", m.Data), "alice@acme", "metric %s names the decider", name)
	}
}

// OTEL_SEMCONV_STABILITY_OPT_IN selects the conventions, as their
// transition plan asks; Options.Conventions overrides it.
func TestConventions(t *testing.T) {
	tests := []struct {
		name     string
		env      string
		conv     rgotel.Conventions
		want     rgotel.Conventions
		provider string
		reason   string
	}{
		{"default", "", 0, rgotel.Conventions1_36, "gen_ai.system", "without the opt-in: v1.36.0"},
		{"opt-in", "gen_ai_latest_experimental", 0, rgotel.ConventionsLatest, "gen_ai.provider.name", "the opt-in selects v1.41.0"},
		{"opt-in in a list", "http, gen_ai_latest_experimental ,database", 0, rgotel.ConventionsLatest, "gen_ai.provider.name", "a comma-separated list, spaces trimmed"},
		{"other categories", "http,database/dup", 0, rgotel.Conventions1_36, "gen_ai.system", "other categories leave GenAI alone"},
		{"near miss", "gen_ai_latest", 0, rgotel.Conventions1_36, "gen_ai.system", "only the exact value opts in"},
		{"code wins", "gen_ai_latest_experimental", rgotel.Conventions1_36, rgotel.Conventions1_36, "gen_ai.system", "Options.Conventions overrides the environment"},
		{"code latest", "", rgotel.ConventionsLatest, rgotel.ConventionsLatest, "gen_ai.provider.name", "Options.Conventions selects the latest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel := newTelemetry(t)
			o := tel.observer(t, &rgotel.Options{Conventions: tt.conv, Getenv: func(k string) string {
				if k == rgotel.OptInEnv {
					return tt.env
				}
				return ""
			}})
			assert.Equal(t, tt.want, o.Conventions(), tt.reason)
			s := newSite(t)
			_, err := s.loop(t, openAI(reacttest.Calls(reacttest.Finish("f", "done"))), o, stores()).
				Run(context.Background(), siteNode(), "hi")
			require.NoError(t, err)
			chat := tel.ended("chat gpt-4.1")[0]
			a := attrs(chat)
			assert.Equal(t, "openai", a[tt.provider], tt.reason)
			other := map[string]string{"gen_ai.system": "gen_ai.provider.name", "gen_ai.provider.name": "gen_ai.system"}[tt.provider]
			assert.NotContains(t, a, other, "one provider attribute, never both")
			if tt.want == rgotel.ConventionsLatest {
				assert.Equal(t, int64(64), a["gen_ai.usage.cache_read.input_tokens"])
			} else {
				assert.NotContains(t, a, "gen_ai.usage.cache_read.input_tokens")
			}
			assert.Equal(t, "https://opentelemetry.io/schemas/"+strings.TrimPrefix(tt.want.String(), "v"), chat.InstrumentationScope().SchemaURL)
		})
	}
	_, err := rgotel.New(nil, nil, &rgotel.Options{Conventions: 9})
	assert.Error(t, err, "an invalid Conventions is refused")
	assert.Equal(t, "conventions(9)", rgotel.Conventions(9).String())
	assert.False(t, rgotel.Conventions(9).IsValid())
	assert.Equal(t, "from_env", rgotel.ConventionsFromEnv.String())
}

// A model that does not name itself is reported as _OTHER, with span
// names without a model.
func TestUndescribedModel(t *testing.T) {
	tel := newTelemetry(t)
	s := newSite(t)
	_, err := s.loop(t, reacttest.Script(reacttest.Calls(reacttest.Finish("f", "done"))), tel.observer(t, nil), stores()).
		Run(context.Background(), react.Node{}, "hi")
	require.NoError(t, err)
	chat := tel.ended("chat")
	require.Len(t, chat, 1)
	assert.Equal(t, "_OTHER", attrs(chat[0])["gen_ai.system"])
	assert.NotContains(t, attrs(chat[0]), "gen_ai.request.model")
	assert.NotContains(t, attrs(chat[0]), "gen_ai.usage.input_tokens", "no usage reported: none recorded")
	run := tel.ended("invoke_agent")
	require.Len(t, run, 1)
	assert.NotContains(t, attrs(run[0]), "gen_ai.agent.name", "a node without a name")
	ms := tel.metrics(t)
	_, ok := ms["gen_ai.client.token.usage"]
	assert.False(t, ok, "no usage reported: no token metric (the conventions forbid guessing)")
}

// No span is left unended: after a cancellation, a model error, a tool
// that panics (the default invoker recovers it: FAILED) and a custom
// handler that panics (the loop lets the panic go on).
func TestNoSpanLeftUnended(t *testing.T) {
	tests := []struct {
		name    string
		model   func(cancel context.CancelFunc) react.Model
		handler bool
		wantErr string
		check   func(t *testing.T, tel *telemetry)
	}{
		{
			name: "model error",
			model: func(context.CancelFunc) react.Model {
				return openAI() // the script is exhausted at once
			},
			wantErr: "_OTHER",
			check: func(t *testing.T, tel *telemetry) {
				chat := tel.ended("chat gpt-4.1")[0]
				assert.Equal(t, codes.Error, chat.Status().Code)
				assert.Equal(t, "_OTHER", attrs(chat)["error.type"])
				run := tel.ended("invoke_agent sites")[0]
				assert.Equal(t, "interrupted", attrs(run)["reactguard.run.status"])
			},
		},
		{
			name: "cancellation inside a tool",
			model: func(context.CancelFunc) react.Model {
				return openAI(reacttest.Calls(reacttest.Call("c1", "slow", `{}`)))
			},
			wantErr: "canceled",
			check: func(t *testing.T, tel *telemetry) {
				slow := tel.ended("execute_tool slow")[0]
				assert.Equal(t, codes.Error, slow.Status().Code)
				assert.Equal(t, "canceled", attrs(slow)["error.type"], "the interrupted call's span ends with the cancellation")
				assert.NotContains(t, attrs(slow), "reactguard.tool.outcome", "no verdict")
			},
		},
		{
			name: "cancellation before a model call",
			model: func(cancel context.CancelFunc) react.Model {
				return model{Model: reacttest.Steps(func(react.Request) (react.Response, error) {
					cancel()
					return reacttest.Calls(reacttest.Call("c1", "list_sites", `{}`)), nil
				}), info: react.ModelInfo{Provider: "openai", Name: "gpt-4.1"}}
			},
			wantErr: "canceled",
		},
		{
			name: "tool panic",
			model: func(context.CancelFunc) react.Model {
				return openAI(reacttest.Calls(reacttest.Call("c1", "boom", `{}`)), reacttest.Calls(reacttest.FailNode("f", "broken")))
			},
			check: func(t *testing.T, tel *telemetry) {
				boom := tel.ended("execute_tool boom")[0]
				assert.Equal(t, codes.Error, boom.Status().Code)
				assert.Equal(t, "TOOL_ERROR", attrs(boom)["error.type"])
				run := tel.ended("invoke_agent sites")[0]
				assert.Equal(t, codes.Error, run.Status().Code, "a failed run is an error")
				assert.Equal(t, "model", attrs(run)["error.type"])
				assert.Equal(t, "model", attrs(run)["reactguard.run.failure"])
			},
		},
		{
			name: "handler panic",
			model: func(context.CancelFunc) react.Model {
				return openAI(reacttest.Calls(reacttest.Call("c1", "list_sites", `{}`)))
			},
			handler: true,
			wantErr: "panic",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel := newTelemetry(t)
			s := newSite(t)
			boom := reacttest.Panic("boom", "tool bug")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			slow := reacttest.Respond("slow", func(ctx context.Context, _ tool.Request) (any, error) {
				cancel()
				<-ctx.Done()
				return nil, ctx.Err()
			})
			cat := s.catalog
			require.NoError(t, cat.Add(boom.Tool))
			require.NoError(t, cat.Add(slow.Tool))
			cfg := react.Config{Model: tt.model(cancel), Tools: cat, Observer: tel.observer(t, nil), Now: (&clock{}).now,
				Logger: slog.New(slog.DiscardHandler)} // the invoker logs the panic's stack
			if tt.handler {
				cfg.Handler = func(context.Context, invoker.Call) (observation.Observation, error) { panic("handler bug") }
			}
			l, err := react.New(cfg)
			require.NoError(t, err)
			node := siteNode()
			node.Tools = append(node.Tools, "boom", "slow")
			if tt.handler {
				assert.PanicsWithValue(t, "handler bug", func() { _, _ = l.Run(ctx, node, "hi") })
			} else {
				_, _ = l.Run(ctx, node, "hi")
			}
			assert.Equal(t, len(tel.spans.Started()), len(tel.spans.Ended()), "every started span ended")
			assert.NotEmpty(t, tel.spans.Ended())
			if tt.wantErr != "" {
				run := tel.ended("invoke_agent sites")[0]
				assert.Equal(t, codes.Error, run.Status().Code)
				assert.Equal(t, tt.wantErr, attrs(run)["error.type"])
			}
			if tt.check != nil {
				tt.check(t, tel)
			}
		})
	}
}

// Message contents are recorded only when the host opts in.
func TestContentCapture(t *testing.T) {
	for _, capture := range []bool{false, true} {
		tel := newTelemetry(t)
		s := newSite(t)
		m := openAI(
			reacttest.Turn("Looking.", reacttest.Call("c1", "list_sites", `{"page":1}`)),
			reacttest.Calls(reacttest.Call("c2", "get_stats", `{`)),
			reacttest.Calls(reacttest.Finish("f", "done")),
		)
		_, err := s.loop(t, m, tel.observer(t, &rgotel.Options{CaptureContent: capture}), stores()).
			Run(context.Background(), siteNode(), "my secret address is 1 Main St")
		require.NoError(t, err)
		var all []string
		for _, sp := range tel.spans.Ended() {
			for _, kv := range sp.Attributes() {
				all = append(all, kv.Value.String())
			}
		}
		joined := strings.Join(all, "\n")
		if !capture {
			assert.NotContains(t, joined, "1 Main St", "no content without opt-in")
			for _, sp := range tel.spans.Ended() {
				for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
					assert.NotContains(t, attrs(sp), k)
				}
			}
			continue
		}
		chat := tel.ended("chat gpt-4.1")
		require.Len(t, chat, 3)
		in := attrs(chat[1])["gen_ai.input.messages"].(string)
		assert.Contains(t, in, `{"role":"user","parts":[{"type":"text","content":"my secret address is 1 Main St"}]}`)
		assert.Contains(t, in, `{"role":"assistant","parts":[{"type":"text","content":"Looking."},{"type":"tool_call","id":"c1","name":"list_sites","arguments":{"page":1}}]}`)
		assert.Contains(t, in, `{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"list_sites succeeded\n[{\"id\":7,\"name\":\"blog\"}]"}]}`)
		assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"tool_call","id":"c2","name":"get_stats","arguments":"{"}],"finish_reason":"tool_calls"}]`,
			attrs(chat[1])["gen_ai.output.messages"].(string), "arguments that are not JSON are kept as text")
		list := attrs(tel.ended("execute_tool list_sites")[0])
		assert.Equal(t, `{"page":1}`, list["gen_ai.tool.call.arguments"])
		assert.Equal(t, `[{"id":7,"name":"blog"}]`, list["gen_ai.tool.call.result"])
		stats := attrs(tel.ended("execute_tool get_stats")[0])
		assert.NotContains(t, stats, "gen_ai.tool.call.result", "a result only for a call that succeeded")
	}
}

// Parallel reads get one span each, children of the run span.
func TestParallelReadsSpans(t *testing.T) {
	tel := newTelemetry(t)
	s := newSite(t)
	m := openAI(
		reacttest.Calls(reacttest.Call("a", "list_sites", `{}`), reacttest.Call("b", "list_sites", `{"p":2}`), reacttest.Call("c", "list_sites", `{"p":3}`)),
		reacttest.Calls(reacttest.Finish("f", "done")),
	)
	node := siteNode()
	node.ParallelReads = true
	_, err := s.loop(t, m, tel.observer(t, nil), stores()).Run(context.Background(), node, "hi")
	require.NoError(t, err)
	run := tel.ended("invoke_agent sites")[0]
	reads := tel.ended("execute_tool list_sites")
	require.Len(t, reads, 3)
	ids := map[string]bool{}
	for _, r := range reads {
		assert.Equal(t, run.SpanContext().SpanID(), r.Parent().SpanID())
		ids[attrs(r)["gen_ai.tool.call.id"].(string)] = true
	}
	assert.Equal(t, map[string]bool{"a": true, "b": true, "c": true}, ids)
}

// The run span is a child of the span in the context given to Run.
func TestRunSpanParent(t *testing.T) {
	tel := newTelemetry(t)
	s := newSite(t)
	ctx, parent := tel.tp.Tracer("host").Start(context.Background(), "POST /chat")
	_, err := s.loop(t, openAI(reacttest.Calls(reacttest.Finish("f", "done"))), tel.observer(t, nil), stores()).
		Run(ctx, siteNode(), "hi")
	parent.End()
	require.NoError(t, err)
	run := tel.ended("invoke_agent sites")[0]
	assert.Equal(t, parent.SpanContext().SpanID(), run.Parent().SpanID())
}

// With nil providers the observer uses the global ones.
func TestNilProvidersUseGlobals(t *testing.T) {
	tel := newTelemetry(t)
	restore := setGlobals(tel)
	defer restore()
	o, err := rgotel.New(nil, nil, &rgotel.Options{Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	s := newSite(t)
	_, err = s.loop(t, openAI(reacttest.Calls(reacttest.Finish("f", "done"))), o, stores()).Run(context.Background(), siteNode(), "hi")
	require.NoError(t, err)
	assert.Len(t, tel.ended("invoke_agent sites"), 1)
	assert.Contains(t, tel.metrics(t), "gen_ai.client.operation.duration")
}

// A snapshot suspended without a valid span context (a no-op tracer)
// carries nothing, and its resumed run has no link.
func TestNoLinkWithoutSpanContext(t *testing.T) {
	s := newSite(t)
	shared := stores()
	noop, err := rgotel.New(nooptrace.NewTracerProvider(), nil, nil)
	require.NoError(t, err)
	res, err := s.loop(t, openAI(reacttest.Calls(reacttest.FollowUp("q", "Which space?"))), noop, shared).Run(context.Background(), siteNode(), "hi")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	assert.NotContains(t, string(res.Snapshot), "traceparent")
	tel := newTelemetry(t)
	_, err = s.loop(t, openAI(reacttest.Calls(reacttest.Finish("f", "done"))), tel.observer(t, nil), shared).
		Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "the blue one"))
	require.NoError(t, err)
	assert.Empty(t, tel.ended("invoke_agent sites")[0].Links())
}

// A resume whose decision cannot be applied (the approvals store does not
// hold the gated call) ends its span as an error; the run still waits.
func TestUnappliedDecisionEndsSpan(t *testing.T) {
	s := newSite(t)
	tel := newTelemetry(t)
	res, err := s.loop(t, openAI(
		reacttest.Calls(reacttest.Call("w", "create_site", `{}`)),
		reacttest.Calls(reacttest.Approval("q", "create_site", "asked")),
	), tel.observer(t, nil), stores()).Run(context.Background(), siteNode(), "hi")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	_, err = s.loop(t, openAI(), tel.observer(t, nil), stores()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, guard.ErrNotPending)
	runs := tel.ended("invoke_agent sites")
	require.Len(t, runs, 2)
	assert.Equal(t, codes.Error, runs[1].Status().Code)
	assert.Equal(t, "approval_not_pending", attrs(runs[1])["error.type"])
	assert.Equal(t, "suspended", attrs(runs[1])["reactguard.run.status"], "the run still waits for its answer")
	require.Len(t, runs[1].Links(), 1)
	assert.Equal(t, runs[0].SpanContext().SpanID(), runs[1].Links()[0].SpanContext.SpanID())
	assert.Equal(t, len(tel.spans.Started()), len(tel.spans.Ended()))

	// A decision that does not fit is refused before anything starts.
	_, err = s.loop(t, openAI(), tel.observer(t, nil), stores()).Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "yes"))
	require.ErrorIs(t, err, react.ErrDecision)
	assert.Len(t, tel.ended("invoke_agent sites"), 2, "no span for a refused decision")
}

// A call retried after a rate limit: its span and the metrics keep the
// first attempt's failure next to the final success; an empty result is
// executed but insufficient; the host's task verdict is counted.
func TestRetriedAndEmptyCalls(t *testing.T) {
	tel := newTelemetry(t)
	n := 0
	quote := reacttest.Respond("quote", func(context.Context, tool.Request) (any, error) {
		if n++; n == 1 {
			return nil, tool.RateLimited("429")
		}
		return map[string]float64{"price": 41.27}, nil
	})
	quote.Tool.Retry = &tool.RetryPolicy{Attempts: 3}
	search := reacttest.Empty("search", tool.EmptyAllowed)
	cat := tool.MustCatalog(quote.Tool, search.Tool)
	g := stores()
	g.Retry.Sleep = func(context.Context, time.Duration) error { return nil }
	o := tel.observer(t, nil)
	l, err := react.New(react.Config{
		Model: openAI(reacttest.Calls(reacttest.Call("q", "quote", `{}`)), reacttest.Calls(reacttest.Call("s", "search", `{}`)),
			reacttest.Calls(reacttest.Finish("f", "done"))),
		Tools: cat, Guards: g, Observer: o, Now: (&clock{}).now,
	})
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{Name: "prices", Tools: []string{"quote", "search"}}, "price of ACME?")
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	o.RecordTask(context.Background(), true)
	o.RecordTask(context.Background(), false)

	q := attrs(tel.ended("execute_tool quote")[0])
	assert.Equal(t, int64(2), q["reactguard.tool.attempts"])
	assert.Equal(t, "TOOL_RATE_LIMITED", q["reactguard.tool.first_code"])
	assert.Equal(t, "temporarily_unavailable", q["reactguard.tool.first_status"])
	assert.Equal(t, "ok", q["reactguard.tool.status_class"])
	assert.Equal(t, "SUCCESS", q["reactguard.tool.outcome"])
	s := attrs(tel.ended("execute_tool search")[0])
	assert.Equal(t, "empty", s["reactguard.tool.status_class"])
	assert.Equal(t, "insufficient", s["reactguard.tool.business_status"], "judged without call order: on the span too")

	ms := tel.metrics(t)
	assert.Equal(t, map[string]int64{"quote temporarily_unavailable ok evidence": 2, "search empty empty insufficient": 1},
		counts(t, ms[rgotel.MetricToolAttempts], "gen_ai.tool.name", rgotel.KeyFirstStatus, rgotel.KeyStatusClass, rgotel.KeyBusinessStatus),
		"two attempts of quote (first failed, final ok), one of search")
	assert.Equal(t, map[string]int64{"true": 1, "false": 1}, counts(t, ms[rgotel.MetricTasks], rgotel.KeyTaskPassed))
}

// An interrupted run carries its trace context too: the Resume that
// continues it after a model error links to it.
func TestInterruptedRunLinks(t *testing.T) {
	tel := newTelemetry(t)
	s := newSite(t)
	shared := stores()
	res, err := s.loop(t, openAI(reacttest.Calls(reacttest.Call("c1", "list_sites", `{}`))), tel.observer(t, nil), shared).
		Run(context.Background(), siteNode(), "hi") // the second model call fails: the script is exhausted
	require.Error(t, err)
	require.Equal(t, react.Interrupted, res.Status)
	_, err = s.loop(t, openAI(reacttest.Calls(reacttest.Finish("f", "done"))), tel.observer(t, nil), shared).
		Resume(context.Background(), res.Snapshot, react.Continue())
	require.NoError(t, err)
	runs := tel.ended("invoke_agent sites")
	require.Len(t, runs, 2)
	assert.Equal(t, "interrupted", attrs(runs[0])["reactguard.run.status"])
	assert.Equal(t, codes.Error, runs[0].Status().Code)
	require.Len(t, runs[1].Links(), 1)
	assert.Equal(t, runs[0].SpanContext().SpanID(), runs[1].Links()[0].SpanContext.SpanID())
	assert.Equal(t, int64(1), attrs(runs[1])["reactguard.run.rounds"].(int64)-1, "the resumed run goes on from round 1")
}
