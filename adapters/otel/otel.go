package otel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/reactguard/reactguard/adapters/otel"

// The explicit bucket boundaries the conventions give for their
// histograms: seconds for gen_ai.client.operation.duration, tokens for
// gen_ai.client.token.usage.
var (
	DurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	TokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// The names of our own metrics; see the package documentation.
const (
	MetricToolCalls    = "reactguard.tool.calls"
	MetricToolAttempts = "reactguard.tool.attempts"
	MetricTurns        = "reactguard.turns"
	MetricTasks        = "reactguard.tasks"
	MetricToolSkipped  = "reactguard.tool.skipped"
	MetricStalls       = "reactguard.stalls"
	MetricSuspensions  = "reactguard.suspensions"
	MetricRuns         = "reactguard.runs"
)

// Options configures [New]. The zero value (and nil) means defaults.
type Options struct {
	// Conventions selects the version of the GenAI conventions; 0 means
	// [ConventionsFromEnv].
	Conventions Conventions
	// CaptureContent records message contents on the spans: the messages
	// sent to the model and its answer on chat spans
	// (gen_ai.input.messages, gen_ai.output.messages), a tool call's
	// arguments on execute_tool spans (gen_ai.tool.call.arguments) and
	// the result of a call that succeeded (gen_ai.tool.call.result), in
	// the JSON forms of conventions v1.41.0 whichever Conventions is
	// selected, and texts that may quote the model or a tool (a FAILED
	// call's reason, the model's builtin_node_fail reason) as span status
	// descriptions, which are otherwise the code or failure kind alone.
	// Off by default, as the conventions recommend: contents may hold
	// personal data and are large.
	CaptureContent bool
	// MaxContentBytes bounds each captured content attribute (and a
	// captured status description): a longer value is cut (between UTF-8
	// sequences) to that many bytes, and the span gets a
	// reactguard.content.truncated event naming the attribute
	// ([KeyContentTruncated]) with its length and the bytes kept. 0 means
	// [DefaultMaxContentBytes]; a negative value means no bound.
	MaxContentBytes int
	// Getenv reads OTEL_SEMCONV_STABILITY_OPT_IN for ConventionsFromEnv;
	// nil means os.Getenv.
	Getenv func(string) string
}

// DefaultMaxContentBytes is the bound of a captured content attribute when
// Options.MaxContentBytes is 0.
const DefaultMaxContentBytes = 64 << 10

// Observer turns a loop's events into OpenTelemetry spans and metrics. It
// is a [react.Observer] (and a [react.EventFilter] and [react.Carrier]):
// pass it in react.Config.Observer, alone or with [react.Observers]. Build it with
// [New]; it is immutable and safe for concurrent use by any number of
// loops and runs.
type Observer struct {
	conv       Conventions
	capture    bool
	maxContent int // < 0: no bound
	tracer     trace.Tracer
	provider   attribute.Key // gen_ai.system or gen_ai.provider.name
	prop       propagation.TraceContext

	opDuration   metric.Float64Histogram
	firstChunk   metric.Float64Histogram
	tokenUsage   metric.Int64Histogram
	toolCalls    metric.Int64Counter
	toolAttempts metric.Int64Counter
	turns        metric.Int64Counter
	tasks        metric.Int64Counter
	toolSkipped  metric.Int64Counter
	stalls       metric.Int64Counter
	suspensions  metric.Int64Counter
	runs         metric.Int64Counter

	tools       sync.Map // tool name → *toolStart
	cachedTools atomic.Int64
}

var (
	_ react.Observer    = (*Observer)(nil)
	_ react.EventFilter = (*Observer)(nil)
	_ react.Carrier     = (*Observer)(nil)
)

// Observe implements [react.Observer]: the starts and ends of runs, model
// calls and tool calls open and close spans; verdicts, skips, stalls and
// suspensions are counted and added to the run's span. Deltas and the
// other kinds are not received (see [Observer.Wants]).
func (o *Observer) Observe(ctx context.Context, e react.Event) context.Context {
	switch e.Kind {
	case react.EventRunStart:
		return o.onRunStart(ctx, e.RunStart)
	case react.EventRunEnd:
		o.onRunEnd(ctx, e.RunEnd)
	case react.EventModelStart:
		return o.onModelStart(ctx, e.ModelStart)
	case react.EventModelEnd:
		o.onModelEnd(ctx, e.ModelEnd)
	case react.EventToolStart:
		return o.onToolStart(ctx, e.ToolStart)
	case react.EventToolEnd:
		o.onToolEnd(ctx, e.ToolEnd)
	case react.EventToolInvoked:
		o.onToolInvoked(ctx, e.Tool)
	case react.EventToolSkipped:
		o.onToolSkipped(ctx, e.Tool)
	case react.EventNoToolCalls:
		o.onNoToolCalls(ctx, e.RoundEvent)
	case react.EventStall:
		o.onStall(ctx, e.Stall)
	case react.EventStallReset:
		o.onStallReset(ctx, e.Stall)
	case react.EventSuspended:
		o.onSuspended(ctx, e.Suspend)
	default:
	}
	return ctx
}

// observed are the kinds an Observer receives.
var observed = react.Events(react.EventRunStart, react.EventRunEnd, react.EventModelStart, react.EventModelEnd,
	react.EventToolStart, react.EventToolEnd, react.EventToolInvoked, react.EventToolSkipped,
	react.EventNoToolCalls, react.EventStall, react.EventStallReset, react.EventSuspended)

// Wants implements [react.EventFilter]: every kind but the deltas, the
// round ends and the finished and failed events (the run's span ends with
// EventRunEnd).
func (o *Observer) Wants() react.EventSet { return observed }

// New returns an Observer that creates its tracer from tp and its meter
// from mp, each nil meaning the global provider (otel.GetTracerProvider,
// otel.GetMeterProvider, which follow a provider set later). opts may be
// nil. It returns an error when opts.Conventions is invalid or the meter
// refuses an instrument.
func New(tp trace.TracerProvider, mp metric.MeterProvider, opts *Options) (*Observer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = defaultGetenv
	}
	conv, err := o.Conventions.resolve(getenv)
	if err != nil {
		return nil, err
	}
	if tp == nil {
		tp = gotel.GetTracerProvider()
	}
	if mp == nil {
		mp = gotel.GetMeterProvider()
	}
	obs := &Observer{
		conv:       conv,
		capture:    o.CaptureContent,
		maxContent: o.MaxContentBytes,
		tracer:     tp.Tracer(ScopeName, trace.WithSchemaURL(conv.schemaURL())),
		provider:   keySystem,
	}
	if conv == ConventionsLatest {
		obs.provider = keyProviderName
	}
	if obs.maxContent == 0 {
		obs.maxContent = DefaultMaxContentBytes
	}
	meter := mp.Meter(ScopeName, metric.WithSchemaURL(conv.schemaURL()))
	var errs []error
	record := func(err error) { errs = append(errs, err) }
	var d genaiconv.ClientOperationDuration
	obs.opDuration, err = meter.Float64Histogram(d.Name(), metric.WithUnit(d.Unit()), metric.WithDescription(d.Description()),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	record(err)
	var ttfc genaiconv.ClientOperationTimeToFirstChunk
	obs.firstChunk, err = meter.Float64Histogram(ttfc.Name(), metric.WithUnit(ttfc.Unit()), metric.WithDescription(ttfc.Description()),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	record(err)
	var u genaiconv.ClientTokenUsage
	obs.tokenUsage, err = meter.Int64Histogram(u.Name(), metric.WithUnit(u.Unit()), metric.WithDescription(u.Description()),
		metric.WithExplicitBucketBoundaries(TokenBuckets...))
	record(err)
	obs.toolCalls, err = meter.Int64Counter(MetricToolCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls the loop processed, by verdict (outcome, code, layer, status class), tool and kind; skipped calls excluded."))
	record(err)
	obs.toolAttempts, err = meter.Int64Counter(MetricToolAttempts, metric.WithUnit("{attempt}"),
		metric.WithDescription("Executed attempts of tool calls (retries included), with the attributes of their call's verdict and account."))
	record(err)
	obs.turns, err = meter.Int64Counter(MetricTurns, metric.WithUnit("{turn}"),
		metric.WithDescription("Model turns the loop received, by whether they called a tool."))
	record(err)
	obs.tasks, err = meter.Int64Counter(MetricTasks, metric.WithUnit("{task}"),
		metric.WithDescription("Tasks the host judged with Observer.RecordTask, by whether they passed."))
	record(err)
	obs.toolSkipped, err = meter.Int64Counter(MetricToolSkipped, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls answered as skipped because an earlier call of their turn did not succeed or the node ended."))
	record(err)
	obs.stalls, err = meter.Int64Counter(MetricStalls, metric.WithUnit("{stall}"),
		metric.WithDescription("No-progress rounds counted, by reason."))
	record(err)
	obs.suspensions, err = meter.Int64Counter(MetricSuspensions, metric.WithUnit("{suspension}"),
		metric.WithDescription("Runs suspended for a human, by kind (approval, follow_up)."))
	record(err)
	obs.runs, err = meter.Int64Counter(MetricRuns, metric.WithUnit("{run}"),
		metric.WithDescription("Calls of Run and Resume that ended, by the run's status, failure kind and whether the call resumed the run."))
	record(err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("otel: instruments: %w", err)
	}
	return obs, nil
}

// Conventions returns the version of the GenAI conventions the observer
// follows (never ConventionsFromEnv).
func (o *Observer) Conventions() Conventions { return o.conv }

// The context keys of an observer's spans, per observer so that two
// observers in one react.Observers never take each other's spans.
type (
	runKey  struct{ o *Observer }
	callKey struct{ o *Observer }
)

// run is what an observer keeps of a run in its context.
type run struct {
	span    trace.Span
	resumed bool
}

// runOf returns the run of ctx, or a run with a no-op span.
func (o *Observer) runOf(ctx context.Context) *run {
	if r, ok := ctx.Value(runKey{o}).(*run); ok {
		return r
	}
	return &run{span: trace.SpanFromContext(context.Background())}
}

// callOf returns the span of the model or tool call of ctx, or a no-op
// span.
func (o *Observer) callOf(ctx context.Context) trace.Span {
	if s, ok := ctx.Value(callKey{o}).(trace.Span); ok {
		return s
	}
	return trace.SpanFromContext(context.Background())
}

// providerAttr is the provider attribute of the selected conventions.
func (o *Observer) providerAttr(p string) attribute.KeyValue {
	if p == "" {
		p = other
	}
	return o.provider.String(p)
}

// errorType is the error.type of an error: panic, decision,
// approval_not_pending, the model error's kind (modelerr: timeout,
// canceled, rate_limited, …), or _OTHER.
func errorType(err error) string {
	switch {
	case errors.Is(err, react.ErrPanicked):
		return "panic"
	case errors.Is(err, react.ErrDecision):
		return "decision"
	case errors.Is(err, guard.ErrNotPending):
		return "approval_not_pending"
	}
	if k := modelerr.KindOf(err); k != modelerr.Unknown {
		return k.String()
	}
	return other
}

// fail marks span as failed with an error.type.
func fail(span trace.Span, errType, description string) {
	span.SetStatus(codes.Error, description)
	span.SetAttributes(keyErrorType.String(errType))
}

// onRunStart handles [react.EventRunStart]: it starts the invoke_agent
// span of the call, a child of ctx's span, linked to the span of the run
// it resumes when the snapshot carried one.
func (o *Observer) onRunStart(ctx context.Context, e *react.RunStartEvent) context.Context {
	name := opInvokeAgent
	if e.Node != "" {
		name += " " + e.Node
	}
	attrs := []attribute.KeyValue{
		keyOperation.String(opInvokeAgent),
		o.providerAttr(e.Model.Provider),
		keyConversationID.String(e.Run),
		KeyResumed.Bool(e.Resumed),
	}
	if e.Node != "" {
		attrs = append(attrs, keyAgentName.String(e.Node))
	}
	if e.Model.Name != "" {
		attrs = append(attrs, keyRequestModel.String(e.Model.Name))
	}
	if e.Decision != "" {
		attrs = append(attrs, KeyDecision.String(e.Decision))
	}
	if e.DecidedBy != "" {
		attrs = append(attrs, KeyDecidedBy.String(e.DecidedBy))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...)}
	if len(e.Carried) > 0 {
		prev := trace.SpanContextFromContext(o.prop.Extract(context.Background(), propagation.MapCarrier(e.Carried)))
		if prev.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: prev, Attributes: []attribute.KeyValue{KeyResumed.Bool(true)}}))
		}
	}
	ctx, span := o.tracer.Start(ctx, name, opts...)
	return context.WithValue(ctx, runKey{o}, &run{span: span, resumed: e.Resumed})
}

// Carry implements [react.Carrier]: the W3C trace context
// (traceparent, tracestate) of the run's span, so that the run that
// resumes the snapshot links to it.
func (o *Observer) Carry(ctx context.Context) map[string]string {
	sc := o.runOf(ctx).span.SpanContext()
	if !sc.IsValid() {
		return nil
	}
	m := propagation.MapCarrier{}
	o.prop.Inject(trace.ContextWithSpanContext(context.Background(), sc), m)
	return m
}

// onRunEnd handles [react.EventRunEnd]: it sets the run's attributes
// and status, ends its span and counts the call in reactguard.runs.
func (o *Observer) onRunEnd(ctx context.Context, e *react.RunEndEvent) {
	r := o.runOf(ctx)
	status := e.Status.String()
	if r.span.IsRecording() {
		attrs := []attribute.KeyValue{
			KeyRunStatus.String(status),
			KeyRounds.Int(e.Round),
			KeyStalls.Int(e.Stalls),
			KeyOutputs.Int(e.Outputs),
			KeyGoal.String(e.Goal.String()),
		}
		if e.Failure != nil {
			attrs = append(attrs, KeyFailure.String(e.Failure.Kind.String()))
		}
		if e.Suspension != nil {
			attrs = append(attrs, KeySuspension.String(e.Suspension.Kind.String()))
		}
		r.span.SetAttributes(attrs...)
		switch {
		case e.Err != nil:
			fail(r.span, errorType(e.Err), e.Err.Error())
		case e.Status == react.Failed && e.Failure != nil:
			// The reason may be the model's own words (builtin_node_fail):
			// content, recorded only when the host opts in.
			desc := e.Failure.Kind.String()
			if o.capture {
				desc = o.bound(r.span, "status", e.Failure.Reason)
			}
			fail(r.span, e.Failure.Kind.String(), desc)
		}
	}
	r.span.End()
	if o.runs.Enabled(ctx) {
		attrs := []attribute.KeyValue{KeyRunStatus.String(status), KeyResumed.Bool(r.resumed), KeyGoal.String(e.Goal.String())}
		if e.Failure != nil {
			attrs = append(attrs, KeyFailure.String(e.Failure.Kind.String()))
		}
		o.runs.Add(ctx, 1, metric.WithAttributes(attrs...))
	}
}

// onModelStart handles [react.EventModelStart]: it starts the chat span
// of the call, a child of the run's span. The attributes a sampler may
// use (operation, provider, requested model) are given at the start; the
// others only to a span that records.
func (o *Observer) onModelStart(ctx context.Context, e *react.ModelStartEvent) context.Context {
	name := opChat
	mi := &e.Model
	attrs := []attribute.KeyValue{keyOperation.String(opChat), o.providerAttr(mi.Provider)}
	if mi.Name != "" {
		name += " " + mi.Name
		attrs = append(attrs, keyRequestModel.String(mi.Name))
	}
	if mi.ServerAddress != "" {
		attrs = append(attrs, keyServerAddress.String(mi.ServerAddress))
		if mi.ServerPort > 0 {
			attrs = append(attrs, keyServerPort.Int(mi.ServerPort))
		}
	}
	ctx, span := o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if !span.IsRecording() {
		return ctx // onModelEnd finds no span of ours: metrics only
	}
	span.SetAttributes(keyConversationID.String(e.Run), KeyRound.Int(e.Round))
	if mi.Temperature != nil {
		span.SetAttributes(keyTemperature.Float64(*mi.Temperature))
	}
	if mi.TopP != nil {
		span.SetAttributes(keyTopP.Float64(*mi.TopP))
	}
	if mi.MaxTokens > 0 {
		span.SetAttributes(keyMaxTokens.Int64(mi.MaxTokens))
	}
	if o.capture {
		msgs := e.Request.Messages
		if mi.SystemApart {
			var system string
			system, msgs = systemInstructions(msgs)
			if system != "" {
				span.SetAttributes(keySystemInstr.String(o.bound(span, string(keySystemInstr), system)))
			}
		}
		span.SetAttributes(keyInputMessages.String(o.bound(span, string(keyInputMessages), inputMessages(msgs))))
	}
	return context.WithValue(ctx, callKey{o}, span)
}

// onModelEnd handles [react.EventModelEnd]: it records the response
// (model, id, finish reason, usage) or the error on the chat span, ends it,
// and records the operation's duration and token usage.
func (o *Observer) onModelEnd(ctx context.Context, e *react.ModelEndEvent) {
	resp := e.Response
	errType := ""
	if e.Err != nil {
		errType = errorType(e.Err)
	}
	if span := o.callOf(ctx); span.IsRecording() {
		if e.Streamed {
			span.SetAttributes(KeyStreamed.Bool(true))
			if e.FirstChunk > 0 {
				span.SetAttributes(KeyTimeToFirstChunk.Float64(e.FirstChunk.Seconds()))
			}
		}
		o.recordResponse(span, resp, e.Err, errType)
		span.End()
	}
	if e.Err == nil && o.turns.Enabled(ctx) {
		o.turns.Add(ctx, 1, metric.WithAttributes(KeyTurnCalls.Bool(len(resp.ToolCalls) > 0)))
	}
	durationOn, usageOn := o.opDuration.Enabled(ctx), o.tokenUsage.Enabled(ctx) && resp.Usage != nil && e.Err == nil
	firstOn := e.Streamed && e.FirstChunk > 0 && o.firstChunk.Enabled(ctx)
	if !durationOn && !usageOn && !firstOn {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs, keyOperation.String(opChat), o.providerAttr(e.Model.Provider))
	if e.Model.Name != "" {
		attrs = append(attrs, keyRequestModel.String(e.Model.Name))
	}
	if e.Model.ServerAddress != "" {
		attrs = append(attrs, keyServerAddress.String(e.Model.ServerAddress))
		if e.Model.ServerPort > 0 {
			attrs = append(attrs, keyServerPort.Int(e.Model.ServerPort))
		}
	}
	if resp.Model != "" && e.Err == nil {
		attrs = append(attrs, keyResponseModel.String(resp.Model))
	}
	if errType != "" {
		attrs = append(attrs, keyErrorType.String(errType))
	}
	if durationOn {
		o.opDuration.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(attrs...))
	}
	if firstOn {
		o.firstChunk.Record(ctx, e.FirstChunk.Seconds(), metric.WithAttributes(attrs...))
	}
	if usageOn {
		n := len(attrs)
		o.tokenUsage.Record(ctx, resp.Usage.InputTokens, metric.WithAttributes(append(attrs[:n:n], keyTokenType.String(tokenInput))...))
		o.tokenUsage.Record(ctx, resp.Usage.OutputTokens, metric.WithAttributes(append(attrs[:n:n], keyTokenType.String(tokenOutput))...))
	}
}

// recordResponse records a model call's response or error on its span.
func (o *Observer) recordResponse(span trace.Span, resp react.Response, err error, errType string) {
	if err != nil {
		fail(span, errType, err.Error())
		return
	}
	if resp.Model != "" {
		span.SetAttributes(keyResponseModel.String(resp.Model))
	}
	if resp.ID != "" {
		span.SetAttributes(keyResponseID.String(resp.ID))
	}
	if resp.FinishReason != "" {
		span.SetAttributes(keyFinishReasons.StringSlice([]string{resp.FinishReason}))
	}
	if u := resp.Usage; u != nil {
		span.SetAttributes(keyInputTokens.Int64(u.InputTokens), keyOutputTokens.Int64(u.OutputTokens))
		if o.conv == ConventionsLatest {
			if u.CachedInputTokens > 0 {
				span.SetAttributes(keyCacheRead.Int64(u.CachedInputTokens))
			}
			if u.CacheCreationInputTokens > 0 {
				span.SetAttributes(keyCacheCreation.Int64(u.CacheCreationInputTokens))
			}
			if u.ReasoningTokens > 0 {
				span.SetAttributes(keyReasoning.Int64(u.ReasoningTokens))
			}
		}
	}
	if o.capture {
		span.SetAttributes(keyOutputMessages.String(o.bound(span, string(keyOutputMessages), outputMessages(resp))))
	}
}

// onToolStart handles [react.EventToolStart]: it starts the execute_tool
// span of the call, a child of the run's span. The attributes a sampler
// may use (gen_ai.operation.name, gen_ai.tool.name) are given at the
// start; the others only to a span that records.
func (o *Observer) onToolStart(ctx context.Context, e *react.ToolStartEvent) context.Context {
	st := o.toolStart(e.Tool)
	ctx, span := o.tracer.Start(ctx, st.name, st.opts...)
	if !span.IsRecording() {
		return ctx // onToolEnd finds no span of ours: nothing to record
	}
	span.SetAttributes(
		keyToolCallID.String(e.CallID),
		keyToolType.String(toolFunction),
		KeyBuiltin.Bool(e.Builtin),
		KeyRound.Int(e.Round),
	)
	if e.Description != "" {
		span.SetAttributes(keyToolDesc.String(e.Description))
	}
	if o.capture {
		span.SetAttributes(keyToolArguments.String(o.bound(span, string(keyToolArguments), string(e.Args))))
	}
	return context.WithValue(ctx, callKey{o}, span)
}

// toolStart is the span name and start options of a tool's spans.
type toolStart struct {
	name string
	opts []trace.SpanStartOption
}

// maxCachedTools bounds the tools whose span start is cached: the model
// may name tools that do not exist, and those must not grow the cache.
const maxCachedTools = 256

// toolStart returns the span name and start options of tool's spans,
// built once per tool.
func (o *Observer) toolStart(tool string) *toolStart {
	if st, ok := o.tools.Load(tool); ok {
		return st.(*toolStart)
	}
	st := &toolStart{name: opExecuteTool + " " + tool, opts: []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(keyOperation.String(opExecuteTool), keyToolName.String(tool)),
	}}
	if o.cachedTools.Add(1) <= maxCachedTools {
		o.tools.Store(tool, st)
	}
	return st
}

// verdictAttrs are the attributes of a call's verdict and account:
// outcome, the code with its layer, the call status, the final execution
// status class, the first attempt's class when the call executed, and the
// business status when it was judged.
func verdictAttrs(attrs []attribute.KeyValue, e *react.ToolEvent) []attribute.KeyValue {
	l := &e.Layers
	attrs = append(attrs, KeyOutcome.String(e.Outcome.String()), KeyCallStatus.String(l.Call.String()),
		KeyStatusClass.String(l.Execution.String()))
	if e.Code != 0 {
		attrs = append(attrs, KeyCode.String(e.Code.String()), KeyLayer.String(e.Code.Layer().String()))
	}
	if l.Attempts > 0 {
		attrs = append(attrs, KeyFirstStatus.String(l.First.Status.String()))
	}
	if l.Business != react.BusinessNone {
		attrs = append(attrs, KeyBusinessStatus.String(l.Business.String()))
	}
	return attrs
}

// onToolEnd handles [react.EventToolEnd]: it records the verdict on the
// execute_tool span and ends it. FAILED sets the status Error with
// error.type the code; REJECTED and DEFERRED are verdicts, not errors, and
// leave it unset.
func (o *Observer) onToolEnd(ctx context.Context, e *react.ToolEndEvent) {
	span := o.callOf(ctx)
	if !span.IsRecording() {
		span.End()
		return
	}
	if e.Err != nil {
		fail(span, errorType(e.Err), e.Err.Error())
		span.End()
		return
	}
	attrs := verdictAttrs(make([]attribute.KeyValue, 0, 12), &e.ToolEvent)
	if l := e.Layers; l.Attempts > 0 {
		attrs = append(attrs, KeyAttempts.Int(l.Attempts))
		if l.Attempts > 1 && l.First.Code != 0 {
			attrs = append(attrs, KeyFirstCode.String(l.First.Code.String()))
		}
	}
	if e.Suspends != 0 {
		attrs = append(attrs, KeySuspension.String(e.Suspends.String()))
	}
	if e.Outcome == outcome.Failed {
		// The reason may hold the tool's own error text: content,
		// recorded only when the host opts in; the code otherwise.
		attrs = append(attrs, keyErrorType.String(e.Code.String()))
		desc := e.Code.String()
		if o.capture {
			desc = o.bound(span, "status", e.Observation.Reason())
		}
		span.SetStatus(codes.Error, desc)
	}
	span.SetAttributes(attrs...)
	if o.capture && e.Outcome == outcome.Success {
		span.SetAttributes(keyToolResult.String(o.bound(span, string(keyToolResult), toolResult(e.Observation))))
	}
	span.End()
}

// onToolInvoked handles [react.EventToolInvoked]: it counts the call in
// reactguard.tool.calls and its executed attempts in
// reactguard.tool.attempts.
func (o *Observer) onToolInvoked(ctx context.Context, e *react.ToolEvent) {
	calls, attempts := o.toolCalls.Enabled(ctx), e.Layers.Attempts > 0 && o.toolAttempts.Enabled(ctx)
	if !calls && !attempts {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 9)
	attrs = append(attrs, keyToolName.String(e.Tool), KeyBuiltin.Bool(e.Builtin))
	opt := metric.WithAttributes(verdictAttrs(attrs, e)...)
	if calls {
		o.toolCalls.Add(ctx, 1, opt)
	}
	if attempts {
		o.toolAttempts.Add(ctx, int64(e.Layers.Attempts), opt)
	}
}

// onToolSkipped handles [react.EventToolSkipped]: it counts the call in
// reactguard.tool.skipped.
func (o *Observer) onToolSkipped(ctx context.Context, e *react.ToolEvent) {
	if !o.toolSkipped.Enabled(ctx) {
		return
	}
	o.toolSkipped.Add(ctx, 1, metric.WithAttributes(keyToolName.String(e.Tool), KeyBuiltin.Bool(e.Builtin)))
}

// onNoToolCalls handles [react.EventNoToolCalls]: an event on the run's
// span.
func (o *Observer) onNoToolCalls(ctx context.Context, e react.RoundEvent) {
	if span := o.runOf(ctx).span; span.IsRecording() {
		span.AddEvent("reactguard.no_tool_calls", trace.WithAttributes(KeyRound.Int(e.Round)))
	}
}

// onStall handles [react.EventStall]: it counts the stall in
// reactguard.stalls and adds an event to the run's span.
func (o *Observer) onStall(ctx context.Context, e *react.StallEvent) {
	if o.stalls.Enabled(ctx) {
		o.stalls.Add(ctx, 1, metric.WithAttributes(KeyStallReason.String(e.Reason)))
	}
	if span := o.runOf(ctx).span; span.IsRecording() {
		span.AddEvent("reactguard.stall", trace.WithAttributes(
			KeyStallReason.String(e.Reason), KeyStalls.Int(e.Count), KeyRound.Int(e.Round), keyToolCallID.String(e.CallID)))
	}
}

// onStallReset handles [react.EventStallReset]: an event on the run's span.
func (o *Observer) onStallReset(ctx context.Context, e *react.StallEvent) {
	if span := o.runOf(ctx).span; span.IsRecording() {
		span.AddEvent("reactguard.stall_reset", trace.WithAttributes(KeyRound.Int(e.Round), keyToolCallID.String(e.CallID)))
	}
}

// onSuspended handles [react.EventSuspended]: it counts the suspension in
// reactguard.suspensions (the run's span gets its kind when it ends).
func (o *Observer) onSuspended(ctx context.Context, e *react.SuspendEvent) {
	if !o.suspensions.Enabled(ctx) {
		return
	}
	o.suspensions.Add(ctx, 1, metric.WithAttributes(KeySuspension.String(e.Suspension.Kind.String())))
}

// bound returns v cut to the observer's MaxContentBytes (between UTF-8
// sequences), adding key to span's reactguard.content.truncated when it
// cut.
func (o *Observer) bound(span trace.Span, key, v string) string {
	if o.maxContent < 0 || len(v) <= o.maxContent {
		return v
	}
	cut := o.maxContent
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	span.AddEvent("reactguard.content.truncated", trace.WithAttributes(
		KeyContentTruncated.String(key), KeyContentBytes.Int(len(v)), KeyContentKept.Int(cut)))
	return v[:cut]
}

// RecordTask counts a task the host judged (its validator, the user's
// acceptance, an evaluation case) in reactguard.tasks, as
// react.Metrics.RecordTask does: the final-task rate (docs/evaluation.md)
// is the passed ones over all.
func (o *Observer) RecordTask(ctx context.Context, passed bool) {
	if o.tasks.Enabled(ctx) {
		o.tasks.Add(ctx, 1, metric.WithAttributes(KeyTaskPassed.Bool(passed)))
	}
}
