package bedrock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/internal/chattest"
)

var loopCalls = chattest.LoopCalls{Read: "tooluse_list_1", Write: "tooluse_create_1", Approval: "tooluse_approve_1", Rewrite: "tooluse_create_2"}

// The whole loop on Converse and on ConverseStream: every request a valid
// history, the first turn's reasoning block sent back with its signature
// before its text and toolUse.
func TestLoopSuspendsForApprovalAndResumes(t *testing.T) {
	for _, a := range []chattest.Adapter{adapter, streaming} {
		s := a.RunApprovalLoop(t, "run-bedrock", loopCalls)
		asst := content(messages(s.Requests()[1])[1])
		assert.Equal(t, map[string]any{"reasoningContent": map[string]any{"reasoningText": map[string]any{"text": "List the spaces first.", "signature": "ErUBCkgIBRABGAIiQL0sig"}}}, asst[0])
		assert.Equal(t, map[string]any{"text": "Let me look."}, asst[1])
		assert.Contains(t, asst[2], "toolUse")
		sys := s.Requests()[0]["system"].([]any)
		assert.Contains(t, sys[0].(map[string]any)["text"], "Create the website the user asks for")
	}
}

func TestLoopModelErrorKeepsSnapshot(t *testing.T) {
	throttled := reply{Status: 429, File: "error_throttling.json", Header: map[string]string{"X-Amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}
	adapter.RunModelErrorLoop(t, throttled)
	streaming.RunModelErrorLoop(t, throttled)
}

// A message that stopped for max_tokens runs none of its calls.
func TestCutOffCallNeverRuns(t *testing.T) {
	adapter.RunCutOffLoop(t, reply{File: "converse_cut_off.json"}, reply{File: "loop_5_finish.json"}, "tooluse_cut_1", nil)
	streaming.RunCutOffLoop(t, streamed(t, "converse_cut_off.json"), streamed(t, "loop_5_finish.json"), "tooluse_cut_1", nil)
}
