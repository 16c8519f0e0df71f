package reacttest

import (
	"encoding/json"
	"fmt"

	"github.com/reactguard/reactguard/react"
)

// builtinCall returns a call of a built-in tool with args encoded as JSON.
func builtinCall(id, name string, args map[string]any) react.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("reacttest: arguments of %s: %v", name, err))
	}
	return react.ToolCall{ID: id, Name: name, Args: b}
}

// Approval returns a call of builtin_node_approval asking the user to
// approve the waiting call of toolName; reason may be empty.
func Approval(id, toolName, reason string) react.ToolCall {
	args := map[string]any{"tool": toolName}
	if reason != "" {
		args["reason"] = reason
	}
	return builtinCall(id, react.ToolApproval, args)
}

// FollowUp returns a call of builtin_node_follow_up asking question.
func FollowUp(id, question string) react.ToolCall {
	return builtinCall(id, react.ToolFollowUp, map[string]any{"question": question})
}

// Finish returns a call of builtin_node_finish; summary may be empty.
func Finish(id, summary string) react.ToolCall {
	args := map[string]any{}
	if summary != "" {
		args["summary"] = summary
	}
	return builtinCall(id, react.ToolFinish, args)
}

// FailNode returns a call of builtin_node_fail with reason.
func FailNode(id, reason string) react.ToolCall {
	return builtinCall(id, react.ToolFail, map[string]any{"reason": reason})
}

// OutputSet returns a call of builtin_output_set setting key to value (any
// value encoding/json accepts; it panics otherwise) from the given source
// type; ref is the sourceRef (the call id of a result) and may be empty.
// A zero source leaves sourceType out, as a careless model might.
func OutputSet(id, key string, value any, source react.SourceType, ref string) react.ToolCall {
	args := map[string]any{"key": key, "value": value}
	if source != 0 {
		args["sourceType"] = source.String()
	}
	if ref != "" {
		args["sourceRef"] = ref
	}
	return builtinCall(id, react.ToolOutputSet, args)
}
