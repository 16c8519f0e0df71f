package anthropic_test

import (
	"context"
	"encoding/json"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/anthropic"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

// streamed is the canned message in file as the API streams it.
func streamed(t *testing.T, file string) reply {
	body, err := os.ReadFile("testdata/" + file)
	require.NoError(t, err)
	return reply{Body: chattest.AnthropicStream(string(body)), ContentType: "text/event-stream"}
}

// Text blocks around tool_use blocks keep their order and separation when
// the turn is sent back, and the thinking block goes back with its
// signature: answered or streamed, the next request holds the blocks as
// the API sent them. The turn's text has the two texts on two lines.
func TestReplayKeepsBlocks(t *testing.T) {
	for _, stream := range []bool{false, true} {
		first, finish := reply{File: "message_interleaved.json"}, reply{File: "loop_5_finish.json"}
		if stream {
			first, finish = streamed(t, "message_interleaved.json"), streamed(t, "loop_5_finish.json")
		}
		s := adapter.NewServer(t, first, finish)
		var creates atomic.Int32
		var text string
		loop, err := react.New(react.Config{
			Model: newModel(t, s, &anthropic.Options{NoStream: !stream}), Tools: chattest.SiteCatalog(&creates), Guards: &guard.Options{},
			Logger: chattest.Quiet,
			Observer: react.ObserverFunc(func(_ context.Context, e react.Event) {
				if e.Kind == react.EventModelEnd && e.ModelEnd.Round == 1 {
					text = e.ModelEnd.Response.Text
				}
			}),
		})
		require.NoError(t, err)
		res, err := loop.Run(context.Background(), chattest.SiteNode(), chattest.Task)
		require.NoError(t, err)
		require.Equal(t, react.Finished, res.Status)
		assert.Equal(t, "Let me look the spaces up.\nAnd z-index the results.", text, "stream=%v: the texts apart, not run together", stream)
		assert.JSONEq(t, `{"role":"assistant","content":[
			{"type":"thinking","thinking":"The user wants a site; list the spaces, then look it up.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
			{"type":"text","text":"Let me look the spaces up."},
			{"type":"tool_use","id":"toolu_01Interleaved0000000001","name":"list_spaces","input":{}},
			{"type":"text","text":"And z-index the results."},
			{"type":"tool_use","id":"toolu_01Interleaved0000000002","name":"list_spaces","input":{"page":2}}
		]}`, messageJSON(t, s, 1, 1), "stream=%v: the blocks in the API's order", stream)
	}
}

// A message that stopped for max_tokens runs none of its calls, even one
// whose input parses: answered or streamed.
func TestCutOffCallNeverRuns(t *testing.T) {
	adapter.RunCutOffLoop(t, reply{File: "message_cut_off.json"}, reply{File: "loop_5_finish.json"}, "toolu_01CutOff000000000000001", nil)
	adapter.RunCutOffLoop(t, streamed(t, "message_cut_off.json"), streamed(t, "loop_5_finish.json"), "toolu_01CutOff000000000000001",
		func(s *chattest.Server) react.Model { return newModel(t, s, nil) })
}

// messageJSON is message m of request i, as JSON.
func messageJSON(t *testing.T, s *chattest.Server, i, m int) string {
	t.Helper()
	msgs, ok := s.Requests()[i]["messages"].([]any)
	require.True(t, ok)
	require.Greater(t, len(msgs), m)
	b, err := json.Marshal(msgs[m])
	require.NoError(t, err)
	return string(b)
}
