package react

import "strings"

// CutOff reports whether a turn's finish reason ([Response].FinishReason,
// in the API's own words) says that the model stopped at its output
// limit: length (OpenAI Chat Completions and compatible servers),
// max_tokens (Anthropic, Amazon Bedrock), MAX_TOKENS (Google Gemini),
// max_output_tokens (the OpenAI Responses API's incomplete reason), or
// model_context_window_exceeded (Anthropic and Bedrock, when the context
// window ended the answer). Case is ignored.
//
// The tool calls of such a turn may be incomplete even when their
// arguments parse (a JSON object cut after a complete member still
// parses), so the loop runs none of them: each is answered REJECTED
// TOOL_CALL_CUT_OFF with a next step (call again with shorter arguments
// or fewer calls, or have the limit raised), which counts one stall like
// any rejection. This holds for every model, the adapters' and a host's
// own: the finish reason decides. A turn that was cut off without tool
// calls is an ordinary turn (its text is kept).
func CutOff(finishReason string) bool {
	switch strings.ToLower(finishReason) {
	case "length", "max_tokens", "max_output_tokens", "model_context_window_exceeded":
		return true
	}
	return false
}
