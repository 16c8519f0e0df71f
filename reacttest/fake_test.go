package reacttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// invoke runs f's tool once through the default invoker, as the loop would.
func invoke(t *testing.T, f *reacttest.Fake, args string) (outcome.Outcome, errcode.Code, string) {
	t.Helper()
	_, err := tool.NewCatalog(f.Tool)
	require.NoError(t, err, "the fake's tool must be a valid catalog tool")
	obs, err := invoker.New(nil)(context.Background(), invoker.Call{
		ID: "c1", Name: f.Tool.Name, Args: json.RawMessage(args), Tool: f.Tool, Round: 1, Attempt: 1,
	})
	require.NoError(t, err)
	return obs.Outcome(), obs.Code(), obs.Message()
}

func TestFakesThroughTheDefaultInvoker(t *testing.T) {
	tests := []struct {
		name    string
		reason  string
		fake    *reacttest.Fake
		outcome outcome.Outcome
		code    errcode.Code
	}{
		{"succeed", "a returned payload is SUCCESS",
			reacttest.Succeed("list_spaces", []string{"s1"}), outcome.Success, 0},
		{"fail not found", "the typed error's kind picks the code",
			reacttest.Fail("get_site", tool.KindNotFound, "no site 7"), outcome.Failed, errcode.ToolNotFound},
		{"fail unavailable", "another kind, another code",
			reacttest.Fail("get_site", tool.KindUnavailable, "maintenance"), outcome.Failed, errcode.ToolUnavailable},
		{"fail with", "an untyped error is TOOL_ERROR",
			reacttest.FailWith("get_site", errors.New("boom")), outcome.Failed, errcode.ToolError},
		{"panic", "a panic is recovered as TOOL_ERROR",
			reacttest.Panic("get_site", "kaboom"), outcome.Failed, errcode.ToolError},
		{"empty allowed", "the invoker itself does not judge emptiness",
			reacttest.Empty("list_spaces", tool.EmptyAllowed), outcome.Success, 0},
		{"business body", "the invoker sees a returned body; the response contract guard judges it",
			reacttest.BusinessFail("create_site", "system", 50001, "quota exceeded"), outcome.Success, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, code, msg := invoke(t, tt.fake, `{"q":1}`)
			assert.Equal(t, tt.outcome, o, "invoke(%s) outcome = %v; want %v (%s): %s", tt.name, o, tt.outcome, tt.reason, msg)
			assert.Equal(t, tt.code, code, "invoke(%s) code = %v; want %v (%s)", tt.name, code, tt.code, tt.reason)
			assert.Equal(t, 1, tt.fake.Executions(), "the tool ran exactly once")
			require.Len(t, tt.fake.Requests(), 1)
			assert.JSONEq(t, `{"q":1}`, string(tt.fake.Requests()[0].Args))
		})
	}
}

func TestTimeoutFakeBlocksUntilItsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := reacttest.Timeout("mcp_search", 30*time.Second)
		assert.Equal(t, 30*time.Second, f.Tool.Timeout)
		start := time.Now()
		o, code, _ := invoke(t, f, `{}`)
		assert.Equal(t, outcome.Failed, o)
		assert.Equal(t, errcode.ToolTimeout, code)
		assert.Equal(t, 30*time.Second, time.Since(start), "the fake returned when its timeout fired, not before")
		assert.Equal(t, 1, f.Executions())
	})
}

func TestTimeoutFakeHonoursTheCallersContext(t *testing.T) {
	f := reacttest.Timeout("mcp_search", 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.Tool.Func(ctx, tool.Request{})
	require.ErrorIs(t, err, context.Canceled)
}

func TestFakeDefaultsAndWrite(t *testing.T) {
	f := reacttest.Succeed("create_site", nil)
	assert.Equal(t, tool.Read, f.Tool.Effect, "fakes are reads unless told otherwise")
	assert.Equal(t, "object", f.Tool.InputSchema.Type)
	assert.Same(t, f, f.Write())
	assert.Equal(t, tool.Write, f.Tool.Effect)
	assert.Equal(t, tool.EmptyFails, reacttest.Empty("x", tool.EmptyFails).Tool.Contract.Empty)
}

func TestExecutionsAreCountedConcurrently(t *testing.T) {
	f := reacttest.Succeed("list_spaces", "ok")
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			_, err := f.Tool.Func(context.Background(), tool.Request{Args: json.RawMessage(`{}`)})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, 64, f.Executions())
}

func TestRecordedArgsAreCopies(t *testing.T) {
	f := reacttest.Succeed("t", "ok")
	args := []byte(`{"a":1}`)
	_, err := f.Tool.Func(context.Background(), tool.Request{CallID: "c1", Args: args, Attempt: 2})
	require.NoError(t, err)
	args[2] = 'X'
	got := f.Requests()[0]
	assert.Equal(t, `{"a":1}`, string(got.Args))
	assert.Equal(t, "c1", got.CallID)
	assert.Equal(t, 2, got.Attempt)
}

type body struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func TestBusinessCodeContract(t *testing.T) {
	tests := []struct {
		name       string
		reason     string
		system     string
		result     any
		failed     bool
		downstream string
		message    string
	}{
		{"map nonzero", "code != 0 in an HTTP-200 body is a business failure",
			"system", map[string]any{"code": 50001, "message": "quota"}, true, "system.50001", "quota"},
		{"map zero", "code 0 is success", "system", map[string]any{"code": 0}, false, "", ""},
		{"struct", "structs are read through their JSON form",
			"crm", body{Code: 7, Message: "locked"}, true, "crm.7", "locked"},
		{"raw json", "a json.RawMessage body", "", json.RawMessage(`{"code":42,"message":"m"}`), true, "42", "m"},
		{"bytes", "a []byte body", "s", []byte(`{"code":"0"}`), false, "", ""},
		{"string code", "a numeric string code", "s", map[string]any{"code": "40401"}, true, "s.40401", ""},
		{"bad string code", "a code that is not a number is no code", "s", map[string]any{"code": "E1"}, false, "", ""},
		{"bool code", "a code that is not a number is no code", "s", map[string]any{"code": true}, false, "", ""},
		{"no code", "a body without code passes", "s", map[string]any{"sites": []int{1}}, false, "", ""},
		{"not an object", "a list passes", "s", []int{1, 2}, false, "", ""},
		{"not json", "an unencodable result passes", "s", make(chan int), false, "", ""},
		{"invalid raw", "invalid JSON passes", "s", []byte(`{`), false, "", ""},
	}
	for _, tt := range tests {
		failed, downstream, message := reacttest.BusinessCodeContract(tt.system).Business(tt.result)
		assert.Equal(t, tt.failed, failed, "Business(%s) failed = %v; want %v (%s)", tt.name, failed, tt.failed, tt.reason)
		assert.Equal(t, tt.downstream, downstream, "Business(%s) downstream (%s)", tt.name, tt.reason)
		assert.Equal(t, tt.message, message, "Business(%s) message (%s)", tt.name, tt.reason)
	}
}

func TestBusinessFailBody(t *testing.T) {
	f := reacttest.BusinessFail("create_site", "system", 50001, "quota exceeded")
	res, err := f.Tool.Func(context.Background(), tool.Request{})
	require.NoError(t, err)
	failed, downstream, message := f.Tool.Contract.Business(res)
	assert.True(t, failed)
	assert.Equal(t, "system.50001", downstream)
	assert.Equal(t, "quota exceeded", message)
}
