package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

type refundOut struct {
	OrderID string   `json:"order_id" jsonschema:"the refunded order" accepts:"user,tool_result"`
	Amount  float64  `json:"amount" accepts:"tool_result" tool:"lookup" field:"amount"`
	Items   []string `json:"items,omitempty"`
	Note    string   `json:"note,omitempty" accepts:"model"`
}

// OutputsOf infers the outputs as tool.New infers a tool's schema: keys by
// JSON name in field order, required unless omitempty, descriptions from
// the jsonschema tag, accepted sources from the accepts tag, the source's
// tool and field from the tool and field tags.
func TestOutputsOf(t *testing.T) {
	outs := react.OutputsOf[refundOut]()
	require.Len(t, outs, 4)
	got := make([]string, len(outs))
	for i, o := range outs {
		got[i] = o.Key
	}
	assert.Equal(t, []string{"order_id", "amount", "items", "note"}, got)
	assert.True(t, outs[0].Required)
	assert.Equal(t, "the refunded order", outs[0].Description)
	assert.Equal(t, []react.SourceType{react.SourceUser, react.SourceToolResult}, outs[0].Accepts)
	assert.Equal(t, "string", outs[0].Schema.Type)
	assert.Equal(t, "number", outs[1].Schema.Type)
	assert.Equal(t, []react.SourceType{react.SourceToolResult}, outs[1].Accepts)
	assert.Equal(t, "lookup", outs[1].Tool, "the tool tag")
	assert.Equal(t, "amount", outs[1].Field, "the field tag")
	assert.Empty(t, outs[0].Tool+outs[0].Field, "no tool or field tag: any tool, any field")
	assert.False(t, outs[2].Required)
	assert.Nil(t, outs[2].Accepts, "no tag: the default sources")
	assert.Equal(t, []string{"null", "array"}, outs[2].Schema.Types)
	assert.Equal(t, []react.SourceType{react.SourceModel}, outs[3].Accepts)
	assert.Equal(t, react.OutputsOf[refundOut](), react.OutputsOf[*refundOut](), "a pointer type declares the same outputs")

	for name, f := range map[string]func(){
		"not a struct": func() { react.OutputsOf[string]() },
		"bad accepts": func() {
			react.OutputsOf[struct {
				A string `accepts:"guess"`
			}]()
		},
		"no schema (fn)": func() { react.OutputsOf[struct{ F func() }]() },
	} {
		assert.Panics(t, f, name)
	}
}

// A typed output refuses a value of the wrong type before its source is
// checked (REJECTED OUTPUT_VALUE_INVALID, naming the type); the right type
// from the right source is set, and OutputsAs reads the outputs back typed.
func TestTypedOutputs(t *testing.T) {
	lookup := newFake("lookup", tool.Read, ok(map[string]any{"order": "A-17", "amount": 12.5, "items": []string{"mug"}}))
	m := newScript(
		turn(call("c1", "lookup", `{}`)),
		turn(reacttest.OutputSet("c2", "amount", "12.5", react.SourceToolResult, "c1")), // a string for a number
		turn(reacttest.OutputSet("c3", "amount", 12.5, react.SourceToolResult, "c1")),
		turn(reacttest.OutputSet("c4", "order_id", "A-17", react.SourceUser, "")),
		turn(reacttest.OutputSet("c5", "items", []string{"mug"}, react.SourceToolResult, "c1")),
		turn(reacttest.OutputSet("c6", "note", 7, react.SourceModel, "")), // a number for a string
		turn(reacttest.Finish("c7", "refunded")),
	)
	e := newEnv(t, m, lookup.Tool)
	node := react.Node{Tools: []string{"lookup"}, Outputs: react.OutputsOf[refundOut]()}
	res := e.run(node, "Refund order A-17.")
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, errcode.OutputValueInvalid, res.Calls[1].Code)
	msg := toolMessage(t, res.Transcript, "c2").Content
	assert.Contains(t, msg, "the value of output amount is not a valid number")
	assert.Contains(t, msg, "Next: set amount again with a value of type number, copied exactly from its source")
	assert.Equal(t, outcome.Success, res.Calls[2].Outcome)
	assert.Equal(t, errcode.OutputValueInvalid, res.Calls[5].Code, "7 is not a string")
	assert.Equal(t, react.GoalMet, res.Goal)

	sys := m.requests()[0].Messages[0].Content
	assert.Contains(t, sys, "Outputs to set with builtin_output_set: order_id (string, required): the refunded order; amount (number, required); items (array of string); note (string).")

	out, err := react.OutputsAs[refundOut](res)
	require.NoError(t, err)
	assert.Equal(t, refundOut{OrderID: "A-17", Amount: 12.5, Items: []string{"mug"}}, out)
	ptr, err := react.OutputsAs[*refundOut](res)
	require.NoError(t, err)
	assert.Equal(t, out, *ptr)
}

// OutputsAs says which output did not decode.
func TestOutputsAsErrors(t *testing.T) {
	res := func(kv ...string) react.Result {
		r := react.Result{Outputs: map[string]react.OutputValue{}}
		for i := 0; i < len(kv); i += 2 {
			r.Outputs[kv[i]] = react.OutputValue{Value: json.RawMessage(kv[i+1])}
		}
		return r
	}
	for _, c := range []struct {
		name string
		res  react.Result
		key  string
		want string
	}{
		{"missing required", res("order_id", `"A-17"`), "amount", "required output not set"},
		{"wrong type", res("order_id", `"A-17"`, "amount", `"lots"`), "amount", `cannot decode "lots" into float64`},
		{"no field", res("order_id", `"A-17"`, "amount", `1`, "color", `"red"`), "color", "has no field for it"},
		{"nested type", res("order_id", `"A-17"`, "amount", `1`, "items", `[1]`), "items", "cannot decode [1] into string"},
		{"a value of exactly 64 bytes is quoted whole", res("order_id", `"A-17"`, "amount", `"`+strings.Repeat("x", 62)+`"`), "amount",
			`cannot decode "` + strings.Repeat("x", 62) + `" into float64`},
		{"a value past 64 bytes is cut at 64", res("order_id", `"A-17"`, "amount", `"`+strings.Repeat("x", 63)+`"`), "amount",
			`cannot decode "` + strings.Repeat("x", 63) + `… into float64`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := react.OutputsAs[refundOut](c.res)
			var oe *react.OutputError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, c.key, oe.Key)
			assert.Contains(t, err.Error(), `react: output "`+c.key+`"`)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := react.OutputsAs[refundOut](res("order_id", `"A-17"`))
	assert.True(t, errors.Is(err, react.ErrOutputMissing))
}

// The system prompt lists each output with its attributes in brackets (a
// node lists them when one of them has a schema), and an output without a
// schema that is not required without any: what the model reads of the
// node's outputs.
func TestOutputList(t *testing.T) {
	id := react.Output{Key: "id", Schema: &jsonschema.Schema{Type: "string"}}
	for _, c := range []struct {
		name    string
		outputs []react.Output
		want    string
	}{
		{"untyped and optional: no brackets", []react.Output{id, {Key: "note"}}, "Outputs to set with builtin_output_set: id (string); note."},
		{"untyped, optional, described", []react.Output{id, {Key: "note", Description: "what was said"}}, "Outputs to set with builtin_output_set: id (string); note: what was said."},
		{"typed as null only", []react.Output{{Key: "gone", Schema: &jsonschema.Schema{Type: "null"}}}, "Outputs to set with builtin_output_set: gone (null)."},
		{"null beside another type is left out", []react.Output{{Key: "id", Schema: &jsonschema.Schema{Types: []string{"string", "null"}}}}, "Outputs to set with builtin_output_set: id (string)."},
		{"one type listed in Types", []react.Output{{Key: "gone", Schema: &jsonschema.Schema{Types: []string{"null"}}}}, "Outputs to set with builtin_output_set: gone (null)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newScript(turn(reacttest.Finish("c1", "")))
			e := newEnv(t, m)
			e.run(react.Node{Outputs: c.outputs}, "Take a note.")
			sys := m.requests()[0].Messages[0].Content
			assert.Contains(t, sys, c.want)
		})
	}
}

// A typed node survives its snapshot: the schema is sealed with the node,
// and the resumed run still refuses a value of the wrong type.
func TestTypedOutputsResume(t *testing.T) {
	m := newScript(
		turn(reacttest.FollowUp("c1", "Which order, and what amount?")),
		turn(reacttest.OutputSet("c2", "amount", "12.5", react.SourceUser, "")),
		turn(reacttest.OutputSet("c3", "amount", 12.5, react.SourceUser, "")),
		turn(reacttest.OutputSet("c4", "order_id", "A-17", react.SourceUser, "")),
		turn(reacttest.Finish("c5", "")),
	)
	e := newEnv(t, m)
	node := react.Node{Outputs: react.OutputsOf[refundOut]()}
	node.Outputs[1].Accepts = []react.SourceType{react.SourceUser}
	res := e.run(node, "Refund my order.")
	require.Equal(t, react.Suspended, res.Status)
	res, err := e.again(m).Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "A-17, 12.5"))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, errcode.OutputValueInvalid, res.Calls[1].Code)
	out, err := react.OutputsAs[refundOut](res)
	require.NoError(t, err)
	assert.Equal(t, 12.5, out.Amount)
}

// A schema that does not resolve makes the node invalid.
func TestTypedOutputsBadSchema(t *testing.T) {
	e := newEnv(t, newScript())
	node := react.Node{Outputs: react.OutputsOf[refundOut]()}
	node.Outputs[0].Schema.Ref = "#/nowhere"
	_, err := e.loop.Run(context.Background(), node, "x")
	require.ErrorIs(t, err, react.ErrInvalidNode)
	assert.Contains(t, err.Error(), "schema of output order_id")
}

// An integer output takes every integer its Go field holds: an unsigned
// field (its schema's minimum 0) up to 2^64-1, a signed one up to 2^63-1;
// one past either is OUTPUT_VALUE_INVALID, never a value OutputsAs cannot
// decode.
func TestTypedOutputs_IntegerRange(t *testing.T) {
	type counts struct {
		U uint64 `json:"u,omitempty" accepts:"model"`
		I int64  `json:"i,omitempty" accepts:"model"`
	}
	for _, c := range []struct {
		name, key, value string
		ok               bool
	}{
		{"the largest uint64", "u", "18446744073709551615", true},
		{"2^63 fits an unsigned field", "u", "9223372036854775808", true},
		{"one past the largest uint64", "u", "18446744073709551616", false},
		{"the largest int64", "i", "9223372036854775807", true},
		{"2^63 does not fit a signed field", "i", "9223372036854775808", false},
		{"the smallest int64", "i", "-9223372036854775808", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newScript(turn(reacttest.OutputSet("c1", c.key, json.Number(c.value), react.SourceModel, "")), turn(reacttest.Finish("c2", "")))
			e := newEnv(t, m)
			res := e.run(react.Node{Outputs: react.OutputsOf[counts]()}, "Count.")
			require.NotEmpty(t, res.Calls)
			if !c.ok {
				assert.Equal(t, errcode.OutputValueInvalid, res.Calls[0].Code, "%s is refused", c.value)
				return
			}
			require.Equal(t, outcome.Success, res.Calls[0].Outcome, "%s is accepted: %+v", c.value, res.Calls[0])
			out, err := react.OutputsAs[counts](res)
			require.NoError(t, err)
			got := map[string]string{"u": strconv.FormatUint(out.U, 10), "i": strconv.FormatInt(out.I, 10)}[c.key]
			assert.Equal(t, c.value, got)
		})
	}
}

// An integer written as a float (1.0, 1e3) is an integer to JSON Schema but
// not to Go's decoder: it is refused wherever it stands — at the top, in a
// list after an integer, as a map's value, in a nested object's field —
// so that every accepted value decodes with OutputsAs.
func TestTypedOutputs_IntegerWrittenAsFloat(t *testing.T) {
	for _, c := range []struct {
		name, key, value string
		ok               bool
	}{
		{"a plain integer", "n", `3`, true},
		{"1.0 at the top", "n", `1.0`, false},
		{"a list of integers", "ns", `[1,2]`, true},
		{"1.0 after an integer in a list", "ns", `[1,1.0]`, false},
		{"a map of integers", "m", `{"a":1}`, true},
		{"1.0 as a map's value", "m", `{"a":1.0}`, false},
		{"a nested integer field", "inner", `{"k":1}`, true},
		{"1e3 in a nested integer field", "inner", `{"k":1e3}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newScript(turn(reacttest.OutputSet("c1", c.key, json.RawMessage(c.value), react.SourceModel, "")), turn(reacttest.Finish("c2", "")))
			e := newEnv(t, m)
			res := e.run(react.Node{Outputs: react.OutputsOf[fuzzOut]()}, "Count.")
			require.NotEmpty(t, res.Calls)
			if !c.ok {
				assert.Equal(t, errcode.OutputValueInvalid, res.Calls[0].Code, "%s is refused", c.value)
				return
			}
			require.Equal(t, outcome.Success, res.Calls[0].Outcome, "%s is accepted: %+v", c.value, res.Calls[0])
			_, err := react.OutputsAs[fuzzOut](res)
			require.NoError(t, err)
		})
	}
}
