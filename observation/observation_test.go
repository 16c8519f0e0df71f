package observation_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
)

func TestFactories(t *testing.T) {
	tests := []struct {
		name    string
		obs     observation.Observation
		outcome outcome.Outcome
		code    errcode.Code
		reason  string
		next    string
	}{
		{"success", observation.Success("2 sites", []string{"a", "b"}), outcome.Success, 0, "2 sites", ""},
		{"failed", observation.Failed(errcode.ToolTimeout, "slow", "wait"), outcome.Failed, errcode.ToolTimeout, "slow", "wait"},
		{"rejected", observation.Rejected(errcode.ArgRejected, "bad", "fix"), outcome.Rejected, errcode.ArgRejected, "bad", "fix"},
		{"deferred", observation.Deferred(errcode.ApprovalRequired, "needs approval", "approve"), outcome.Deferred, errcode.ApprovalRequired, "needs approval", "approve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.outcome, tt.obs.Outcome())
			assert.Equal(t, tt.code, tt.obs.Code())
			assert.Equal(t, tt.reason, tt.obs.Reason())
			assert.Equal(t, tt.next, tt.obs.Next())
			assert.False(t, tt.obs.IsZero())
		})
	}
}

// Each refusal of the factories is its own case: a non-success observation
// without a defined code or a next step cannot be built.
func TestFactoriesRefuse(t *testing.T) {
	tests := []struct {
		name   string
		build  func()
		reason string
	}{
		{"failed without code", func() { observation.Failed(0, "r", "n") }, "zero code"},
		{"failed with undefined code", func() { observation.Failed(12345, "r", "n") }, "codes are a closed set"},
		{"failed without next", func() { observation.Failed(errcode.ToolError, "r", "") }, "every failure says what to do"},
		{"failed with two payloads", func() { observation.Failed(errcode.ToolError, "r", "n", 1, 2) }, "at most one response body"},
		{"rejected without code", func() { observation.Rejected(0, "r", "n") }, "zero code"},
		{"rejected without next", func() { observation.Rejected(errcode.ArgRejected, "r", "") }, "a rejection names the way forward"},
		{"deferred without code", func() { observation.Deferred(0, "r", "n") }, "zero code"},
		{"deferred without next", func() { observation.Deferred(errcode.ApprovalRequired, "r", "") }, "deferred names the step that comes first"},
		{"WithNext on success", func() { observation.Success("ok", nil).WithNext("x") }, "a success has no next step"},
		{"WithNext on zero", func() { observation.Observation{}.WithNext("x") }, "the zero value has no verdict"},
		{"WithNext empty", func() { observation.Failed(errcode.ToolError, "r", "n").WithNext("") }, "a non-success keeps a next step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Panics(t, tt.build, tt.reason)
		})
	}
}

func TestZeroValue(t *testing.T) {
	var o observation.Observation
	assert.True(t, o.IsZero())
	assert.NotEqual(t, outcome.Success, o.Outcome(), "the zero value never reads as success")
	assert.False(t, o.Outcome().Advances())
	assert.True(t, o.Outcome().Stalls())
	_, err := json.Marshal(o)
	assert.Error(t, err, "the zero value is never persisted")
}

func TestWithNextReturnsCopy(t *testing.T) {
	orig := observation.Failed(errcode.ToolBusinessFailed, "business failure [system.50001]: quota", "tell the user")
	changed := orig.WithNext("ask the user how to proceed")
	assert.Equal(t, "tell the user", orig.Next(), "the original is unchanged")
	assert.Equal(t, "ask the user how to proceed", changed.Next())
	assert.Equal(t, orig.Reason(), changed.Reason(), "reason and next stay separate")
	assert.Equal(t, orig.Code(), changed.Code())
}

func TestMessage(t *testing.T) {
	tests := []struct {
		name string
		obs  observation.Observation
		cat  *prompt.Catalog
		want string
	}{
		{"success is its summary", observation.Success("2 sites found", nil), nil, "2 sites found"},
		{"english", observation.Rejected(errcode.ArgRejected, "missing required argument [buyer]", "fill it in and call again"), prompt.For(prompt.English),
			"missing required argument [buyer]. Next: fill it in and call again"},
		{"english full stop not doubled", observation.Rejected(errcode.ArgRejected, "missing [buyer].", "fill it in"), nil,
			"missing [buyer]. Next: fill it in"},
		{"chinese", observation.Rejected(errcode.ArgRejected, "缺少必填参数 [buyer]", "补齐后再调用"), prompt.For(prompt.Chinese),
			"缺少必填参数 [buyer]。下一步：补齐后再调用"},
		{"chinese full stop not doubled", observation.Rejected(errcode.ArgRejected, "缺少必填参数 [buyer]。", "补齐后再调用"), prompt.For(prompt.Chinese),
			"缺少必填参数 [buyer]。下一步：补齐后再调用"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.obs.MessageIn(tt.cat))
		})
	}
	o := observation.Deferred(errcode.ApprovalRequired, "needs approval", "approve")
	assert.Equal(t, o.MessageIn(prompt.Default()), o.Message(), "Message is English")
	assert.Equal(t, "DEFERRED APPROVAL_REQUIRED: needs approval. Next: approve", o.String())
	assert.Equal(t, "SUCCESS: done", observation.Success("done", nil).String())
}

func TestJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		obs  observation.Observation
		want string
	}{
		{"success with data", observation.Success("ok", map[string]any{"id": 7, "tags": []string{"a"}}),
			`{"outcome":"SUCCESS","reason":"ok","data":{"id":7,"tags":["a"]}}`},
		{"success without data", observation.Success("ok", nil), `{"outcome":"SUCCESS","reason":"ok"}`},
		{"failed with body", observation.Failed(errcode.ToolBusinessFailed, "business failure [system.50001]: no quota", "tell the user", map[string]any{"code": 50001}),
			`{"outcome":"FAILED","code":"TOOL_BUSINESS_FAILED","reason":"business failure [system.50001]: no quota","next":"tell the user","data":{"code":50001}}`},
		{"rejected", observation.Rejected(errcode.ApprovalToolMismatch, "wrong tool", "approve create_site"),
			`{"outcome":"REJECTED","code":"APPROVAL_TOOL_MISMATCH","reason":"wrong tool","next":"approve create_site"}`},
		{"deferred", observation.Deferred(errcode.WriteInFlight, "running", "wait"),
			`{"outcome":"DEFERRED","code":"WRITE_IN_FLIGHT","reason":"running","next":"wait"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.obs)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
			var back observation.Observation
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tt.obs.Outcome(), back.Outcome())
			assert.Equal(t, tt.obs.Code(), back.Code())
			assert.Equal(t, tt.obs.Reason(), back.Reason())
			assert.Equal(t, tt.obs.Next(), back.Next())
			again, err := json.Marshal(back)
			require.NoError(t, err)
			assert.Equal(t, string(b), string(again), "encode(decode(x)) == x exactly")
		})
	}
}

func TestJSONDecodeRefuses(t *testing.T) {
	tests := []struct{ name, in, reason string }{
		{"not an object", `[]`, "shape"},
		{"no outcome", `{"reason":"x"}`, "every observation has a verdict"},
		{"unknown outcome", `{"outcome":"OK","reason":"x"}`, "closed set"},
		{"lower-case outcome", `{"outcome":"failed","code":"TOOL_ERROR","reason":"x","next":"y"}`, "names are exact"},
		{"failed without code", `{"outcome":"FAILED","reason":"x","next":"y"}`, "same rule as the factory"},
		{"failed without next", `{"outcome":"FAILED","code":"TOOL_ERROR","reason":"x"}`, "same rule as the factory"},
		{"unknown code", `{"outcome":"REJECTED","code":"NOPE","reason":"x","next":"y"}`, "closed set"},
		{"success with code", `{"outcome":"SUCCESS","code":"TOOL_ERROR","reason":"x"}`, "a success has no code"},
		{"success with next", `{"outcome":"SUCCESS","reason":"x","next":"y"}`, "a success has no next step"},
		{"unknown field", `{"outcome":"SUCCESS","reason":"x","ok":true}`, "foreign data is refused"},
		{"trailing data", `{"outcome":"SUCCESS","reason":"x"} {}`, "one object"},
		{"truncated", `{"outcome":"SUCC`, "corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := observation.Success("keep", nil)
			err := o.UnmarshalJSON([]byte(tt.in))
			assert.Error(t, err, tt.reason)
			assert.Equal(t, "keep", o.Reason(), "unchanged on error")
		})
	}
}

func TestJSONNullDataAndBadPayload(t *testing.T) {
	var o observation.Observation
	require.NoError(t, json.Unmarshal([]byte(`{"outcome":"SUCCESS","reason":"x","data":null}`), &o))
	assert.Nil(t, o.Data())
	_, err := json.Marshal(observation.Success("x", make(chan int)))
	assert.Error(t, err, "an unencodable payload is an error, not a panic")
	assert.Equal(t, 3, observation.Success("x", nil).WithData(3).Data())
}

func FuzzUnmarshalJSON(f *testing.F) {
	f.Add([]byte(`{"outcome":"SUCCESS","reason":"ok","data":{"a":[1,2]}}`))
	f.Add([]byte(`{"outcome":"FAILED","code":"TOOL_TIMEOUT","reason":"slow","next":"wait"}`))
	f.Add([]byte(`{"outcome":"DEFERRED","code":"APPROVAL_REQUIRED","reason":"r","next":"n","data":"x"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var o observation.Observation
		if err := json.Unmarshal(b, &o); err != nil {
			return
		}
		if o.IsZero() {
			t.Fatalf("decoded a zero observation from %q", b)
		}
		if !o.Outcome().Advances() && (o.Next() == "" || !o.Code().IsValid()) {
			t.Fatalf("decoded a non-success without code or next: %q", b)
		}
		enc, err := json.Marshal(o)
		if err != nil {
			t.Fatalf("re-encode of %q: %v", b, err)
		}
		var again observation.Observation
		if err := json.Unmarshal(enc, &again); err != nil {
			t.Fatalf("decode again of %q: %v", enc, err)
		}
		enc2, err := json.Marshal(again)
		if err != nil || string(enc2) != string(enc) {
			t.Fatalf("round trip not exact: %q vs %q (%v)", enc, enc2, err)
		}
	})
}

// TestCauseIsNeverRendered: the cause travels with the observation for logs
// and observers, survives derivation, and is neither rendered nor encoded.
func TestCauseIsNeverRendered(t *testing.T) {
	secret := errors.New("postgres://app:hunter2@db/orders")
	o := observation.Failed(errcode.ToolError, "orders failed: details withheld", "stop").WithCause(secret)
	assert.Same(t, secret, o.Cause(), "Cause returns what WithCause attached")
	assert.Same(t, secret, o.WithNext("other").Cause(), "WithNext keeps the cause")
	assert.Same(t, secret, o.WithData(1).Cause(), "WithData keeps the cause")
	assert.NotContains(t, o.Message(), "hunter2", "Message never renders the cause")
	assert.NotContains(t, o.String(), "hunter2", "String never renders the cause")
	b, err := json.Marshal(o)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "hunter2", "the JSON form never holds the cause")
	var back observation.Observation
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Nil(t, back.Cause(), "a decoded observation has no cause")
	assert.Nil(t, o.WithCause(nil).Cause(), "WithCause(nil) removes it")
}
