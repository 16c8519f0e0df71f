package react

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The transcript holds copies of a turn's arguments, made into one buffer:
// a model (or an adapter) that reuses its response buffer after the turn
// does not change them, and a copy appended to by its reader does not
// write into the next call's arguments.
func TestTurnArgsAreCopied(t *testing.T) {
	tests := []struct {
		args []json.RawMessage
		want []string
		why  string
	}{
		{[]json.RawMessage{json.RawMessage(`{"a":1}`), json.RawMessage(`{"b":2}`), json.RawMessage(`{}`)},
			[]string{`{"a":1}`, `{"b":2}`, `{}`}, "three calls share one buffer"},
		{[]json.RawMessage{nil, json.RawMessage(``), json.RawMessage(`{"c":3}`)},
			[]string{"", "", `{"c":3}`}, "missing arguments stay nil, the next are copied"},
		{[]json.RawMessage{json.RawMessage("{\"d\":\"\xff\"}"), json.RawMessage(`{"e":5}`)},
			[]string{"{\"d\":\"\uFFFD\"}", `{"e":5}`}, "invalid UTF-8 is replaced, apart from the buffer"},
	}
	for _, tt := range tests {
		r := &run{ids: map[string]struct{}{}, msgs: make([]Message, 1)}
		var resp Response
		for i, a := range tt.args {
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: string(rune('a' + i)), Name: "lookup", Args: a})
		}
		r.appendAssistant(resp)
		got := r.msgs[len(r.msgs)-1].ToolCalls
		require.Len(t, got, len(tt.args), tt.why)
		for i, a := range tt.args {
			for j := range a {
				a[j] = 'X' // the model's buffer reused
			}
			if tt.want[i] == "" {
				assert.Nil(t, got[i].Args, "%s: call %d", tt.why, i)
			}
		}
		for i := range got {
			_ = append(got[i].Args, "!!!!"...) // a reader that appends
		}
		for i, w := range tt.want {
			assert.Equal(t, w, string(got[i].Args), "%s: call %d", tt.why, i)
		}
	}
}

// A turn's arguments take one allocation, whatever the number of calls:
// with the transcript's and the call-id set's room there, a 4-call turn
// allocates its calls and one buffer for their arguments.
func TestTurnArgsTakeOneAllocation(t *testing.T) {
	r := &run{ids: make(map[string]struct{}, 64), msgs: make([]Message, 1, 64)}
	resp := Response{ToolCalls: []ToolCall{
		{ID: "a", Name: "lookup", Args: json.RawMessage(`{"q":"a"}`)},
		{ID: "b", Name: "lookup", Args: json.RawMessage(`{"q":"b"}`)},
		{ID: "c", Name: "lookup", Args: json.RawMessage(`{"q":"c"}`)},
		{ID: "d", Name: "lookup", Args: json.RawMessage(`{"q":"d"}`)},
	}}
	allocs := testing.AllocsPerRun(100, func() {
		r.msgs = r.msgs[:1]
		clear(r.ids)
		r.appendAssistant(resp)
	})
	assert.Equal(t, 2.0, allocs, "the calls and one buffer for their arguments")
}
