package errcode

import (
	"fmt"
	"slices"
	"strconv"
)

// Code is a runtime error code. Its value is the code's stable numeric id
// (see the package documentation for the scheme). The zero value is not a
// code: [Code.IsValid] reports false and it cannot be marshalled.
type Code uint32

// Call layer: the call was stopped, or must wait, before the tool ran.
const (
	// ArgJSONInvalid: the arguments are not JSON, or not a JSON object.
	ArgJSONInvalid Code = 40001
	// ArgRejected: the arguments are an object but fail the tool's schema or
	// an argument policy.
	ArgRejected Code = 40002
	// ToolCallInvalid: the model's tool call itself is malformed (no call id,
	// a call id repeated within one turn, no tool name).
	ToolCallInvalid Code = 40003
	// ToolCallCutOff: the model's turn ended at its output limit (a finish
	// reason such as length, max_tokens or MAX_TOKENS), so the calls it
	// carries may be incomplete; none of them runs.
	ToolCallCutOff Code = 40005
	// CatalogDenied: the tool is unknown or not visible to the node.
	CatalogDenied Code = 40401
	// ParamProvenanceMismatch: a parameter's value does not come from the
	// source its contract requires.
	ParamProvenanceMismatch Code = 42211
	// ParamProvenanceQueryFirst: the parameter must come from a result of a
	// tool that has not returned one yet.
	ParamProvenanceQueryFirst Code = 42212
	// ParamProvenanceFollowUpFirst: the parameter must come from the user,
	// who has not given it yet.
	ParamProvenanceFollowUpFirst Code = 42213
	// ParamProvenanceRejected: a provenance policy refused the value.
	ParamProvenanceRejected Code = 42214
	// FingerprintTrip: the same tool was called with the same canonical
	// arguments more often than allowed.
	FingerprintTrip Code = 42901
	// ApprovalRequired: a write needs the user's approval first (DEFERRED).
	ApprovalRequired Code = 42801
	// WritePendingVerify: an earlier attempt of this write has an uncertain
	// result that must be verified first (DEFERRED).
	WritePendingVerify Code = 42802
	// WriteInFlight: the same write is executing right now (DEFERRED).
	WriteInFlight Code = 40901
	// ApprovalNotGated: builtin_node_approval was called although no write
	// call is waiting for approval.
	ApprovalNotGated Code = 42245
	// ApprovalToolMismatch: builtin_node_approval names another tool than the
	// one whose call is waiting for approval. Its id is fixed by the
	// specification.
	ApprovalToolMismatch Code = 42246
	// FollowUpAnswered: builtin_node_follow_up repeats a question the user
	// has already answered.
	FollowUpAnswered Code = 42247
	// FollowUpUngrounded: builtin_node_follow_up is used to confirm a write
	// verbally or to echo the user, not to ask for missing information.
	FollowUpUngrounded Code = 42248
	// OutputKeyUndeclared: builtin_output_set names a key the output
	// contract does not declare.
	OutputKeyUndeclared Code = 42250
	// OutputSourceTypeMissing: builtin_output_set gives no source type, or
	// one that does not exist.
	OutputSourceTypeMissing Code = 42251
	// OutputSourceTypeNotAccepted: the source type exists but the key does
	// not accept it.
	OutputSourceTypeNotAccepted Code = 42252
	// OutputSourceRefMissing: the source type needs a sourceRef and none was
	// given.
	OutputSourceRefMissing Code = 42253
	// OutputSourceRefUnknown: the sourceRef points at no recorded result.
	OutputSourceRefUnknown Code = 42254
	// OutputValueMismatch: the value differs from what the referenced source
	// holds.
	OutputValueMismatch Code = 42255
	// FinishOutputsMissing: builtin_node_finish while required outputs are
	// not written.
	FinishOutputsMissing Code = 42256
	// OutputValueInvalid: the value of a typed output (one declared with a
	// schema, such as react.OutputsOf infers) does not match its schema.
	OutputValueInvalid Code = 42260
	// ParamProvenanceStepMissing: a parameter must come from an output of
	// an earlier step of the task, and the step did not hand that output
	// on (it did not run, or did not verify the value).
	ParamProvenanceStepMissing Code = 42271
	// StepNotSatisfied: builtin_node_finish while the step's verifier does
	// not find the step satisfied (a step counts only once verified:
	// docs/tasks.md).
	StepNotSatisfied Code = 42272
	// AnswerClaimsUnverified: the task's answer states a fact that comes
	// from a step that was not verified.
	AnswerClaimsUnverified Code = 42273
	// AnswerOmitsMissing: the task's answer does not say what the task's
	// partial-success rule requires it to say about a missing step.
	AnswerOmitsMissing Code = 42274
)

// Execution layer: the tool ran (or was attempted) and failed.
const (
	// ToolError: any failure that no other code describes, including a panic.
	ToolError Code = 50001
	// MCPToolError: an MCP tool returned a result with isError set.
	MCPToolError Code = 50002
	// ToolUnreachable: the tool's server could not be reached or dropped the
	// connection.
	ToolUnreachable Code = 50201
	// ToolIOError: an I/O error while talking to the tool.
	ToolIOError Code = 50202
	// MCPRPCError: the MCP server answered with a JSON-RPC error.
	MCPRPCError Code = 50203
	// ToolResultInvalid: the result does not have the shape the tool's
	// response contract requires.
	ToolResultInvalid Code = 50204
	// MCPInvalidParams: the MCP server refused the parameters (JSON-RPC
	// -32602).
	MCPInvalidParams Code = 40004
	// ToolTimeout: the tool did not answer before its deadline.
	ToolTimeout Code = 50401
	// ToolForbidden: the tool's backend refused permission.
	ToolForbidden Code = 40301
	// ToolNotFound: the resource the tool was asked about does not exist.
	ToolNotFound Code = 40402
	// ToolUnavailable: the tool's backend is temporarily unavailable.
	ToolUnavailable Code = 50301
	// ToolRateLimited: the tool's backend is rate limiting.
	ToolRateLimited Code = 42902
	// ToolResultTooLarge: the result is too large for the tool to return
	// or for the agent to use (HTTP 413); asking again for the same thing
	// fails again: ask for less.
	ToolResultTooLarge Code = 41301
)

// Business layer: the tool answered, and the answer is a business failure.
const (
	// ToolBusinessFailed: the response reports a business failure (for
	// example code != 0 in an HTTP-200 body). The downstream code goes into
	// the reason text.
	ToolBusinessFailed Code = 42201
	// ToolResultEmpty: the result is empty and the tool's contract does not
	// accept an empty answer.
	ToolResultEmpty Code = 20401
	// ToolBlocked: the tool reached a wall instead of the content — a
	// captcha, a login page, a rate-limit page — which its contract
	// recognises (a captcha page is blocked, never a successful
	// body: docs/observation-contract.md).
	ToolBlocked Code = 42270
)

type info struct {
	name     string
	layer    Layer
	class    Class
	template string
}

// table is the single source of truth. Order: by layer, then as added.
var table = map[Code]info{
	ArgJSONInvalid:               {"ARG_JSON_INVALID", LayerCall, ClassInvalidRequest, "the arguments of {tool} are not a JSON object: {detail}"},
	ArgRejected:                  {"ARG_REJECTED", LayerCall, ClassInvalidRequest, "argument {field} of {tool} was rejected: {detail}"},
	ToolCallInvalid:              {"TOOL_CALL_INVALID", LayerCall, ClassInvalidRequest, "the tool call is malformed: {detail}"},
	ToolCallCutOff:               {"TOOL_CALL_CUT_OFF", LayerCall, ClassInvalidRequest, "the call of {tool} was not run: the turn ended at the output limit ({reason}), so its arguments may be incomplete"},
	CatalogDenied:                {"CATALOG_DENIED", LayerCall, ClassNone, "tool {tool} is not available in this node"},
	ParamProvenanceMismatch:      {"PARAM_PROVENANCE_MISMATCH", LayerCall, ClassNone, "the value of {param} for {tool} does not come from {source}"},
	ParamProvenanceQueryFirst:    {"PARAM_PROVENANCE_QUERY_FIRST", LayerCall, ClassNone, "{param} of {tool} must come from a result of {source}, and {source} has not returned one yet"},
	ParamProvenanceFollowUpFirst: {"PARAM_PROVENANCE_FOLLOW_UP_FIRST", LayerCall, ClassNone, "{param} of {tool} must come from the user, who has not given it yet"},
	ParamProvenanceRejected:      {"PARAM_PROVENANCE_REJECTED", LayerCall, ClassNone, "the value of {param} for {tool} was refused: {detail}"},
	FingerprintTrip:              {"FINGERPRINT_TRIP", LayerCall, ClassNone, "{tool} was already called {count} times with the same arguments; the last result was: {gist}"},
	ApprovalRequired:             {"APPROVAL_REQUIRED", LayerCall, ClassNone, "the write {tool} needs the user's approval"},
	WritePendingVerify:           {"WRITE_PENDING_VERIFY", LayerCall, ClassNone, "an earlier attempt of the write {tool} has an uncertain result that is not verified yet"},
	WriteInFlight:                {"WRITE_IN_FLIGHT", LayerCall, ClassNone, "the same write {tool} is running right now"},
	ApprovalNotGated:             {"APPROVAL_NOT_GATED", LayerCall, ClassNone, "approval was requested for {tool}, but no call of a write tool is waiting for approval"},
	ApprovalToolMismatch:         {"APPROVAL_TOOL_MISMATCH", LayerCall, ClassNone, "approval was requested for {tool}, but the call waiting for approval is {gated}"},
	FollowUpAnswered:             {"FOLLOW_UP_ANSWERED", LayerCall, ClassNone, "the user already answered this question: {answer}"},
	FollowUpUngrounded:           {"FOLLOW_UP_UNGROUNDED", LayerCall, ClassNone, "the follow-up does not ask for missing information: {detail}"},
	OutputKeyUndeclared:          {"OUTPUT_KEY_UNDECLARED", LayerCall, ClassNone, "output key {key} is not declared"},
	OutputSourceTypeMissing:      {"OUTPUT_SOURCE_TYPE_MISSING", LayerCall, ClassNone, "output {key} has no known source type (got {source})"},
	OutputSourceTypeNotAccepted:  {"OUTPUT_SOURCE_TYPE_NOT_ACCEPTED", LayerCall, ClassNone, "output {key} does not accept source type {source}"},
	OutputSourceRefMissing:       {"OUTPUT_SOURCE_REF_MISSING", LayerCall, ClassNone, "output {key} has no sourceRef"},
	OutputSourceRefUnknown:       {"OUTPUT_SOURCE_REF_UNKNOWN", LayerCall, ClassNone, "source check failed: sourceRef {ref} of output {key} matches no recorded result"},
	OutputValueMismatch:          {"OUTPUT_VALUE_MISMATCH", LayerCall, ClassNone, "source check failed: the value of output {key} differs from {ref}"},
	FinishOutputsMissing:         {"FINISH_OUTPUTS_MISSING", LayerCall, ClassNone, "required outputs are not written: {keys}"},
	OutputValueInvalid:           {"OUTPUT_VALUE_INVALID", LayerCall, ClassNone, "the value of output {key} is not a valid {type}: {detail}"},
	ParamProvenanceStepMissing:   {"PARAM_PROVENANCE_STEP_MISSING", LayerCall, ClassNone, "{param} of {tool} must come from {source}, which this step did not receive"},
	StepNotSatisfied:             {"STEP_NOT_SATISFIED", LayerCall, ClassNone, "the step is not verified as done: it is {status}: {detail}"},
	AnswerClaimsUnverified:       {"ANSWER_CLAIMS_UNVERIFIED", LayerCall, ClassNone, "the answer states {value}, which comes from step {step}, and that step is {status}"},
	AnswerOmitsMissing:           {"ANSWER_OMITS_MISSING", LayerCall, ClassNone, "the answer does not say that {step} is missing ({status}): it must say {text}"},

	ToolError:          {"TOOL_ERROR", LayerExecution, ClassUnknown, "{tool} failed: {detail}"},
	MCPToolError:       {"MCP_TOOL_ERROR", LayerExecution, ClassUnknown, "MCP tool {tool} reported an error: {detail}"},
	ToolUnreachable:    {"TOOL_UNREACHABLE", LayerExecution, ClassTemporarilyUnavailable, "{tool} could not be reached: {detail}"},
	ToolIOError:        {"TOOL_IO_ERROR", LayerExecution, ClassUnknown, "{tool} hit an I/O error: {detail}"},
	MCPRPCError:        {"MCP_RPC_ERROR", LayerExecution, ClassUnknown, "the MCP server answered the call to {tool} with an error: {detail}"},
	ToolResultInvalid:  {"TOOL_RESULT_INVALID", LayerExecution, ClassResultInvalid, "the result of {tool} does not have the agreed shape: {detail}"},
	MCPInvalidParams:   {"MCP_INVALID_PARAMS", LayerExecution, ClassInvalidRequest, "the MCP server refused the parameters of {tool}: {detail}"},
	ToolTimeout:        {"TOOL_TIMEOUT", LayerExecution, ClassTimeout, "{tool} did not answer in time: {detail}"},
	ToolForbidden:      {"TOOL_FORBIDDEN", LayerExecution, ClassForbidden, "{tool} was refused permission: {detail}"},
	ToolNotFound:       {"TOOL_NOT_FOUND", LayerExecution, ClassNotFound, "{tool} found no such resource: {detail}"},
	ToolUnavailable:    {"TOOL_UNAVAILABLE", LayerExecution, ClassTemporarilyUnavailable, "{tool} is temporarily unavailable: {detail}"},
	ToolRateLimited:    {"TOOL_RATE_LIMITED", LayerExecution, ClassTemporarilyUnavailable, "{tool} is rate limited: {detail}"},
	ToolResultTooLarge: {"TOOL_RESULT_TOO_LARGE", LayerExecution, ClassTooLarge, "the result of {tool} is too large: {detail}"},

	ToolBusinessFailed: {"TOOL_BUSINESS_FAILED", LayerBusiness, ClassBusinessRejected, "business failure [{code}]: {detail}"},
	ToolResultEmpty:    {"TOOL_RESULT_EMPTY", LayerBusiness, ClassEmpty, "{tool} returned an empty result, which its contract does not accept"},
	ToolBlocked:        {"TOOL_BLOCKED", LayerBusiness, ClassBusinessRejected, "{tool} answered with {wall}, not with its content: {detail}"},
}

var (
	byName = func() map[string]Code {
		m := make(map[string]Code, len(table))
		for c, i := range table {
			m[i.name] = c
		}
		return m
	}()
	sorted = func() []Code {
		s := make([]Code, 0, len(table))
		for c := range table {
			s = append(s, c)
		}
		slices.Sort(s)
		return s
	}()
)

// All returns every defined code in ascending id order. The slice is a fresh
// copy on every call.
func All() []Code { return slices.Clone(sorted) }

// IsValid reports whether c is a defined code.
func (c Code) IsValid() bool {
	_, ok := table[c]
	return ok
}

// String returns the stable name (e.g. APPROVAL_TOOL_MISMATCH), or
// "CODE(n)" for an undefined value.
func (c Code) String() string {
	if i, ok := table[c]; ok {
		return i.name
	}
	return "CODE(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// ID returns the stable numeric id, which is the Code's own value.
func (c Code) ID() uint32 { return uint32(c) }

// Layer returns the layer of success the code belongs to; 0 if c is undefined.
func (c Code) Layer() Layer { return table[c].layer }

// Class returns the execution status class ([ClassNone] for codes decided
// before execution and for undefined codes).
func (c Code) Class() Class { return table[c].class }

// Retryable reports whether the runtime may retry a call that failed with c
// without being told otherwise: true exactly for
// [ClassTemporarilyUnavailable]. Per-tool retry policies may narrow this; the
// model never decides it.
func (c Code) Retryable() bool { return c.Class() == ClassTemporarilyUnavailable }

// Template returns the English reason template. Placeholders are written
// {name} and are filled by the prompt package. A template states what
// happened and never advises; advice lives in the next step. Templates are
// API: changing one is a breaking change.
func (c Code) Template() string { return table[c].template }

// Parse returns the code with the given stable name.
func Parse(name string) (Code, error) {
	if c, ok := byName[name]; ok {
		return c, nil
	}
	return 0, fmt.Errorf("errcode: unknown code name %q", name)
}

// MarshalText implements [encoding.TextMarshaler]: the stable name. An
// undefined code is an error.
func (c Code) MarshalText() ([]byte, error) {
	i, ok := table[c]
	if !ok {
		return nil, fmt.Errorf("errcode: cannot marshal undefined code %d", uint32(c))
	}
	return []byte(i.name), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [Parse]; on error
// c is left unchanged.
func (c *Code) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
