package openairesponses_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/internal/chattest"
)

var loopCalls = chattest.LoopCalls{Read: "call_list_1", Write: "call_create_1", Approval: "call_approve_1", Rewrite: "call_create_2"}

// The whole loop on the adapter, answered and streamed: every request a
// valid input list; the reasoning item of the first turn goes back
// before its function_call, with its encrypted content, and without
// previous_response_id.
func TestLoopSuspendsForApprovalAndResumes(t *testing.T) {
	for _, a := range []chattest.Adapter{adapter, streaming} {
		s := a.RunApprovalLoop(t, "run-responses", loopCalls)
		in := items(s.Requests()[1])
		assert.Equal(t, "reasoning", in[1]["type"])
		assert.Equal(t, "gAAAAABoLoop1EncryptedReasoning==", in[1]["encrypted_content"])
		assert.Equal(t, "function_call", in[2]["type"])
		assert.Equal(t, "fc_loop1", in[2]["id"], "the function_call item keeps its id")
		assert.NotContains(t, s.Requests()[1], "previous_response_id")
		assert.Contains(t, s.Requests()[0]["instructions"], "Create the website the user asks for")
		assert.Equal(t, []any{"reasoning.encrypted_content"}, s.Requests()[0]["include"])
	}
}

func TestLoopModelErrorKeepsSnapshot(t *testing.T) {
	adapter.RunModelErrorLoop(t, reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After": "2"}})
	streaming.RunModelErrorLoop(t, reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After": "2"}})
}

// An incomplete response (max_output_tokens) runs none of its calls.
func TestCutOffCallNeverRuns(t *testing.T) {
	adapter.RunCutOffLoop(t, reply{File: "response_cut_off.json"}, reply{File: "loop_5_finish.json"}, "call_cut_1", nil)
	streaming.RunCutOffLoop(t, sse(t, "response_cut_off.json"), sse(t, "loop_5_finish.json"), "call_cut_1", nil)
}
