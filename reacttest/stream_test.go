package reacttest_test

import (
	"context"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		name string
		resp react.Response
		size int
		n    int // chunks
	}{
		{"empty turn", react.Response{}, 3, 1},
		{"one byte a chunk", reacttest.Text("héllo"), 1, 5},     // é is one chunk of 2 bytes
		{"a rune longer than size", reacttest.Text("世界"), 2, 2}, // never inside a sequence
		{"call without arguments", reacttest.Calls(reacttest.Call("c", "t", "")), 4, 1},
		{"arguments in pieces", reacttest.Calls(reacttest.Call("c", "t", `{"a":"bcdef"}`)), 3, 5},
		{"size below 1", reacttest.Text("ab"), 0, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := tt.resp
			resp.ID, resp.FinishReason, resp.Usage = "r", "stop", &react.Usage{OutputTokens: 3}
			turn := reacttest.Split(resp, tt.size)
			assert.Len(t, turn.Chunks, tt.n)
			for _, c := range turn.Chunks {
				assert.True(t, utf8.ValidString(c.Text))
				if c.Call != nil {
					assert.True(t, utf8.ValidString(c.Call.Args))
				}
			}
			got, err := react.Collect(reacttest.Stream(turn).GenerateStream(context.Background(), react.Request{}))
			require.NoError(t, err)
			assert.Equal(t, resp, got)
		})
	}
}

func TestStreamModel(t *testing.T) {
	cut := errors.New("cut")
	m := reacttest.Stream(
		reacttest.StreamTurn{Chunks: []react.Chunk{{Text: "a"}, {Text: "b"}}, Err: cut},
		reacttest.Split(reacttest.Text("ok"), 1),
	)
	var got []string
	var last error
	for c, err := range m.GenerateStream(context.Background(), react.Request{}) {
		got, last = append(got, c.Text), err
	}
	assert.Equal(t, []string{"a", "b", ""}, got)
	assert.ErrorIs(t, last, cut, "the turn's error ends the stream")

	for _, err := range m.GenerateStream(context.Background(), react.Request{}) {
		require.NoError(t, err)
		break // the model stops when the reader does
	}
	assert.EqualValues(t, 3, m.Sent())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Generate(ctx, react.Request{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 2, m.Turns(), "a done context consumes no turn")

	_, err = m.Generate(context.Background(), react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "more"}}})
	assert.ErrorIs(t, err, reacttest.ErrScriptExhausted)
	assert.Contains(t, err.Error(), "user: more")
	assert.Len(t, m.Requests(), 3)
}

func TestStreaming(t *testing.T) {
	turn := reacttest.Turn("hello there", reacttest.Call("c", "t", `{"a":1}`))
	m := reacttest.Streaming(reacttest.Script(turn), 2)
	n := 0
	var a react.Assembler
	for c, err := range m.GenerateStream(context.Background(), react.Request{}) {
		require.NoError(t, err)
		require.NoError(t, a.Add(c))
		n++
	}
	assert.Equal(t, 10, n, "6 text chunks, 4 of the call's arguments")
	assert.Equal(t, turn, a.Response())
	for _, err := range m.GenerateStream(context.Background(), react.Request{}) {
		assert.ErrorIs(t, err, reacttest.ErrScriptExhausted, "the model's error ends the stream")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := reacttest.Streaming(reacttest.Script(turn), 2).Generate(ctx, react.Request{})
	assert.ErrorIs(t, err, context.Canceled)
}
