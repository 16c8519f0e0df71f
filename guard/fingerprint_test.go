package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// fpRig is a fingerprint guard over an evidence guard over a scripted
// handler, sharing one ledger: what executes is recorded, and the guard
// counts it.
type fpRig struct {
	ledger  *evidence.Memory
	h       invoker.Handler
	answer  func(call invoker.Call) observation.Observation
	reached int
	n       int
}

func newFPRig(opts guard.FingerprintOptions) *fpRig {
	r := &fpRig{ledger: evidence.NewMemory()}
	r.answer = func(invoker.Call) observation.Observation {
		return observation.Success("ok", json.RawMessage(`{"sites":["blog"]}`))
	}
	opts.Ledger = r.ledger
	r.h = invoker.Chain(func(_ context.Context, call invoker.Call) (observation.Observation, error) {
		r.reached++
		return r.answer(call), nil
	}, guard.Fingerprint(opts), guard.Evidence(guard.EvidenceOptions{Ledger: r.ledger}))
	return r
}

// call sends a new call (a fresh call id) of tl with args.
func (r *fpRig) call(t *testing.T, tl *tool.Tool, args string) observation.Observation {
	t.Helper()
	r.n++
	obs, err := r.h(context.Background(), invoker.Call{ID: "c" + strconv.Itoa(r.n), Name: tl.Name, Args: json.RawMessage(args), Tool: tl, Run: "run-1", Round: r.n, Attempt: 1})
	require.NoError(t, err)
	return obs
}

func fpTool(name string) *tool.Tool {
	return &tool.Tool{Name: name, Effect: tool.Read, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }}
}

func TestFingerprint_TripsAtDefaultLimit(t *testing.T) {
	r := newFPRig(guard.FingerprintOptions{})
	tl := fpTool("list_sites")
	for i := 1; i <= guard.DefaultFingerprintLimit; i++ {
		obs := r.call(t, tl, `{"q":"blog"}`)
		require.Equal(t, outcome.Success, obs.Outcome(), "call %d of %d allowed = %v; want it executed", i, guard.DefaultFingerprintLimit, obs)
	}
	obs := r.call(t, tl, `{"q":"blog"}`)
	assert.Equal(t, outcome.Rejected, obs.Outcome(), "call past the limit = %v; want REJECTED", obs)
	assert.Equal(t, errcode.FingerprintTrip, obs.Code())
	assert.Equal(t, `list_sites was already called 2 times with the same arguments; the last result was: SUCCESS {"sites":["blog"]}`, obs.Reason(),
		"the reason carries the count and the earlier result's gist")
	assert.Equal(t, prompt.Default().Text(prompt.NextFingerprint, "tool", "list_sites"), obs.Next())
	assert.Equal(t, guard.DefaultFingerprintLimit, r.reached, "the tripped call must not run")
}

func TestFingerprint_KeyOrderAndWhitespace(t *testing.T) {
	r := newFPRig(guard.FingerprintOptions{})
	tl := fpTool("list_sites")
	require.Equal(t, outcome.Success, r.call(t, tl, `{"q":"blog","page":1}`).Outcome())
	require.Equal(t, outcome.Success, r.call(t, tl, "{ \"page\" : 1,\n \"q\" : \"blog\" }").Outcome())
	obs := r.call(t, tl, `{"page":1,"q":"\u0062log"}`)
	assert.Equal(t, errcode.FingerprintTrip, obs.Code(),
		"arguments differing only in key order, whitespace or escaping are the same call; got %v", obs)
}

func TestFingerprint_DifferentCallsNotCounted(t *testing.T) {
	r := newFPRig(guard.FingerprintOptions{Limit: 1})
	a, b := fpTool("list_sites"), fpTool("list_spaces")
	require.Equal(t, outcome.Success, r.call(t, a, `{"q":"blog"}`).Outcome())
	assert.Equal(t, outcome.Success, r.call(t, a, `{"q":"shop"}`).Outcome(), "other arguments are another call")
	assert.Equal(t, outcome.Success, r.call(t, b, `{"q":"blog"}`).Outcome(), "another tool is another call")
	assert.Equal(t, errcode.FingerprintTrip, r.call(t, a, `{"q":"blog"}`).Code())
}

func TestFingerprint_LimitConfigurable(t *testing.T) {
	tests := []struct {
		limit, allowed int
		reason         string
	}{
		{1, 1, "a limit of 1 forbids any repetition"},
		{3, 3, "a higher limit allows more repetitions"},
		{0, guard.DefaultFingerprintLimit, "0 means the default"},
		{-5, guard.DefaultFingerprintLimit, "a negative limit means the default"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			r := newFPRig(guard.FingerprintOptions{Limit: tt.limit})
			tl := fpTool("list_sites")
			executed := 0
			for range tt.allowed + 2 {
				if r.call(t, tl, `{}`).Outcome() == outcome.Success {
					executed++
				}
			}
			assert.Equal(t, tt.allowed, executed, "Limit %d executed %d identical calls; want %d (%s)", tt.limit, executed, tt.allowed, tt.reason)
		})
	}
}

func TestFingerprint_RejectedAndDeferredNotCounted(t *testing.T) {
	r := newFPRig(guard.FingerprintOptions{Limit: 1})
	tl := fpTool("create_site")
	stopped := []observation.Observation{
		observation.Rejected(errcode.ArgRejected, "bad", "fix it"),
		observation.Deferred(errcode.ApprovalRequired, "needs approval", "ask for approval"),
		observation.Deferred(errcode.WriteInFlight, "running", "wait"),
		observation.Rejected(errcode.ParamProvenanceMismatch, "wrong source", "take it from the user"),
	}
	for i, want := range stopped {
		r.answer = func(invoker.Call) observation.Observation { return want }
		obs := r.call(t, tl, `{"name":"blog"}`)
		assert.Equal(t, want.Code(), obs.Code(), "call %d: a stopped call must not trip the guard, got %v", i+1, obs)
	}
	r.answer = func(invoker.Call) observation.Observation { return observation.Success("created", nil) }
	assert.Equal(t, outcome.Success, r.call(t, tl, `{"name":"blog"}`).Outcome(),
		"after only REJECTED and DEFERRED calls, the first execution is still allowed")
	assert.Equal(t, errcode.FingerprintTrip, r.call(t, tl, `{"name":"blog"}`).Code(), "the execution counts")
}

func TestFingerprint_FailedExecutionsCount(t *testing.T) {
	r := newFPRig(guard.FingerprintOptions{Limit: 1})
	tl := fpTool("list_sites")
	r.answer = func(invoker.Call) observation.Observation {
		return observation.Failed(errcode.ToolUnavailable, "down", "later", json.RawMessage(`{"status":503}`))
	}
	require.Equal(t, outcome.Failed, r.call(t, tl, `{}`).Outcome())
	obs := r.call(t, tl, `{}`)
	assert.Equal(t, errcode.FingerprintTrip, obs.Code(), "a FAILED call executed and counts")
	assert.True(t, strings.HasSuffix(obs.Reason(), `the last result was: FAILED TOOL_UNAVAILABLE`), "reason %q: a failure's body is not shown", obs.Reason())
}

func TestFingerprint_RetryAttemptsCountOnce(t *testing.T) {
	ledger := evidence.NewMemory()
	failures := 2
	h := invoker.Chain(func(context.Context, invoker.Call) (observation.Observation, error) {
		if failures > 0 {
			failures--
			return observation.Failed(errcode.ToolUnavailable, "down", "later"), nil
		}
		return observation.Success("ok", nil), nil
	},
		guard.Fingerprint(guard.FingerprintOptions{Ledger: ledger, Limit: 2}),
		guard.Retry(guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }}),
		guard.Evidence(guard.EvidenceOptions{Ledger: ledger}),
	)
	tl := fpTool("list_sites")
	tl.Retry = &tool.RetryPolicy{Attempts: 3}
	sendID := func(id string) observation.Observation {
		obs, err := h(context.Background(), invoker.Call{ID: id, Name: tl.Name, Args: json.RawMessage(`{}`), Tool: tl, Run: "run-1"})
		require.NoError(t, err)
		return obs
	}
	require.Equal(t, outcome.Success, sendID("c1").Outcome(), "the first call succeeds on its third attempt")
	recs, err := ledger.Records(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, recs, 3, "three attempts are recorded")
	assert.Equal(t, outcome.Success, sendID("c2").Outcome(), "three attempts of one call count as one execution")
	assert.Equal(t, errcode.FingerprintTrip, sendID("c3").Code())
}

func TestFingerprint_PollableOptOut(t *testing.T) {
	r := newFPRig(guard.FingerprintOptions{Limit: 1})
	tl := fpTool("job_status")
	tl.Pollable = true
	for i := range 5 {
		obs := r.call(t, tl, `{"job":"j-1"}`)
		assert.Equal(t, outcome.Success, obs.Outcome(), "poll %d of a Pollable tool = %v; want it executed", i+1, obs)
	}
	assert.Equal(t, 5, r.reached)
}

func TestFingerprint_PassesWhatIsNotItsJob(t *testing.T) {
	r := newFPRig(guard.FingerprintOptions{Limit: 1})
	tl := fpTool("list_sites")
	for range 3 {
		assert.Equal(t, outcome.Success, r.call(t, tl, `not json`).Outcome(), "arguments that are not JSON are the arg policy's job")
	}
	obs, err := r.h(context.Background(), invoker.Call{ID: "x", Name: "nothing"})
	require.NoError(t, err)
	assert.Equal(t, outcome.Success, obs.Outcome(), "a call without a tool is the invoker's job")
}

func TestFingerprint_GistIsShort(t *testing.T) {
	l := evidence.NewMemory()
	h := invoker.Chain((&reached{}).handle, guard.Fingerprint(guard.FingerprintOptions{Ledger: l, Limit: 1}))
	tl := fpTool("read_doc")
	fp := mustFingerprint(t, "read_doc", `{}`)
	long := `"` + strings.Repeat("x", 5000) + `"`
	require.NoError(t, l.Append(context.Background(), "run-1", evidence.Record{CallID: "c0", Tool: "read_doc", Fingerprint: fp, Outcome: outcome.Success, Payload: json.RawMessage(long), Attempt: 1}))
	obs, err := send(t, h, tl, `{}`)
	require.NoError(t, err)
	assert.Less(t, len(obs.Reason()), 400, "a long payload is clipped in the gist")

	l = evidence.NewMemory()
	h = invoker.Chain((&reached{}).handle, guard.Fingerprint(guard.FingerprintOptions{Ledger: l, Limit: 1}))
	require.NoError(t, l.Append(context.Background(), "run-1", evidence.Record{CallID: "c0", Tool: "read_doc", Fingerprint: fp, Outcome: outcome.Success, PayloadRef: "blob://42", Attempt: 1}))
	obs, err = send(t, h, tl, `{}`)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(obs.Reason(), "the last result was: SUCCESS blob://42"), "without a payload the gist names its reference: %q", obs.Reason())
}

// failingLedger is an evidence ledger whose reads fail.
type failingLedger struct{ evidence.Ledger }

func (failingLedger) Executions(context.Context, string, string) (int, evidence.Record, error) {
	return 0, evidence.Record{}, errStoreDown
}

func TestFingerprint_LedgerErrorIsInfrastructure(t *testing.T) {
	h := invoker.Chain((&reached{}).handle, guard.Fingerprint(guard.FingerprintOptions{Ledger: failingLedger{evidence.NewMemory()}}))
	obs, err := send(t, h, fpTool("list_sites"), `{}`)
	assert.ErrorIs(t, err, errStoreDown)
	assert.True(t, obs.IsZero())
}

func TestFingerprint_NilLedgerPanics(t *testing.T) {
	assert.Panics(t, func() { guard.Fingerprint(guard.FingerprintOptions{}) })
}

func ExampleFingerprint() {
	ledger := evidence.NewMemory()
	listSites := tool.New("list_sites", "lists sites", func(context.Context, struct{}) ([]string, error) {
		return []string{"blog", "shop"}, nil
	})
	listSites.Effect = tool.Read
	tool.MustCatalog(listSites)

	h := invoker.Chain(invoker.New(nil),
		guard.Fingerprint(guard.FingerprintOptions{Ledger: ledger}), // limit 2
		guard.Evidence(guard.EvidenceOptions{Ledger: ledger}),
	)
	for i, args := range []string{`{}`, ` { } `, `{}`} {
		obs, _ := h(context.Background(), invoker.Call{ID: fmt.Sprint("c", i), Name: "list_sites", Args: json.RawMessage(args), Tool: listSites, Run: "r"})
		fmt.Println(obs)
	}
	// Output:
	// SUCCESS: list_sites succeeded
	// SUCCESS: list_sites succeeded
	// REJECTED FINGERPRINT_TRIP: list_sites was already called 2 times with the same arguments; the last result was: SUCCESS ["blog","shop"]. Next: use the earlier result instead of calling list_sites again with the same arguments; if it does not help, change your approach or call builtin_node_fail
}

// TestCallFingerprint_ComputedOnce checks that the guards needing the
// fingerprint share invoker.Call.Fingerprint: each computes it only when it
// is empty, passes the call down with it set, and trusts a value set
// further out.
func TestCallFingerprint_ComputedOnce(t *testing.T) {
	read := catalogued(t, fpTool("list_sites"))
	write := catalogued(t, &tool.Tool{Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
	args := `{"b": 1, "a": [true]}`
	want := func(tl *tool.Tool) string { return mustFingerprint(t, tl.Name, args) }
	never := func(invoker.Call) bool { return false }
	cases := []struct {
		reason string
		guard  func(ledger evidence.Ledger) invoker.Interceptor
		tool   *tool.Tool
		preset string // call.Fingerprint as sent
		want   func(tl *tool.Tool) string
	}{
		{"the fingerprint guard computes an empty fingerprint and passes it down",
			func(l evidence.Ledger) invoker.Interceptor {
				return guard.Fingerprint(guard.FingerprintOptions{Ledger: l})
			},
			read, "", want},
		{"the write gate computes an empty fingerprint and passes it down",
			func(evidence.Ledger) invoker.Interceptor {
				return guard.WriteGate(guard.WriteGateOptions{RequireApproval: never})
			},
			write, "", want},
		{"the fingerprint guard keeps a fingerprint set further out",
			func(l evidence.Ledger) invoker.Interceptor {
				return guard.Fingerprint(guard.FingerprintOptions{Ledger: l})
			},
			read, "preset", func(*tool.Tool) string { return "preset" }},
		{"the write gate keeps a fingerprint set further out",
			func(evidence.Ledger) invoker.Interceptor {
				return guard.WriteGate(guard.WriteGateOptions{RequireApproval: never})
			},
			write, "preset", func(*tool.Tool) string { return "preset" }},
		{"a pollable tool skips the fingerprint guard, which leaves the field empty",
			func(l evidence.Ledger) invoker.Interceptor {
				return guard.Fingerprint(guard.FingerprintOptions{Ledger: l})
			},
			&tool.Tool{Name: "poll", Effect: tool.Read, Pollable: true}, "", func(*tool.Tool) string { return "" }},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			var r reached
			h := invoker.Chain(r.handle, c.guard(evidence.NewMemory()))
			_, err := h(context.Background(), invoker.Call{ID: "c1", Name: c.tool.Name, Args: json.RawMessage(args), Tool: c.tool, Run: "run-1", Fingerprint: c.preset})
			require.NoError(t, err)
			require.Equal(t, 1, r.calls, "%s: the call must reach the handler", c.reason)
			assert.Equal(t, c.want(c.tool), r.last.Fingerprint, "%s: call.Fingerprint seen inside", c.reason)
		})
	}
}

// TestEvidence_UsesCallFingerprint checks that the evidence guard records
// invoker.Call.Fingerprint when it is set and computes it when it is not.
func TestEvidence_UsesCallFingerprint(t *testing.T) {
	tl := fpTool("list_sites")
	for _, c := range []struct {
		reason, preset, args, want string
	}{
		{"a fingerprint set further out is recorded as is", "preset", `{"a":1}`, "preset"},
		{"an empty fingerprint is computed", "", `{"a":1}`, mustFingerprint(t, "list_sites", `{"a":1}`)},
		{"arguments that are not JSON record no fingerprint", "", `{"a":`, ""},
	} {
		ledger := evidence.NewMemory()
		var r reached
		h := invoker.Chain(r.handle, guard.Evidence(guard.EvidenceOptions{Ledger: ledger}))
		_, err := h(context.Background(), invoker.Call{ID: "c1", Name: tl.Name, Args: json.RawMessage(c.args), Tool: tl, Run: "run-1", Fingerprint: c.preset})
		require.NoError(t, err)
		recs, err := ledger.Records(context.Background(), "run-1")
		require.NoError(t, err)
		require.NotEmpty(t, recs, c.reason)
		assert.Equal(t, c.want, recs[len(recs)-1].Fingerprint, "%s: recorded fingerprint", c.reason)
	}
}

// TestFingerprint_ReformattedNumbers: a model that repeats a call with the
// same number written another way (1, 1.0, 1e0, 10E-1) repeats the call,
// and trips the guard like any repetition; a different number does not.
func TestFingerprint_ReformattedNumbers(t *testing.T) {
	r := newFPRig(guard.FingerprintOptions{Limit: 3})
	tl := fpTool("get_page")
	for i, args := range []string{`{"page":1}`, `{"page":1.0}`, `{"page":1e0}`} {
		obs := r.call(t, tl, args)
		require.Equalf(t, outcome.Success, obs.Outcome(), "call %d (%s) = %v; want it executed", i+1, args, obs)
	}
	obs := r.call(t, tl, `{"page":10E-1}`)
	assert.Equalf(t, errcode.FingerprintTrip, obs.Code(), "call 4 ({\"page\":10E-1}) = %v; want FINGERPRINT_TRIP: the same page, reformatted", obs)
	obs = r.call(t, tl, `{"page":2}`)
	assert.Equalf(t, outcome.Success, obs.Outcome(), "call of page 2 = %v; want it executed: another number", obs)
	assert.Equal(t, 4, r.reached, "the tripped call must not run")
}
