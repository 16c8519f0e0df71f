package openai_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

// A completion that ended for length (finish_reason "length") runs none
// of its calls, even one whose arguments parse: answered or streamed.
func TestCutOffCallNeverRuns(t *testing.T) {
	adapter.RunCutOffLoop(t, reply{File: "completion_cut_off.json"}, reply{File: "loop_5_finish.json"}, "call_cut_1", nil)
	adapter.RunCutOffLoop(t, streamed(t, "completion_cut_off.json"), streamed(t, "loop_5_finish.json"), "call_cut_1",
		func(s *chattest.Server) react.Model { return newModel(t, s, &openai.Options{}) })
}

// streamed is the canned completion in file as the API streams it.
func streamed(t *testing.T, file string) reply {
	body, err := os.ReadFile("testdata/" + file)
	require.NoError(t, err)
	return reply{Body: chattest.OpenAIStream(string(body)), ContentType: "text/event-stream"}
}
