package eval_test

import (
	"encoding"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/react"
)

// enum is one of eval's enums as its tests see it.
type enum interface {
	fmt.Stringer
	encoding.TextMarshaler
	IsValid() bool
}

// Every value of every enum has one name that reads back; the zero value
// and values past the last are invalid, print their number, and do not
// marshal; unknown names are refused and leave the value unchanged.
func TestEnums(t *testing.T) {
	type kind struct {
		name   string
		values []enum
		zero   enum
		past   enum
		parse  func(string) (enum, error)
	}
	var cats, behs, steps, mistakes []enum
	for _, c := range eval.Categories() {
		cats = append(cats, c)
	}
	for _, b := range eval.Behaviours() {
		behs = append(behs, b)
	}
	for s := eval.StepRepeat; s <= eval.StepEnd; s++ {
		steps = append(steps, s)
	}
	for _, m := range eval.Mistakes() {
		mistakes = append(mistakes, m)
	}
	kinds := []kind{
		{"category", cats, eval.Category(0), eval.Category(7), func(s string) (enum, error) {
			v := eval.NormalSuccess
			err := v.UnmarshalText([]byte(s))
			return v, err
		}},
		{"behaviour", behs, eval.Behaviour(0), eval.Behaviour(9), func(s string) (enum, error) {
			v := eval.RetryForbidden
			err := v.UnmarshalText([]byte(s))
			return v, err
		}},
		{"step", steps, eval.Step(0), eval.Step(11), func(s string) (enum, error) {
			v := eval.StepFinish
			err := v.UnmarshalText([]byte(s))
			return v, err
		}},
		{"mistake", mistakes, eval.Mistake(0), eval.Mistake(5), func(s string) (enum, error) {
			v := eval.MistakeUnknownTool
			err := v.UnmarshalText([]byte(s))
			return v, err
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			seen := map[string]bool{}
			for _, v := range k.values {
				require.True(t, v.IsValid(), "%v", v)
				b, err := v.MarshalText()
				require.NoError(t, err)
				assert.Equal(t, v.String(), string(b))
				assert.False(t, seen[string(b)], "%s is a name once", b)
				seen[string(b)] = true
				back, err := k.parse(string(b))
				require.NoError(t, err)
				assert.Equal(t, v, back)
			}
			for _, bad := range []enum{k.zero, k.past} {
				assert.False(t, bad.IsValid())
				assert.Contains(t, bad.String(), "(")
				_, err := bad.MarshalText()
				assert.Error(t, err)
			}
			unchanged, err := k.parse("no such name")
			assert.Error(t, err)
			assert.True(t, unchanged.IsValid(), "a refused name leaves the value as it was")
		})
	}
	assert.Equal(t, "1 normal success", eval.NormalSuccess.Title())
	assert.Equal(t, eval.Category(9).String(), eval.Category(9).Title())
}

// A derivation computes over every result of its tool; sum, min and max
// need numbers.
func TestDerivation(t *testing.T) {
	c := func(op, path string) *eval.Case {
		return &eval.Case{ID: "x", Category: eval.IntegrationFailure, Task: "t",
			Tools: []eval.ToolSpec{{Name: "get", Effect: "read", Responses: []eval.Response{
				{Times: 1, Result: raw(`{"items":[{"n":4},{"n":1.5}]}`)}, {Result: raw(`{"items":[{"n":10}],"label":"x"}`)}}}},
			Script: []eval.Turn{calls(spec("1", "get", `{}`)), calls(spec("2", "get", `{"p":2}`)), calls(spec("f", "builtin_node_finish", `{"summary":"the figure is 15.5"}`))},
			Labels: eval.Labels{Calls: []eval.CallLabel{{Tool: "get", Attempts: 1}},
				Expect: eval.Expect{Status: react.Finished, Derived: []eval.Derivation{{Op: op, Tool: "get", Path: path}}}}}
	}
	tests := []struct {
		op, path, answer string
		grounded         bool
	}{
		{"sum", "items.n", "15.5", true},
		{"count", "items", "3", true},
		{"count", "", "2", true},
		{"min", "items.n", "1.5", true},
		{"max", "items.n", "10", true},
		{"sum", "label", "15.5", false},
		{"max", "nothing", "15.5", false},
	}
	for _, tt := range tests {
		cs := c(tt.op, tt.path)
		cs.Script[2] = calls(spec("f", "builtin_node_finish", `{"summary":"the figure is `+tt.answer+`"}`))
		res := runCase(t, *cs)
		assert.Equal(t, tt.grounded, len(res.Ungrounded) == 0, "%s of %s: %q, ungrounded %v", tt.op, tt.path, tt.answer, res.Ungrounded)
	}
	bad := c("median", "items.n")
	assert.ErrorContains(t, bad.Check(), `op "median"`)
	bad = c("sum", "items.n")
	bad.Labels.Expect.Derived[0].Tool = "nope"
	assert.ErrorContains(t, bad.Check(), `no tool "nope"`)
}
