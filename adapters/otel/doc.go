// Package otel reports reactguard's loop on OpenTelemetry: a span per run,
// per model call and per tool call, with the loop's verdicts on them, and
// the metrics of the GenAI semantic conventions plus reactguard's own
// counters. It lives in its own Go module, so importing the reactguard
// core never pulls in OpenTelemetry:
//
//	go get github.com/reactguard/reactguard/adapters/otel
//
// The package name is otel, like OpenTelemetry's API package; import one
// of them under another name:
//
//	import rgotel "github.com/reactguard/reactguard/adapters/otel"
//
//	tel, err := rgotel.New(tracerProvider, meterProvider, nil) // nil: the global providers
//	if err != nil { … }
//	loop, err := react.New(react.Config{
//		Model:    model,
//		Tools:    catalog,
//		Observer: react.Observers(react.NewLogObserver(logger), tel),
//	})
//
// The module depends on the OpenTelemetry API (go.opentelemetry.io/otel,
// trace, metric) only; the SDK is used by its tests and by its example
// program (examples/sitebuilder, which prints the spans of the sitebuilder
// story with the stdout exporter).
//
// # Conventions
//
// The spans and metrics follow the OpenTelemetry semantic conventions for
// generative AI, pinned at version 1.41.0 (the Go package
// go.opentelemetry.io/otel/semconv/v1.41.0, the last release of the
// semantic-conventions repository that holds them). They are in
// Development status, and their transition plan asks instrumentations to
// keep emitting v1.36.0 unless the environment variable
// OTEL_SEMCONV_STABILITY_OPT_IN (a comma-separated list) holds
// gen_ai_latest_experimental. This package does so ([ConventionsFromEnv],
// read once by [New]); [Options].Conventions selects a version in code.
// The two differ, for what this package emits, in the provider attribute
// (v1.36.0: gen_ai.system; v1.41.0: gen_ai.provider.name) and in the
// token details of v1.41.0 (gen_ai.usage.cache_read.input_tokens,
// gen_ai.usage.cache_creation.input_tokens,
// gen_ai.usage.reasoning.output_tokens). The provider comes from the
// model's [react.Describer] (every model adapter of this repository
// implements it); a model that does not name its provider is reported
// as _OTHER.
//
// # Spans
//
// Each call of react.Loop.Run or react.Loop.Resume is one span, and its
// model and tool calls are its children:
//
//	invoke_agent {node}      INTERNAL  gen_ai.operation.name=invoke_agent, gen_ai.agent.name=node,
//	                                   gen_ai.conversation.id=run id, provider, gen_ai.request.model,
//	                                   reactguard.run.{status,rounds,stalls,outputs,resumed,failure,goal},
//	                                   reactguard.suspension.kind
//	├── chat {model}         CLIENT    gen_ai.operation.name=chat, provider, gen_ai.request.model,
//	│                                  server.{address,port}, gen_ai.request.{temperature,top_p,max_tokens},
//	│                                  gen_ai.response.{model,id,finish_reasons}, gen_ai.usage.*,
//	│                                  gen_ai.conversation.id, reactguard.round,
//	│                                  reactguard.streamed, reactguard.time_to_first_chunk (streamed calls)
//	└── execute_tool {tool}  INTERNAL  gen_ai.operation.name=execute_tool, gen_ai.tool.{name,call.id,type,description},
//	                                   reactguard.tool.{outcome,code,layer,call_status,status_class,
//	                                   attempts,first_status,first_code,business_status,builtin},
//	                                   reactguard.round, reactguard.suspension.kind
//
// The verdict attributes are the three layers of success of the call
// (react.Layers): reactguard.tool.call_status the call layer,
// reactguard.tool.status_class the final attempt's execution status class
// (ok, empty, timeout, temporarily_unavailable, …; none when the tool did
// not run), reactguard.tool.attempts the executed attempts with the first
// one's class and code when it differs, and reactguard.tool.layer the
// layer of the verdict's code. The business status is on the span when it
// does not depend on call order (insufficient, rejected); whether a result
// was new evidence or a repeat is judged when the loop applies the results
// in call order, and only the metrics carry it.
//
// The endpoint (server.address, server.port) and the request parameters
// the host set (temperature, top_p, max_tokens) come from the model's
// [react.ModelInfo], which every adapter of this repository fills; a
// model that does not say gets none of them. gen_ai.tool.description is
// the description the model was given of the tool.
//
// gen_ai.tool.type is function: every tool runs in the application. The
// run's span carries events reactguard.stall (reason, count, round, call
// id), reactguard.stall_reset and reactguard.no_tool_calls.
//
// A suspended run's span ends when Run returns; the span of the Resume
// that continues it, in this process or another, links to it: the run's
// W3C trace context (traceparent, tracestate) travels inside the run's
// snapshot (react.Carrier) and comes back on resume. The new
// span's parent is whatever span ctx holds when Resume is called (the
// request that brought the user's decision, say).
//
// A model call made through react.StreamModel (every model adapter of
// this repository streams) has reactguard.streamed=true and
// reactguard.time_to_first_chunk, the seconds from the call's start to its
// first chunk: the conventions have no span attribute for it, only the
// metric gen_ai.client.operation.time_to_first_chunk, also recorded.
//
// Status. FAILED sets a tool span's status to Error, with error.type the
// code (TOOL_TIMEOUT, …) and the code as the description (the reason,
// which may quote the tool's error, only with content capture). REJECTED and DEFERRED leave it unset: they are
// verdicts the loop gives on a legitimate call — a refused argument, an
// approval still to ask — not failures of the operation, and the model is
// told what to do next; their code is in reactguard.tool.code. A run
// span's status is Error when the run failed (error.type the failure kind:
// model, no_progress, round_limit, which is also the description: the
// reason, which may be the model's own words, only with content capture)
// or when Run or Resume returned an error
// (error.type: the model error's kind — rate_limited, timeout, canceled, …
// —, panic, approval_not_pending when the approvals store did not hold the
// gated call, or _OTHER). A chat span's status is Error when the
// model call failed, error.type its kind. A suspended run is not an
// error. Every span the observer starts is ended, after a model error, a
// cancellation and while a panic unwinds (the loop ends every call it
// started; error.type panic).
//
// Contents. Message contents are not recorded unless
// [Options].CaptureContent is set, as the conventions recommend: they may
// hold personal data. With it, chat spans get gen_ai.input.messages (and,
// for an API that takes the system instructions apart from the history —
// [react.ModelInfo].SystemApart: Anthropic, Gemini, Bedrock, the
// Responses API —, the system messages as gen_ai.system_instructions
// instead of input messages) and
// gen_ai.output.messages (always with the finish_reason its schema
// requires: the API's, else tool_call or stop) and execute_tool spans
// gen_ai.tool.call.arguments and, for a call that succeeded,
// gen_ai.tool.call.result, in the JSON forms of v1.41.0. Each is bounded
// by [Options].MaxContentBytes ([DefaultMaxContentBytes]): a longer value
// is cut and the span gets a reactguard.content.truncated event naming the
// attribute, its length and the bytes kept.
//
// # Metrics
//
//	gen_ai.client.operation.duration  histogram  s        per model call: gen_ai.operation.name=chat, provider,
//	                                                      gen_ai.request.model, gen_ai.response.model,
//	                                                      server.{address,port}, error.type
//	gen_ai.client.operation.time_to_first_chunk  histogram  s  per streamed model call that got a chunk,
//	                                                      same attributes as the duration
//	gen_ai.client.token.usage         histogram  {token}  per model call that reported usage, once per
//	                                                      gen_ai.token.type (input, output), same attributes
//	reactguard.tool.calls             counter    {call}   per call the loop processed: gen_ai.tool.name,
//	                                                      reactguard.tool.{builtin,outcome,code,layer,call_status,
//	                                                      status_class,first_status,business_status}
//	reactguard.tool.attempts          counter    {attempt}  executed attempts of those calls, same attributes
//	reactguard.tool.skipped           counter    {call}   gen_ai.tool.name, reactguard.tool.builtin
//	reactguard.turns                  counter    {turn}   model turns, reactguard.turn.tool_calls
//	reactguard.stalls                 counter    {stall}  reactguard.stall.reason
//	reactguard.suspensions            counter    {suspension}  reactguard.suspension.kind
//	reactguard.runs                   counter    {run}    per call of Run or Resume that ended:
//	                                                      reactguard.run.{status,resumed,goal,failure}
//	reactguard.tasks                  counter    {task}   [Observer.RecordTask]: reactguard.task.passed
//
// The two histograms use the conventions' explicit bucket boundaries
// ([DurationBuckets], [TokenBuckets]); their duration is measured with the
// loop's Config.Now. No token metric is recorded for a model that did not
// report usage (the conventions forbid guessing).
//
// The counters carry what the per-layer figures of react.Metrics (defined
// in docs/evaluation.md) are computed from, so a metrics
// backend can chart them per tool, per class and over time:
//
//	call layer     Decision    turns{tool_calls=true} / turns
//	               Admission   calls{call_status=valid} / calls
//	               (Pairing, Resolution, Arguments: calls by call_status)
//	execution      entered     calls with status_class not in (none, reused, forbidden)
//	               Success     calls{entered, status_class in (ok, empty)} / attempts{entered}
//	               FirstAttempt, Final   calls{entered} by first_status, status_class (ok or empty) / calls{entered}
//	               Permission  calls{status_class=forbidden} / calls{status_class not in (none, reused)}
//	business       NewEvidence calls{business_status=evidence} / calls{entered, status_class in (ok, empty)}
//	               SubGoals    runs{goal=met} / runs{goal in (met, unverified, unmet)}
//	               takeover    suspensions{kind} / runs{resumed=false}
//	               FinalTask   tasks{passed=true} / tasks
package otel
