package prompt

import "strconv"

// Key names one text of a catalog other than a code's reason. Values are
// stable; the zero value names nothing.
type Key uint16

// Next steps: advice only (the specification's NEXT_*).
const (
	NextApproval           Key = 1  // NEXT_APPROVAL: call builtin_node_approval for the gated write {tool}
	NextWriteInFlight      Key = 2  // NEXT_WRITE_IN_FLIGHT: wait for the running write {tool}
	NextWritePendingVerify Key = 3  // NEXT_WRITE_PENDING_VERIFY: wait for verification of {tool}
	NextApprovedFailed     Key = 4  // NEXT_APPROVED_FAILED: tell the user, ask how to proceed, never remedy with another write
	NextCatalog            Key = 5  // NEXT_CATALOG: use one of {tools}
	NextFixJSON            Key = 6  // NEXT_FIX_JSON: resend {tool}'s arguments as one JSON object
	NextFixArgs            Key = 7  // NEXT_FIX_ARGS: fix {field} ({expect}) and call {tool} again
	NextProvenance         Key = 8  // NEXT_PROVENANCE: take {param} from {source}
	NextQueryFirst         Key = 9  // NEXT_QUERY_FIRST: call {source} first
	NextFollowUpFirst      Key = 10 // NEXT_FOLLOW_UP_FIRST: ask the user for {param}
	NextProvenanceRejected Key = 11 // NEXT_PROVENANCE_REJECTED: choose another value for {param}
	NextFingerprint        Key = 12 // NEXT_FINGERPRINT: use the earlier result, do not repeat
	NextBusiness           Key = 13 // NEXT_BUSINESS: tell the user about the business failure
	NextEmpty              Key = 14 // NEXT_EMPTY: refine the query or report that nothing was found
	NextResultInvalid      Key = 15 // NEXT_RESULT_INVALID: do not rely on the result
	NextTimeout            Key = 16 // NEXT_TIMEOUT: the tool may be slow; try later or fail
	NextUnreachable        Key = 17 // NEXT_UNREACHABLE: the tool is down; try later or fail
	NextRetryLater         Key = 18 // NEXT_RETRY_LATER: temporarily unavailable or rate limited
	NextForbidden          Key = 19 // NEXT_FORBIDDEN: no permission; do not probe
	NextNotFound           Key = 20 // NEXT_NOT_FOUND: check the identifier with the user
	NextToolError          Key = 21 // NEXT_TOOL_ERROR: tell the user or fail
	NextCallWriteFirst     Key = 22 // NEXT_CALL_WRITE_FIRST: call the write tool directly (APPROVAL_NOT_GATED)
	NextApprovalTool       Key = 23 // NEXT_APPROVAL_TOOL: approve {gated} instead (APPROVAL_TOOL_MISMATCH)
	NextUseAnswer          Key = 24 // NEXT_USE_ANSWER: continue with the user's answer (FOLLOW_UP_ANSWERED)
	NextWriteDirectly      Key = 25 // NEXT_WRITE_DIRECTLY: call the write tool; approval confirms it (FOLLOW_UP_UNGROUNDED)
	NextOutputKeys         Key = 26 // NEXT_OUTPUT_KEYS: use one of the declared keys {keys}
	NextOutputSourceTypes  Key = 27 // NEXT_OUTPUT_SOURCE_TYPES: use one of {sources}
	NextOutputSourceRef    Key = 28 // NEXT_OUTPUT_SOURCE_REF: give the call id of the result
	NextOutputValue        Key = 29 // NEXT_OUTPUT_VALUE: copy the value exactly from the source
	NextOutputOptional     Key = 30 // NEXT_OUTPUT_OPTIONAL: optional output may be skipped; finish
	NextFinishMissing      Key = 31 // NEXT_FINISH_MISSING: set {keys} first
	NextCallTool           Key = 32 // NEXT_CALL_TOOL: answer with a tool call
	NextFixCall            Key = 33 // NEXT_FIX_CALL: resend the tool call with an id and a name
	NextSkipped            Key = 34 // NEXT_SKIPPED: call it again if still needed
	NextMCPInvalidParams   Key = 35 // NEXT_MCP_INVALID_PARAMS: check the tool's parameters
	NextCatalogOffered     Key = 36 // NEXT_CATALOG_OFFERED: call only the tools offered in this node (the list is not at hand)
	NextTooLarge           Key = 37 // NEXT_TOO_LARGE: ask for less (narrower query, fewer fields or items)
)

// Reasons without an error code of their own.
const (
	ReasonNoToolCalls     Key = 100 // REASON_NO_TOOL_CALLS: the turn had no tool call
	ReasonBusinessFailed  Key = 101 // REASON_BUSINESS_FAILED: business failure without a downstream code
	ReasonSkipped         Key = 102 // REASON_SKIPPED: the call was not run because an earlier call of the turn did not succeed
	ReasonApprovedFailed  Key = 103 // REASON_APPROVED_FAILED: the approved write failed
	ReasonMissingArgument Key = 104 // REASON_MISSING_ARGUMENT: a required argument is missing
	ReasonToolPanicked    Key = 105 // REASON_TOOL_PANICKED: the tool stopped with an internal error (TOOL_ERROR)
	ReasonSkippedExited   Key = 106 // REASON_SKIPPED_EXITED: the call was not run because an earlier call of the turn, {by}, exited the node
)

// Details: the {detail} of an execution failure's reason when the tool's
// error carries nothing written for the model (its raw text goes to the log
// only).
const (
	DetailWithheld Key = 150 // DETAIL_WITHHELD: the error's details are not shown
	DetailDeadline Key = 151 // DETAIL_DEADLINE: the tool's own deadline, {timeout}, passed
)

// Results of control tools, and the verdicts a user gives.
const (
	ResultApprovalGranted  Key = 200 // RESULT_APPROVAL_GRANTED
	ResultApprovalDeclined Key = 201 // RESULT_APPROVAL_DECLINED
	ResultFollowUpAnswer   Key = 202 // RESULT_FOLLOW_UP_ANSWER
	ResultOutputSet        Key = 203 // RESULT_OUTPUT_SET
	ResultWriteReused      Key = 204 // RESULT_WRITE_REUSED
	ResultTruncated        Key = 205 // RESULT_TRUNCATED
	ResultToolSucceeded    Key = 206 // RESULT_TOOL_SUCCEEDED
	ResultTruncatedNotKept Key = 207 // RESULT_TRUNCATED_NOT_KEPT: a cut result whose full payload was not kept
)

// Prompt texts.
const (
	SystemRules   Key = 300 // SYSTEM_RULES: the ReAct rules of §7.3
	PhaseMissing  Key = 301 // PHASE_MISSING: required outputs not yet written: {keys}
	PhaseComplete Key = 302 // PHASE_COMPLETE: all required outputs are written
	MessageFormat Key = 303 // MESSAGE_FORMAT: "{reason}. Next: {next}"
)

// Names of parameter sources, filled into the {source} placeholder of the
// PARAM_PROVENANCE_* reasons and NEXT_PROVENANCE.
const (
	SourceUser   Key = 400 // SOURCE_USER: the user's own words
	SourceResult Key = 401 // SOURCE_RESULT: field {field} of a {tool} result
)

// Texts of the loop and its built-in tools (package react).
const (
	ReasonCallWithoutID      Key = 500 // REASON_CALL_WITHOUT_ID: {detail} of TOOL_CALL_INVALID for a call without id
	ReasonCallIDRepeated     Key = 501 // REASON_CALL_ID_REPEATED: {detail} of TOOL_CALL_INVALID for a call id used before
	ReasonCallWithoutName    Key = 502 // REASON_CALL_WITHOUT_NAME: {detail} of TOOL_CALL_INVALID for a call without tool name
	ReasonArgumentEmpty      Key = 503 // REASON_ARGUMENT_EMPTY: {detail} of ARG_REJECTED for an empty required argument
	ReasonConfirmsWrite      Key = 504 // REASON_CONFIRMS_WRITE: {detail} of FOLLOW_UP_UNGROUNDED: asks to confirm a write
	ReasonEchoesUser         Key = 505 // REASON_ECHOES_USER: {detail} of FOLLOW_UP_UNGROUNDED: repeats the user's words
	NextUseUserWords         Key = 506 // NEXT_USE_USER_WORDS: continue with what the user said (FOLLOW_UP_UNGROUNDED without a write tool)
	ExpectNonEmptyText       Key = 507 // EXPECT_NON_EMPTY_TEXT: {expect} of NEXT_FIX_ARGS
	ResultNodeFinished       Key = 508 // RESULT_NODE_FINISHED: builtin_node_finish accepted
	ResultNodeFailed         Key = 509 // RESULT_NODE_FAILED: builtin_node_fail accepted, with {reason}
	ToolApprovalDescription  Key = 510 // TOOL_APPROVAL_DESCRIPTION: description of builtin_node_approval
	ToolFollowUpDescription  Key = 511 // TOOL_FOLLOW_UP_DESCRIPTION: description of builtin_node_follow_up
	ToolFailDescription      Key = 512 // TOOL_FAIL_DESCRIPTION: description of builtin_node_fail
	ToolFinishDescription    Key = 513 // TOOL_FINISH_DESCRIPTION: description of builtin_node_finish
	ToolOutputSetDescription Key = 514 // TOOL_OUTPUT_SET_DESCRIPTION: description of builtin_output_set
	ReasonCallIDTooLong      Key = 515 // REASON_CALL_ID_TOO_LONG: {detail} of TOOL_CALL_INVALID for a call id longer than {max} bytes
	ReasonCallNameTooLong    Key = 516 // REASON_CALL_NAME_TOO_LONG: {detail} of TOOL_CALL_INVALID for a tool name longer than {max} bytes
	NextCallCutOff           Key = 520 // NEXT_CALL_CUT_OFF: call {tool} again with shorter arguments (or fewer calls a turn), or ask for a higher output limit (TOOL_CALL_CUT_OFF)
)

// Texts of conversations (threads of messages), text answers and typed
// outputs (package react).
const (
	HistorySummary        Key = 530 // HISTORY_SUMMARY: the host's summary of the {count} earlier messages not shown, {summary}
	HistoryOmitted        Key = 531 // HISTORY_OMITTED: {count} earlier messages of the conversation are not shown
	SystemTextAnswers     Key = 532 // SYSTEM_TEXT_ANSWERS: the rule added with Node.TextAnswers: a reply in text ends the turn
	NextTextAnswerOutputs Key = 533 // NEXT_TEXT_ANSWER_OUTPUTS: set {keys} before answering in text (Node.TextAnswers)
	OutputsDeclared       Key = 534 // OUTPUTS_DECLARED: the typed outputs of the node, {outputs}
	NextOutputType        Key = 535 // NEXT_OUTPUT_TYPE: set {key} again with a value of {type} (OUTPUT_VALUE_INVALID)
	NextTextAnswerCutOff  Key = 536 // NEXT_TEXT_ANSWER_CUT_OFF: a text answer cut off at the output limit ends nothing; answer again, shorter (Node.TextAnswers)
)

var keyNames = map[Key]string{
	NextApproval:           "NEXT_APPROVAL",
	NextWriteInFlight:      "NEXT_WRITE_IN_FLIGHT",
	NextWritePendingVerify: "NEXT_WRITE_PENDING_VERIFY",
	NextApprovedFailed:     "NEXT_APPROVED_FAILED",
	NextCatalog:            "NEXT_CATALOG",
	NextFixJSON:            "NEXT_FIX_JSON",
	NextFixArgs:            "NEXT_FIX_ARGS",
	NextProvenance:         "NEXT_PROVENANCE",
	NextQueryFirst:         "NEXT_QUERY_FIRST",
	NextFollowUpFirst:      "NEXT_FOLLOW_UP_FIRST",
	NextProvenanceRejected: "NEXT_PROVENANCE_REJECTED",
	NextFingerprint:        "NEXT_FINGERPRINT",
	NextBusiness:           "NEXT_BUSINESS",
	NextEmpty:              "NEXT_EMPTY",
	NextResultInvalid:      "NEXT_RESULT_INVALID",
	NextTimeout:            "NEXT_TIMEOUT",
	NextUnreachable:        "NEXT_UNREACHABLE",
	NextRetryLater:         "NEXT_RETRY_LATER",
	NextForbidden:          "NEXT_FORBIDDEN",
	NextNotFound:           "NEXT_NOT_FOUND",
	NextToolError:          "NEXT_TOOL_ERROR",
	NextCallWriteFirst:     "NEXT_CALL_WRITE_FIRST",
	NextApprovalTool:       "NEXT_APPROVAL_TOOL",
	NextUseAnswer:          "NEXT_USE_ANSWER",
	NextWriteDirectly:      "NEXT_WRITE_DIRECTLY",
	NextOutputKeys:         "NEXT_OUTPUT_KEYS",
	NextOutputSourceTypes:  "NEXT_OUTPUT_SOURCE_TYPES",
	NextOutputSourceRef:    "NEXT_OUTPUT_SOURCE_REF",
	NextOutputValue:        "NEXT_OUTPUT_VALUE",
	NextOutputOptional:     "NEXT_OUTPUT_OPTIONAL",
	NextFinishMissing:      "NEXT_FINISH_MISSING",
	NextCallTool:           "NEXT_CALL_TOOL",
	NextFixCall:            "NEXT_FIX_CALL",
	NextSkipped:            "NEXT_SKIPPED",
	NextMCPInvalidParams:   "NEXT_MCP_INVALID_PARAMS",
	NextCatalogOffered:     "NEXT_CATALOG_OFFERED",
	NextTooLarge:           "NEXT_TOO_LARGE",

	ReasonNoToolCalls:     "REASON_NO_TOOL_CALLS",
	ReasonBusinessFailed:  "REASON_BUSINESS_FAILED",
	ReasonSkipped:         "REASON_SKIPPED",
	ReasonApprovedFailed:  "REASON_APPROVED_FAILED",
	ReasonMissingArgument: "REASON_MISSING_ARGUMENT",
	ReasonToolPanicked:    "REASON_TOOL_PANICKED",
	ReasonSkippedExited:   "REASON_SKIPPED_EXITED",

	DetailWithheld: "DETAIL_WITHHELD",
	DetailDeadline: "DETAIL_DEADLINE",

	ResultApprovalGranted:  "RESULT_APPROVAL_GRANTED",
	ResultApprovalDeclined: "RESULT_APPROVAL_DECLINED",
	ResultFollowUpAnswer:   "RESULT_FOLLOW_UP_ANSWER",
	ResultOutputSet:        "RESULT_OUTPUT_SET",
	ResultWriteReused:      "RESULT_WRITE_REUSED",
	ResultTruncated:        "RESULT_TRUNCATED",
	ResultToolSucceeded:    "RESULT_TOOL_SUCCEEDED",
	ResultTruncatedNotKept: "RESULT_TRUNCATED_NOT_KEPT",

	SystemRules:   "SYSTEM_RULES",
	PhaseMissing:  "PHASE_MISSING",
	PhaseComplete: "PHASE_COMPLETE",
	MessageFormat: "MESSAGE_FORMAT",

	SourceUser:   "SOURCE_USER",
	SourceResult: "SOURCE_RESULT",

	ReasonCallWithoutID:      "REASON_CALL_WITHOUT_ID",
	ReasonCallIDRepeated:     "REASON_CALL_ID_REPEATED",
	ReasonCallWithoutName:    "REASON_CALL_WITHOUT_NAME",
	ReasonArgumentEmpty:      "REASON_ARGUMENT_EMPTY",
	ReasonConfirmsWrite:      "REASON_CONFIRMS_WRITE",
	ReasonEchoesUser:         "REASON_ECHOES_USER",
	NextUseUserWords:         "NEXT_USE_USER_WORDS",
	ExpectNonEmptyText:       "EXPECT_NON_EMPTY_TEXT",
	ResultNodeFinished:       "RESULT_NODE_FINISHED",
	ResultNodeFailed:         "RESULT_NODE_FAILED",
	ToolApprovalDescription:  "TOOL_APPROVAL_DESCRIPTION",
	ToolFollowUpDescription:  "TOOL_FOLLOW_UP_DESCRIPTION",
	ToolFailDescription:      "TOOL_FAIL_DESCRIPTION",
	ToolFinishDescription:    "TOOL_FINISH_DESCRIPTION",
	ToolOutputSetDescription: "TOOL_OUTPUT_SET_DESCRIPTION",
	ReasonCallIDTooLong:      "REASON_CALL_ID_TOO_LONG",
	ReasonCallNameTooLong:    "REASON_CALL_NAME_TOO_LONG",
	NextCallCutOff:           "NEXT_CALL_CUT_OFF",

	HistorySummary:        "HISTORY_SUMMARY",
	HistoryOmitted:        "HISTORY_OMITTED",
	SystemTextAnswers:     "SYSTEM_TEXT_ANSWERS",
	NextTextAnswerOutputs: "NEXT_TEXT_ANSWER_OUTPUTS",
	OutputsDeclared:       "OUTPUTS_DECLARED",
	NextOutputType:        "NEXT_OUTPUT_TYPE",
	NextTextAnswerCutOff:  "NEXT_TEXT_ANSWER_CUT_OFF",
}

// String returns the stable name, e.g. NEXT_APPROVAL, or "KEY(n)".
func (k Key) String() string {
	if n, ok := keyNames[k]; ok {
		return n
	}
	return "KEY(" + strconv.Itoa(int(k)) + ")"
}

// IsValid reports whether k names a text.
func (k Key) IsValid() bool {
	_, ok := keyNames[k]
	return ok
}

// Keys returns every key in ascending order.
func Keys() []Key {
	out := make([]Key, 0, len(keyNames))
	for k := range keyNames {
		out = append(out, k)
	}
	sortKeys(out)
	return out
}
