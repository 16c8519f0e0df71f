package gemini_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/internal/chattest"
)

var loopCalls = chattest.LoopCalls{Read: "fc_list_1", Write: "fc_create_1", Approval: "fc_approve_1", Rewrite: "fc_create_2"}

// The whole loop on the adapter (chattest.Adapter.RunApprovalLoop): read,
// write deferred for approval, suspension, resume in a new loop with a
// new model, the write once, finish; every request a valid Gemini
// history. The read's thought signature goes back on its functionCall
// part.
func TestLoopSuspendsForApprovalAndResumes(t *testing.T) {
	s := adapter.RunApprovalLoop(t, "run-gemini", loopCalls)
	model := contents(s.Requests()[1])[1]
	assert.Equal(t, "model", model["role"])
	assert.Equal(t, "c2lnbmF0dXJlLTE=", parts(model)[0]["thoughtSignature"], "the signature travels with its part")
	sys := s.Requests()[0]["systemInstruction"].(map[string]any)
	assert.Contains(t, parts(sys)[0]["text"], "Create the website the user asks for", "the node's instructions are the system instruction")
}

// The same scenario with every turn streamed.
func TestLoopStreamed(t *testing.T) {
	streaming.RunApprovalLoop(t, "run-gemini-stream", loopCalls)
	streaming.RunModelErrorLoop(t, reply{Status: 429, File: "error_rate_limit.json"})
}

func TestLoopModelErrorKeepsSnapshot(t *testing.T) {
	adapter.RunModelErrorLoop(t, reply{Status: 429, File: "error_rate_limit.json"})
}

// A candidate that ended for MAX_TOKENS runs none of its calls, even one
// whose arguments parse: answered or streamed.
func TestCutOffCallNeverRuns(t *testing.T) {
	adapter.RunCutOffLoop(t, reply{File: "response_cut_off.json"}, reply{File: "loop_5_finish.json"}, "fc_cut_1", nil)
	streaming.RunCutOffLoop(t, sse(t, "response_cut_off.json"), sse(t, "loop_5_finish.json"), "fc_cut_1", nil)
}
