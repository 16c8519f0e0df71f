package prompt

var englishTexts = map[Key]string{
	NextApproval:           "call builtin_node_approval with tool {tool} to ask the user to approve this exact call; do not call {tool} again before the answer",
	NextWriteInFlight:      "wait for the running call of {tool} to finish; do not start it again",
	NextWritePendingVerify: "wait until the result of the earlier {tool} call is verified; do not start it again",
	NextApprovedFailed:     "use builtin_node_follow_up to tell the user why the approved {tool} failed and ask how to proceed; call builtin_node_fail if the user does not want to go on; do not remedy it with another write on your own",
	NextCatalog:            "use one of the available tools: {tools}",
	NextFixJSON:            "send the arguments of {tool} again as one JSON object that matches its schema",
	NextFixArgs:            "correct {field} ({expect}) and call {tool} again; if you cannot, ask the user with builtin_node_follow_up or call builtin_node_fail with the reason",
	NextProvenance:         "take {param} from {source} as it was given, then call {tool} again",
	NextQueryFirst:         "call {source} first and take {param} from its result",
	NextFollowUpFirst:      "ask the user for {param} with builtin_node_follow_up",
	NextProvenanceRejected: "choose another value for {param}, or ask the user with builtin_node_follow_up",
	NextFingerprint:        "use the earlier result instead of calling {tool} again with the same arguments; if it does not help, change your approach or call builtin_node_fail",
	NextBusiness:           "tell the user about the failure with builtin_node_follow_up and ask how to proceed, or call builtin_node_fail with the reason; do not repeat the same call",
	NextEmpty:              "refine the query, ask the user to narrow it down, or state that nothing was found; do not invent a result",
	NextResultInvalid:      "do not rely on this result; call builtin_node_fail with the reason if the task cannot go on without it",
	NextTimeout:            "the tool may be slow or down; continue without it if you can, otherwise call builtin_node_fail with the reason",
	NextUnreachable:        "the tool cannot be reached now; continue without it if you can, otherwise call builtin_node_fail with the reason",
	NextRetryLater:         "the runtime retries where allowed; continue without the tool if you can, otherwise call builtin_node_fail with the reason",
	NextForbidden:          "do not try other values to get around the refusal; tell the user with builtin_node_follow_up or call builtin_node_fail",
	NextNotFound:           "check the identifier with the user via builtin_node_follow_up, or take it from an earlier result",
	NextToolError:          "do not repeat the same call; continue without it if you can, otherwise call builtin_node_fail with the reason",
	NextCallWriteFirst:     "call the write tool directly; request approval only after the runtime stops it and asks for approval",
	NextApprovalTool:       "call builtin_node_approval with tool {gated}, the call that is waiting for approval",
	NextUseAnswer:          "continue with the user's answer: {answer}",
	NextWriteDirectly:      "call the write tool directly; the approval step confirms it with the user",
	NextOutputKeys:         "use one of the declared output keys: {keys}",
	NextOutputSourceTypes:  "use one of the source types that {key} accepts: {sources}",
	NextOutputSourceRef:    "set sourceRef to the call id of the successful result the value comes from",
	NextOutputValue:        "copy the value exactly as it appears in {ref}",
	NextOutputOptional:     "{key} is optional: you may also skip it and call builtin_node_finish",
	NextFinishMissing:      "set {keys} with builtin_output_set first, or call builtin_node_fail if you cannot",
	NextCallTool:           "answer with a tool call: builtin_node_finish when the task is done, builtin_node_follow_up to ask the user, builtin_node_fail if it cannot be done",
	NextFixCall:            "send the tool call again with a unique call id and a tool name",
	NextSkipped:            "call {tool} again in a later turn if it is still needed",
	NextMCPInvalidParams:   "check the parameters against the schema of {tool} and call it again with corrected ones",
	NextCatalogOffered:     "call only the tools offered to you in this node",

	ReasonNoToolCalls:     "the turn contained no tool call",
	ReasonBusinessFailed:  "business failure: {detail}",
	ReasonSkipped:         "{tool} was not run because an earlier call of the same turn did not succeed",
	ReasonApprovedFailed:  "the approved call of {tool} failed: {detail}",
	ReasonMissingArgument: "required argument {field} of {tool} is missing",
	ReasonToolPanicked:    "{tool} failed: it stopped with an internal error",

	ResultApprovalGranted:  "the user approved the call of {tool}",
	ResultApprovalDeclined: "the user declined the call of {tool}{detail}",
	ResultFollowUpAnswer:   "the user answered: {answer}",
	ResultOutputSet:        "output {key} is set",
	ResultWriteReused:      "{tool} already succeeded for these arguments; the earlier result is reused",
	ResultTruncated:        "[result truncated to {kept} of {total} bytes; full payload: {ref}]",
	ResultToolSucceeded:    "{tool} succeeded",

	SystemRules: `You complete the task by calling tools. Rules:
1. When a tool result is not a success, it ends with "Next:". Do what follows "Next:". Do not retry the same tool with varied arguments.
2. Call a write tool directly. Only after the runtime stops it and asks for approval, call builtin_node_approval for that call. Never ask the user to confirm a write with builtin_node_follow_up.
3. Use builtin_node_follow_up only to ask the user for information you do not have, and never ask again what the user has answered.
4. Take every parameter value from the user's words or from an earlier successful tool result, as the tool's contract requires.
5. Record a declared output with builtin_output_set only when you have its value, naming the result it comes from; optional outputs may be left out.
6. Call builtin_node_finish when the task is done, or builtin_node_fail with the reason when it cannot be done.`,
	PhaseMissing:  "Required outputs not yet set: {keys}.",
	PhaseComplete: "All required outputs are set: {keys}.",
	MessageFormat: "{reason}. Next: {next}",

	SourceUser:   "the user's own words",
	SourceResult: "field {field} of a {tool} result",
}
