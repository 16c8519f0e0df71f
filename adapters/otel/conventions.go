package otel

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Conventions selects the version of the OpenTelemetry GenAI semantic
// conventions the spans and metrics follow. The conventions are in
// Development status; their transition plan asks an instrumentation to
// keep emitting v1.36.0 by default and to emit the latest version it
// supports when OTEL_SEMCONV_STABILITY_OPT_IN lists
// gen_ai_latest_experimental. The zero value, [ConventionsFromEnv], does
// just that.
type Conventions uint8

// The versions.
const (
	// ConventionsFromEnv reads OTEL_SEMCONV_STABILITY_OPT_IN when [New]
	// runs: [ConventionsLatest] when its comma-separated list holds
	// gen_ai_latest_experimental, [Conventions1_36] otherwise.
	ConventionsFromEnv Conventions = 0
	// Conventions1_36 is semantic conventions v1.36.0: the provider is
	// gen_ai.system, and there is no attribute for cached input tokens.
	Conventions1_36 Conventions = 1
	// ConventionsLatest is semantic conventions v1.41.0, the latest this
	// package supports: the provider is gen_ai.provider.name, cached input
	// tokens are gen_ai.usage.cache_read.input_tokens and cache writes
	// gen_ai.usage.cache_creation.input_tokens.
	ConventionsLatest Conventions = 2

	minConventions = ConventionsFromEnv
	maxConventions = ConventionsLatest
)

// OptInEnv is the environment variable the conventions' transition plan
// names, and OptInLatest the value of its list that selects
// [ConventionsLatest].
const (
	OptInEnv    = "OTEL_SEMCONV_STABILITY_OPT_IN"
	OptInLatest = "gen_ai_latest_experimental"
)

// String returns from_env, v1.36.0 or v1.41.0.
func (c Conventions) String() string {
	switch c {
	case ConventionsFromEnv:
		return "from_env"
	case Conventions1_36:
		return "v1.36.0"
	case ConventionsLatest:
		return "v" + semconvVersion
	}
	return "conventions(" + strconv.Itoa(int(c)) + ")"
}

// IsValid reports whether c is one of the defined values.
func (c Conventions) IsValid() bool { return c >= minConventions && c <= maxConventions }

// semconvVersion is the version of ConventionsLatest.
const semconvVersion = "1.41.0"

// resolve returns the version c selects, reading the environment for
// ConventionsFromEnv.
func (c Conventions) resolve(getenv func(string) string) (Conventions, error) {
	switch c {
	case Conventions1_36, ConventionsLatest:
		return c, nil
	case ConventionsFromEnv:
		for v := range strings.SplitSeq(getenv(OptInEnv), ",") {
			if strings.TrimSpace(v) == OptInLatest {
				return ConventionsLatest, nil
			}
		}
		return Conventions1_36, nil
	}
	return 0, fmt.Errorf("otel: invalid Conventions %d", uint8(c))
}

// defaultGetenv is os.Getenv; tests replace Options.Getenv instead.
var defaultGetenv = os.Getenv

// schemaURL returns the schema URL of the version.
func (c Conventions) schemaURL() string {
	if c == ConventionsLatest {
		return semconv.SchemaURL
	}
	return "https://opentelemetry.io/schemas/1.36.0"
}

// The attributes of the GenAI conventions, from the pinned version's Go
// package (go.opentelemetry.io/otel/semconv/v1.41.0), and the one v1.36.0
// named differently.
var (
	keyOperation      = semconv.GenAIOperationNameKey
	keyProviderName   = semconv.GenAIProviderNameKey   // v1.37.0 and later
	keySystem         = attribute.Key("gen_ai.system") // v1.36.0 and earlier
	keyAgentName      = semconv.GenAIAgentNameKey
	keyConversationID = semconv.GenAIConversationIDKey
	keyRequestModel   = semconv.GenAIRequestModelKey
	keyResponseModel  = semconv.GenAIResponseModelKey
	keyResponseID     = semconv.GenAIResponseIDKey
	keyFinishReasons  = semconv.GenAIResponseFinishReasonsKey
	keyInputTokens    = semconv.GenAIUsageInputTokensKey
	keyOutputTokens   = semconv.GenAIUsageOutputTokensKey
	keyCacheRead      = semconv.GenAIUsageCacheReadInputTokensKey     // v1.41.0
	keyCacheCreation  = semconv.GenAIUsageCacheCreationInputTokensKey // v1.41.0
	keyReasoning      = semconv.GenAIUsageReasoningOutputTokensKey    // v1.41.0
	keyTokenType      = semconv.GenAITokenTypeKey
	keyToolName       = semconv.GenAIToolNameKey
	keyToolCallID     = semconv.GenAIToolCallIDKey
	keyToolType       = semconv.GenAIToolTypeKey
	keyErrorType      = semconv.ErrorTypeKey
	keyInputMessages  = semconv.GenAIInputMessagesKey      // opt-in content
	keyOutputMessages = semconv.GenAIOutputMessagesKey     // opt-in content
	keyToolArguments  = semconv.GenAIToolCallArgumentsKey  // opt-in content
	keyToolResult     = semconv.GenAIToolCallResultKey     // opt-in content
	keySystemInstr    = semconv.GenAISystemInstructionsKey // opt-in content
	keyToolDesc       = semconv.GenAIToolDescriptionKey
	keyTemperature    = semconv.GenAIRequestTemperatureKey
	keyTopP           = semconv.GenAIRequestTopPKey
	keyMaxTokens      = semconv.GenAIRequestMaxTokensKey
	keyServerAddress  = semconv.ServerAddressKey
	keyServerPort     = semconv.ServerPortKey
)

// The values of the conventions this package uses.
const (
	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"
	toolFunction  = "function" // a tool the application runs, not the model's server
	tokenInput    = "input"
	tokenOutput   = "output"
	other         = "_OTHER" // provider or error type that no value names
)

// Our own attributes, under the reactguard. prefix.
const (
	// KeyOutcome is a tool call's verdict: SUCCESS, FAILED, REJECTED,
	// DEFERRED.
	KeyOutcome = attribute.Key("reactguard.tool.outcome")
	// KeyCode is the verdict's error code (APPROVAL_REQUIRED, …); absent
	// for SUCCESS.
	KeyCode = attribute.Key("reactguard.tool.code")
	// KeyLayer is the code's layer of success: call, execution, business.
	KeyLayer = attribute.Key("reactguard.tool.layer")
	// KeyStatusClass is the call's execution status class (docs/evaluation.md:
	// ok, empty, invalid_request, forbidden, not_found, timeout,
	// temporarily_unavailable, unknown; and result_invalid, reused, none
	// when the tool did not run): the final attempt's
	// (react.Layers.Execution).
	KeyStatusClass = attribute.Key("reactguard.tool.status_class")
	// KeyCallStatus is the call layer's status: valid, unpaired,
	// unknown_tool, invalid_args, refused, deferred (react.CallStatus).
	KeyCallStatus = attribute.Key("reactguard.tool.call_status")
	// KeyFirstStatus is the execution status class of the call's first
	// attempt, on executed calls (differs from KeyStatusClass after a
	// retry).
	KeyFirstStatus = attribute.Key("reactguard.tool.first_status")
	// KeyFirstCode is the code of the first attempt of a retried call
	// whose first attempt failed.
	KeyFirstCode = attribute.Key("reactguard.tool.first_code")
	// KeyBusinessStatus is the business layer's status when judged:
	// evidence, repeated, insufficient, rejected, accepted, blocked
	// (react.BusinessStatus).
	// On spans, evidence and repeated are not known yet (they are judged
	// in call order): only the metrics carry them.
	KeyBusinessStatus = attribute.Key("reactguard.tool.business_status")
	// KeyAttempts is the number of executed attempts of a call, retries
	// included (absent when the tool did not run).
	KeyAttempts = attribute.Key("reactguard.tool.attempts")
	// KeyGoal is the run's goal judged from its completion conditions:
	// met, unverified, unmet, none (react.GoalStatus).
	KeyGoal = attribute.Key("reactguard.run.goal")
	// KeyTurnCalls is true for a model turn that called at least one tool.
	KeyTurnCalls = attribute.Key("reactguard.turn.tool_calls")
	// KeyTaskPassed says whether a task the host judged passed.
	KeyTaskPassed = attribute.Key("reactguard.task.passed")
	// KeyBuiltin is true for the loop's built-in control tools.
	KeyBuiltin = attribute.Key("reactguard.tool.builtin")
	// KeyRound is the round of a model or tool call.
	KeyRound = attribute.Key("reactguard.round")
	// KeyRunStatus is how a call of Run or Resume left the run: finished,
	// failed, suspended, interrupted.
	KeyRunStatus = attribute.Key("reactguard.run.status")
	// KeyRounds is the run's number of model turns when the call ended.
	KeyRounds = attribute.Key("reactguard.run.rounds")
	// KeyStalls is the run's no-progress counter when the call ended, and
	// the counter after a stall in a stall event.
	KeyStalls = attribute.Key("reactguard.run.stalls")
	// KeyStreamed is true on the chat span of a model call made through
	// react.StreamModel.
	KeyStreamed = attribute.Key("reactguard.streamed")
	// KeyTimeToFirstChunk is the time in seconds from the start of a
	// streamed model call to its first chunk, on its chat span (the
	// conventions have it only as the metric
	// gen_ai.client.operation.time_to_first_chunk, also recorded).
	KeyTimeToFirstChunk = attribute.Key("reactguard.time_to_first_chunk")
	// KeyContentTruncated names the content attribute (or "status" for a
	// status description) that Options.MaxContentBytes cut, on the
	// span's reactguard.content.truncated event; KeyContentBytes and
	// KeyContentKept are its length and the bytes kept.
	KeyContentTruncated = attribute.Key("reactguard.content.attribute")
	KeyContentBytes     = attribute.Key("reactguard.content.bytes")
	KeyContentKept      = attribute.Key("reactguard.content.kept")
	// KeyOutputs is the number of outputs set when the call ended.
	KeyOutputs = attribute.Key("reactguard.run.outputs")
	// KeyResumed is true on the span of a call of Resume.
	KeyResumed = attribute.Key("reactguard.run.resumed")
	// KeyDecision is the decision a call of Resume applies: approve,
	// decline, answer, continue (spans only).
	KeyDecision = attribute.Key("reactguard.decision")
	// KeyDecidedBy is who made that decision, as the host identified them
	// (react.Decision.DecidedBy). It names a person: it is set on the span
	// of the resume only, never on a metric.
	KeyDecidedBy = attribute.Key("reactguard.decision.by")
	// KeyFailure is why a run failed: model, no_progress, round_limit.
	KeyFailure = attribute.Key("reactguard.run.failure")
	// KeySuspension is what a suspension waits for: approval, follow_up.
	KeySuspension = attribute.Key("reactguard.suspension.kind")
	// KeyStallReason is why a stall was counted (FAILED, REJECTED,
	// finish_rejected, no_tool_calls).
	KeyStallReason = attribute.Key("reactguard.stall.reason")
)
