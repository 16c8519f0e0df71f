package guard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// rcEnvelope is an HTTP-200 body that may carry a business failure.
type rcEnvelope struct {
	Code    int      `json:"code"`
	Message string   `json:"message,omitempty"`
	Data    []string `json:"data"`
}

// rcBusiness reads an rcEnvelope (or its JSON).
func rcBusiness(result any) (bool, string, string) {
	var e rcEnvelope
	switch r := result.(type) {
	case rcEnvelope:
		e = r
	case json.RawMessage:
		if json.Unmarshal(r, &e) != nil {
			return false, "", ""
		}
	}
	if e.Code == 0 {
		return false, "", ""
	}
	return true, fmt.Sprintf("system.%d", e.Code), e.Message
}

// rcTool is a tool with the given contract, registered in a catalog so its
// output schema is resolved.
func rcTool(t *testing.T, c *tool.Contract) *tool.Tool {
	t.Helper()
	tl := tool.New("list_sites", "lists sites", func(context.Context, struct{}) (rcEnvelope, error) { return rcEnvelope{}, nil })
	tl.Effect = tool.Read
	tl.Contract = c
	_, err := tool.NewCatalog(tl)
	require.NoError(t, err)
	return tl
}

// rcSend passes a SUCCESS with data through a ResponseContract guard.
func rcSend(t *testing.T, opts guard.ResponseContractOptions, tl *tool.Tool, data any) observation.Observation {
	t.Helper()
	success := observation.Success("list_sites succeeded", data)
	obs, err := guard.ResponseContract(opts)(context.Background(),
		invoker.Call{ID: "c1", Name: "list_sites", Tool: tl, Args: json.RawMessage(`{}`)},
		func(context.Context, invoker.Call) (observation.Observation, error) { return success, nil })
	require.NoError(t, err)
	return obs
}

func TestResponseContract_BusinessFailureInsideSuccess(t *testing.T) {
	tl := rcTool(t, &tool.Contract{Business: rcBusiness})
	body := rcEnvelope{Code: 50001, Message: "site quota exceeded"}
	obs := rcSend(t, guard.ResponseContractOptions{}, tl, body)
	require.Equal(t, outcome.Failed, obs.Outcome(), "ResponseContract(code 50001 in a 200 body) = %v; want FAILED", obs)
	assert.Equal(t, errcode.ToolBusinessFailed, obs.Code(), "the runtime code is TOOL_BUSINESS_FAILED, never the downstream one")
	assert.Equal(t, "business failure [system.50001]: site quota exceeded", obs.Reason(), "the downstream code goes into the reason")
	assert.Equal(t, prompt.Default().Text(prompt.NextBusiness), obs.Next())
	assert.Equal(t, body, obs.Data(), "the failure body is kept as data")

	ok := rcSend(t, guard.ResponseContractOptions{}, tl, rcEnvelope{Data: []string{"s-1"}})
	assert.Equal(t, outcome.Success, ok.Outcome(), "ResponseContract(code 0) = %v; want the SUCCESS unchanged", ok)
}

func TestResponseContract_BusinessFailureWithoutDownstreamCode(t *testing.T) {
	tests := []struct {
		reason     string
		downstream string
		message    string
		want       string
	}{
		{"no downstream code: REASON_BUSINESS_FAILED", "", "the order is closed", "business failure: the order is closed"},
		{"no message: the tool's name stands in", "", "", "business failure: list_sites"},
		{"a code without a message", "E42", "", "business failure [E42]: list_sites"},
	}
	for _, tt := range tests {
		tl := rcTool(t, &tool.Contract{Business: func(any) (bool, string, string) { return true, tt.downstream, tt.message }})
		obs := rcSend(t, guard.ResponseContractOptions{}, tl, rcEnvelope{})
		assert.Equalf(t, errcode.ToolBusinessFailed, obs.Code(), "(%s)", tt.reason)
		assert.Equalf(t, tt.want, obs.Reason(), "ResponseContract reason = %q; want %q (%s)", obs.Reason(), tt.want, tt.reason)
	}
}

func TestResponseContract_ShapeViolation(t *testing.T) {
	schema := &jsonschema.Schema{
		Type:     "object",
		Required: []string{"code", "data"},
		Properties: map[string]*jsonschema.Schema{
			"code": {Type: "integer"},
			"data": {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
		},
	}
	tests := []struct {
		reason string
		data   any
		ok     bool
	}{
		{"a conforming Go value", rcEnvelope{Data: []string{"s-1"}}, true},
		{"conforming raw JSON", json.RawMessage(`{"code":0,"data":["s-1"]}`), true},
		{"a missing field", json.RawMessage(`{"code":0}`), false},
		{"a field of the wrong type", map[string]any{"code": "zero", "data": []string{}}, false},
		{"not an object at all", "just text", false},
		{"raw bytes that are not JSON", json.RawMessage(`{oops`), false},
		{"a value that has no JSON form", make(chan int), false},
	}
	for _, tt := range tests {
		tl := rcTool(t, &tool.Contract{Output: schema})
		obs := rcSend(t, guard.ResponseContractOptions{}, tl, tt.data)
		if tt.ok {
			assert.Equalf(t, outcome.Success, obs.Outcome(), "ResponseContract(%v) = %v; want SUCCESS (%s)", tt.data, obs, tt.reason)
			continue
		}
		assert.Equalf(t, outcome.Failed, obs.Outcome(), "ResponseContract(%v) = %v; want FAILED (%s)", tt.data, obs, tt.reason)
		assert.Equalf(t, errcode.ToolResultInvalid, obs.Code(), "ResponseContract(%v) = %v; want TOOL_RESULT_INVALID (%s)", tt.data, obs, tt.reason)
		assert.Truef(t, strings.HasPrefix(obs.Reason(), "the result of list_sites does not have the agreed shape: "), "reason %q (%s)", obs.Reason(), tt.reason)
		assert.Equal(t, prompt.Default().Text(prompt.NextResultInvalid), obs.Next())
	}
}

func TestResponseContract_SchemaOutsideCatalog(t *testing.T) {
	good := &tool.Tool{Name: "list_sites", Contract: &tool.Contract{Output: &jsonschema.Schema{Type: "array"}}}
	ic := guard.ResponseContract(guard.ResponseContractOptions{})
	for range 2 { // resolved once, then from the cache
		obs, err := ic(context.Background(), invoker.Call{Tool: good},
			func(context.Context, invoker.Call) (observation.Observation, error) {
				return observation.Success("ok", "x"), nil
			})
		require.NoError(t, err)
		assert.Equal(t, errcode.ToolResultInvalid, obs.Code(), "a schema outside a catalog is resolved on first use and applied")
	}
	bad := &tool.Tool{Name: "list_sites", Contract: &tool.Contract{Output: &jsonschema.Schema{Ref: "#/nowhere"}}}
	obs := rcSend(t, guard.ResponseContractOptions{}, bad, []string{})
	assert.Equal(t, errcode.ToolResultInvalid, obs.Code(), "an unusable schema fails the result: nothing vouches for its shape")
	assert.Contains(t, obs.Reason(), "the output schema cannot be used")
	assert.Error(t, obs.Cause(), "the resolver's error is the cause, for the log")
}

func TestResponseContract_ShapeCheckedBeforeBusiness(t *testing.T) {
	businessCalled := false
	tl := rcTool(t, &tool.Contract{
		Output: &jsonschema.Schema{Type: "object", Required: []string{"code"}},
		Business: func(result any) (bool, string, string) {
			businessCalled = true
			return true, "X", "y"
		},
	})
	obs := rcSend(t, guard.ResponseContractOptions{}, tl, json.RawMessage(`{"msg":"no code"}`))
	assert.Equal(t, errcode.ToolResultInvalid, obs.Code(), "a result of the wrong shape = %v; want TOOL_RESULT_INVALID before any business check", obs)
	assert.False(t, businessCalled, "Business read a result whose shape was not checked")
}

func TestResponseContract_BusinessCheckedBeforeEmpty(t *testing.T) {
	tl := rcTool(t, &tool.Contract{Business: rcBusiness, Empty: tool.EmptyFails,
		IsEmpty: func(result any) bool { return len(result.(rcEnvelope).Data) == 0 }})
	obs := rcSend(t, guard.ResponseContractOptions{}, tl, rcEnvelope{Code: 40401, Message: "no such account"})
	assert.Equal(t, errcode.ToolBusinessFailed, obs.Code(), "a failure body without data = %v; want TOOL_BUSINESS_FAILED, not TOOL_RESULT_EMPTY", obs)
	assert.Contains(t, obs.Reason(), "system.40401", "the downstream code is not lost to an 'empty' verdict")
}

func TestResponseContract_EmptyPolicy(t *testing.T) {
	tests := []struct {
		reason  string
		policy  tool.EmptyPolicy
		isEmpty func(any) bool
		data    any
		want    outcome.Outcome
		code    errcode.Code
	}{
		{"empty allowed (the default): an empty list is an answer", tool.EmptyAllowed, nil, []string{}, outcome.Success, 0},
		{"empty allowed: nil too", tool.EmptyAllowed, nil, nil, outcome.Success, 0},
		{"empty fails: an empty list", tool.EmptyFails, nil, []string{}, outcome.Failed, errcode.ToolResultEmpty},
		{"empty fails: JSON null", tool.EmptyFails, nil, json.RawMessage(`null`), outcome.Failed, errcode.ToolResultEmpty},
		{"empty fails: a non-empty list stands", tool.EmptyFails, nil, []string{"s-1"}, outcome.Success, 0},
		{"empty fails: the contract's own emptiness test", tool.EmptyFails,
			func(r any) bool { return len(r.(rcEnvelope).Data) == 0 }, rcEnvelope{}, outcome.Failed, errcode.ToolResultEmpty},
		{"empty fails: the contract's test says not empty", tool.EmptyFails,
			func(any) bool { return false }, nil, outcome.Success, 0},
		{"empty answers: an empty list is the answer", tool.EmptyAnswers, nil, []string{}, outcome.Success, 0},
		{"empty answers: the contract's own emptiness test", tool.EmptyAnswers,
			func(r any) bool { return len(r.(rcEnvelope).Data) == 0 }, rcEnvelope{}, outcome.Success, 0},
	}
	for _, tt := range tests {
		tl := rcTool(t, &tool.Contract{Empty: tt.policy, IsEmpty: tt.isEmpty})
		obs := rcSend(t, guard.ResponseContractOptions{}, tl, tt.data)
		assert.Equalf(t, tt.want, obs.Outcome(), "ResponseContract(%v) = %v; want %v (%s)", tt.data, obs, tt.want, tt.reason)
		assert.Equalf(t, tt.code, obs.Code(), "ResponseContract(%v) = %v; want code %v (%s)", tt.data, obs, tt.code, tt.reason)
		if tt.code == errcode.ToolResultEmpty {
			assert.Equal(t, "list_sites returned an empty result, which its contract does not accept. Next: "+prompt.Default().Text(prompt.NextEmpty), obs.Message())
		}
		if tt.want == outcome.Success {
			note := ""
			if (tt.isEmpty == nil && guard.DefaultIsEmpty(tt.data)) || (tt.isEmpty != nil && tt.isEmpty(tt.data)) {
				note = "\nbusiness status insufficient: the result of list_sites is empty; calling it again with the same arguments cannot help. Next: " +
					prompt.Default().Text(prompt.NextEmpty)
				if tt.policy == tool.EmptyAnswers {
					note = "\nbusiness status answered: the empty result of list_sites is the answer: nothing matches; calling it again with the same arguments cannot help. Next: report that nothing matches; do not search again for the same"
				}
			}
			assert.Equal(t, "list_sites succeeded"+note, obs.Reason(), "the SUCCESS stands; an empty one says that it is empty and what to do")
		}
	}
}

func TestResponseContract_PassesOtherResultsOn(t *testing.T) {
	withContract := &tool.Tool{Name: "t", Contract: &tool.Contract{Empty: tool.EmptyFails}}
	errDown := errors.New("down")
	tests := []struct {
		reason string
		tool   *tool.Tool
		obs    observation.Observation
		err    error
	}{
		{"no tool", nil, observation.Success("ok", nil), nil},
		{"no contract", &tool.Tool{Name: "t"}, observation.Success("ok", nil), nil},
		{"a failure is judged already", withContract, observation.Failed(errcode.ToolTimeout, "slow", "later"), nil},
		{"a rejection never ran", withContract, observation.Rejected(errcode.ArgRejected, "bad", "fix"), nil},
		{"an infrastructure error", withContract, observation.Observation{}, errDown},
	}
	for _, tt := range tests {
		obs, err := guard.ResponseContract(guard.ResponseContractOptions{})(context.Background(), invoker.Call{Tool: tt.tool},
			func(context.Context, invoker.Call) (observation.Observation, error) { return tt.obs, tt.err })
		assert.Equalf(t, tt.err, err, "(%s)", tt.reason)
		assert.Equalf(t, tt.obs.String(), obs.String(), "ResponseContract changed the observation (%s)", tt.reason)
	}
}

func TestResponseContract_PanicInContractIsFailure(t *testing.T) {
	tests := []struct {
		reason string
		c      *tool.Contract
	}{
		{"Business meets an unexpected type", &tool.Contract{Business: func(r any) (bool, string, string) { return r.(rcEnvelope).Code != 0, "", "" }}},
		{"IsEmpty meets an unexpected type", &tool.Contract{Empty: tool.EmptyFails, IsEmpty: func(r any) bool { return r.(bool) }}},
	}
	for _, tt := range tests {
		obs := rcSend(t, guard.ResponseContractOptions{}, rcTool(t, tt.c), "surprise")
		assert.Equalf(t, errcode.ToolResultInvalid, obs.Code(), "ResponseContract with a panicking check = %v; want FAILED TOOL_RESULT_INVALID (%s)", obs, tt.reason)
		assert.Equal(t, "surprise", obs.Data(), "the result is kept as data")
	}
}

func TestResponseContract_DetailClipped(t *testing.T) {
	props := map[string]*jsonschema.Schema{}
	var required []string
	for i := range 40 {
		name := fmt.Sprintf("a_rather_long_property_name_%02d", i)
		props[name] = &jsonschema.Schema{Type: "string"}
		required = append(required, name)
	}
	tl := rcTool(t, &tool.Contract{Output: &jsonschema.Schema{Type: "object", Properties: props, Required: required}})
	tests := []struct {
		reason    string
		maxDetail int
		maxLen    int
	}{
		{"the default cap", 0, len("the result of list_sites does not have the agreed shape: ") + guard.DefaultMaxDetail + len("…")},
		{"a smaller cap", 20, len("the result of list_sites does not have the agreed shape: ") + 20 + len("…")},
	}
	for _, tt := range tests {
		obs := rcSend(t, guard.ResponseContractOptions{MaxDetail: tt.maxDetail}, tl, map[string]any{})
		assert.LessOrEqualf(t, len(obs.Reason()), tt.maxLen, "reason %q (%s)", obs.Reason(), tt.reason)
		assert.Truef(t, strings.HasSuffix(obs.Reason(), "…"), "a clipped detail ends with an ellipsis: %q (%s)", obs.Reason(), tt.reason)
	}
	obs := rcSend(t, guard.ResponseContractOptions{MaxDetail: -1}, tl, map[string]any{})
	assert.False(t, strings.HasSuffix(obs.Reason(), "…"), "MaxDetail < 0 does not clip: %q", obs.Reason())
}

func TestResponseContract_Chinese(t *testing.T) {
	zh := prompt.For(prompt.Chinese)
	tl := rcTool(t, &tool.Contract{Business: rcBusiness})
	obs := rcSend(t, guard.ResponseContractOptions{Catalog: zh}, tl, rcEnvelope{Code: 50001, Message: "配额已满"})
	assert.Equal(t, "业务失败 [system.50001]：配额已满。下一步："+zh.Text(prompt.NextBusiness), obs.MessageIn(zh))
}

func TestDefaultIsEmpty(t *testing.T) {
	var nilPtr *rcEnvelope
	var nilMap map[string]int
	tests := []struct {
		reason string
		in     any
		want   bool
	}{
		{"nil", nil, true},
		{"a nil pointer", nilPtr, true},
		{"a nil map", nilMap, true},
		{"an empty string", "", true},
		{"an empty slice", []int{}, true},
		{"an empty array", [0]int{}, true},
		{"raw nothing", json.RawMessage(" "), true},
		{"raw null", json.RawMessage("null"), true},
		{"raw empty string", json.RawMessage(`""`), true},
		{"raw empty list", json.RawMessage(`[ ]`), true},
		{"raw empty object", json.RawMessage(`{}`), true},
		{"raw zero is a value", json.RawMessage(`0`), false},
		{"raw garbage is not empty", json.RawMessage(`{oops`), false},
		{"raw garbage in brackets is not empty", json.RawMessage(`[oops]`), false},
		{"raw empty list with line breaks", json.RawMessage("[\n\t ]\n"), true},
		{"raw list with an element", json.RawMessage(`[0]`), false},
		{"raw object with a member", json.RawMessage(`{"a":null}`), false},
		{"raw string of a space", json.RawMessage(`" "`), false},
		{"raw mismatched brackets", json.RawMessage(`[}`), false},
		{"zero is a value", 0, false},
		{"false is a value", false, false},
		{"a struct is a value", rcEnvelope{}, false},
		{"a pointer to a struct", &rcEnvelope{}, false},
		{"a list with an element", []string{""}, false},
	}
	for _, tt := range tests {
		got := guard.DefaultIsEmpty(tt.in)
		assert.Equalf(t, tt.want, got, "DefaultIsEmpty(%#v) = %v; want %v (%s)", tt.in, got, tt.want, tt.reason)
	}
}

// The fast emptiness test of raw JSON agrees with decoding it for every
// valid JSON text.
func FuzzDefaultIsEmpty(f *testing.F) {
	for _, s := range []string{"", " ", "null", `""`, "[]", "[ ]", "{}", "{ \n}", "[0]", `{"a":1}`, `" "`, "0", "false", "[[]]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := guard.DefaultIsEmpty(json.RawMessage(raw))
		if !json.Valid(raw) {
			if len(bytes.TrimSpace(raw)) == 0 {
				assert.True(t, got, "white space only is empty")
			}
			return
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // numbers beyond float64 are valid JSON too
		require.NoError(t, dec.Decode(&v))
		want := guard.DefaultIsEmpty(v)
		assert.Equalf(t, want, got, "DefaultIsEmpty(%q) = %v; decoding says %v", raw, got, want)
	})
}

func ExampleResponseContract() {
	type body struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	}
	getOrder := &tool.Tool{Name: "get_order", Contract: &tool.Contract{
		Business: func(result any) (bool, string, string) {
			b := result.(body)
			return b.Code != 0, fmt.Sprintf("system.%d", b.Code), b.Msg
		},
	}}
	// The backend answered HTTP 200 with a failure inside.
	backend := func(context.Context, invoker.Call) (observation.Observation, error) {
		return observation.Success("get_order succeeded", body{Code: 50001, Msg: "order service overloaded"}), nil
	}
	h := invoker.Chain(backend, guard.ResponseContract(guard.ResponseContractOptions{}))
	obs, _ := h(context.Background(), invoker.Call{ID: "c1", Name: "get_order", Tool: getOrder})
	fmt.Println(obs.Outcome(), obs.Code())
	fmt.Println(obs.Reason())
	// Output:
	// FAILED TOOL_BUSINESS_FAILED
	// business failure [system.50001]: order service overloaded
}
