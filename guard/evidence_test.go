package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

const evRun = "run-ev"

// evAnswer is a handler that answers with a fixed observation and error.
func evAnswer(obs observation.Observation, err error) invoker.Handler {
	return func(context.Context, invoker.Call) (observation.Observation, error) { return obs, err }
}

func evCall(id string, attempt int) invoker.Call {
	return invoker.Call{ID: id, Name: "get_site", Args: json.RawMessage(`{"id": "s-1"}`), Run: evRun, Round: 3, Attempt: attempt}
}

func evRecords(t *testing.T, l evidence.Ledger) []evidence.Record {
	t.Helper()
	rs, err := l.Records(context.Background(), evRun)
	require.NoError(t, err)
	return rs
}

func TestEvidence_OnlyExecutedCallsRecorded(t *testing.T) {
	errStore := errors.New("backend gone")
	tests := []struct {
		reason   string
		obs      observation.Observation
		err      error
		recorded bool
	}{
		{"a success ran", observation.Success("ok", map[string]string{"id": "s-1"}), nil, true},
		{"a failure ran", observation.Failed(errcode.ToolTimeout, "timed out", "try later"), nil, true},
		{"a rejected call never ran", observation.Rejected(errcode.ArgRejected, "bad", "fix it"), nil, false},
		{"a deferred call has not run yet", observation.Deferred(errcode.ApprovalRequired, "needs approval", "ask"), nil, false},
		{"an infrastructure error is no verdict", observation.Observation{}, errStore, false},
	}
	for _, tt := range tests {
		l := evidence.NewMemory()
		obs, err := guard.Evidence(guard.EvidenceOptions{Ledger: l})(context.Background(), evCall("c1", 1), evAnswer(tt.obs, tt.err))
		assert.Equalf(t, tt.err, err, "Evidence error = %v; want %v (%s)", err, tt.err, tt.reason)
		assert.Equalf(t, tt.obs.String(), obs.String(), "Evidence changed the observation (%s)", tt.reason)
		rs := evRecords(t, l)
		if tt.recorded {
			assert.Lenf(t, rs, 1, "Evidence(%v) recorded %d records; want 1 (%s)", tt.obs, len(rs), tt.reason)
		} else {
			assert.Emptyf(t, rs, "Evidence(%v) recorded %v; want nothing (%s)", tt.obs, rs, tt.reason)
		}
	}
}

func TestEvidence_FirstFailureKeptAfterRetry(t *testing.T) {
	ctx := context.Background()
	l := evidence.NewMemory()
	ev := guard.Evidence(guard.EvidenceOptions{Ledger: l})
	attempts := []observation.Observation{
		observation.Failed(errcode.ToolUnavailable, "busy", "later", json.RawMessage(`{"error":"busy"}`)),
		observation.Failed(errcode.ToolRateLimited, "slow down", "later"),
		observation.Success("ok", json.RawMessage(`{"site":{"id":"s-1"}}`)),
	}
	for i, a := range attempts { // what the retry guard does: one pass per attempt
		_, err := ev(ctx, evCall("c1", i+1), evAnswer(a, nil))
		require.NoError(t, err)
	}
	rs := evRecords(t, l)
	require.Len(t, rs, 3, "Records = %+v; want every attempt", rs)
	want := []struct {
		attempt int
		o       outcome.Outcome
		code    errcode.Code
	}{{1, outcome.Failed, errcode.ToolUnavailable}, {2, outcome.Failed, errcode.ToolRateLimited}, {3, outcome.Success, 0}}
	for i, w := range want {
		assert.Equalf(t, w.attempt, rs[i].Attempt, "Records[%d].Attempt", i)
		assert.Equalf(t, w.o, rs[i].Outcome, "Records[%d].Outcome", i)
		assert.Equalf(t, w.code, rs[i].Code, "Records[%d].Code", i)
	}
	assert.JSONEq(t, `{"error":"busy"}`, string(rs[0].Payload), "the first failure keeps its body")

	last, found, err := l.Lookup(ctx, evRun, "c1")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, outcome.Success, last.Outcome, "Lookup(c1) = %v; want the success", last.Outcome)
	n, _, err := l.Executions(ctx, evRun, rs[0].Fingerprint)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "Executions = %d; want 1: three attempts of one call are one execution of the call", n)
}

func TestEvidence_RecordFields(t *testing.T) {
	l := evidence.NewMemory()
	call := evCall("c7", 0)
	at := time.Date(2025, 5, 4, 3, 2, 1, 0, time.UTC)
	_, err := guard.Evidence(guard.EvidenceOptions{Ledger: l, Now: func() time.Time { return at }})(context.Background(), call,
		evAnswer(observation.Success("ok", struct {
			ID string `json:"id"`
		}{"s-1"}), nil))
	require.NoError(t, err)
	rs := evRecords(t, l)
	require.Len(t, rs, 1)
	fp, err := fingerprint.Of("get_site", json.RawMessage(`{"id":"s-1"}`))
	require.NoError(t, err)
	assert.Equal(t, evidence.Record{
		CallID: "c7", Tool: "get_site", Fingerprint: fp, Outcome: outcome.Success,
		Payload: json.RawMessage(`{"id":"s-1"}`), Attempt: 1, Round: 3, Provenance: evidence.Provenance{FetchedAt: at},
	}, rs[0], "the fingerprint is the canonical one the fingerprint guard computes; attempt 0 is the first; the fetch time is the guard's clock")

	_, err = guard.Evidence(guard.EvidenceOptions{Ledger: l})(context.Background(),
		invoker.Call{ID: "c8", Name: "get_site", Args: json.RawMessage(`{oops`), Run: evRun, Attempt: 1},
		evAnswer(observation.Success("ok", nil), nil))
	require.NoError(t, err)
	rs = evRecords(t, l)
	assert.Empty(t, rs[1].Fingerprint, "arguments that are not JSON have no fingerprint (they are not counted)")
}

func TestEvidence_PayloadEncoding(t *testing.T) {
	tests := []struct {
		reason string
		data   any
		want   string // "" for no payload
	}{
		{"no data, no payload", nil, ""},
		{"raw JSON is kept as it is", json.RawMessage(`{"b":1, "a":2}`), `{"b":1, "a":2}`},
		{"raw JSON that is empty", json.RawMessage(` `), ""},
		{"raw JSON that is not JSON", json.RawMessage(`{oops`), ""},
		{"a Go value is encoded", map[string]int{"n": 1}, `{"n":1}`},
		{"an unencodable value stores nothing", make(chan int), ""},
	}
	for _, tt := range tests {
		l := evidence.NewMemory()
		obs, err := guard.Evidence(guard.EvidenceOptions{Ledger: l})(context.Background(), evCall("c1", 1),
			evAnswer(observation.Success("ok", tt.data), nil))
		require.NoErrorf(t, err, "Evidence(%s)", tt.reason)
		rs := evRecords(t, l)
		require.Lenf(t, rs, 1, "the attempt is recorded whatever its payload (%s)", tt.reason)
		assert.Equalf(t, tt.want, string(rs[0].Payload), "Records[0].Payload (%s)", tt.reason)
		// The observation passed on carries the encoding, equal to what
		// encoding the payload anew gives, so the loop does not encode it
		// a second time.
		again, errAgain := json.Marshal(tt.data)
		got, errGot := obs.DataJSON()
		assert.Equalf(t, errAgain == nil, errGot == nil, "DataJSON error (%s)", tt.reason)
		assert.Equalf(t, string(again), string(got), "DataJSON (%s)", tt.reason)
	}
}

func TestEvidence_LargePayloadReduced(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("x", 1000)
	payload := fmt.Sprintf(`{"sites":[{"id":"s-1","body":%q},{"id":"s-2","tags":[%q,"t"]}],"n":2}`, long, long)

	l := evidence.NewMemory()
	var offloaded []byte
	ev := guard.Evidence(guard.EvidenceOptions{Ledger: l, MaxPayload: 500,
		Offload: func(_ context.Context, run string, r evidence.Record, p []byte) (string, error) {
			offloaded = p
			return "blob://" + run + "/" + r.CallID, nil
		}})
	_, err := ev(ctx, evCall("c1", 1), evAnswer(observation.Success("ok", json.RawMessage(payload)), nil))
	require.NoError(t, err)
	rs := evRecords(t, l)
	require.Len(t, rs, 1)
	assert.JSONEq(t, `{"sites":[{"id":"s-1"},{"id":"s-2","tags":["t"]}],"n":2}`, string(rs[0].Payload),
		"the reduced payload keeps the structure and the short values")
	assert.Equal(t, "blob://run-ev/c1", rs[0].PayloadRef)
	assert.Equal(t, payload, string(offloaded), "Offload receives the full payload")
	has, _ := l.HasValue(ctx, evRun, "get_site", "sites.id", "s-2")
	assert.True(t, has, "HasValue(sites.id, s-2) = false; want true: identifiers stay evidence after reduction")

	// Without Offload, no reference; a payload too large even reduced is dropped.
	l = evidence.NewMemory()
	_, err = guard.Evidence(guard.EvidenceOptions{Ledger: l, MaxPayload: 10})(ctx, evCall("c1", 1),
		evAnswer(observation.Success("ok", json.RawMessage(payload)), nil))
	require.NoError(t, err)
	rs = evRecords(t, l)
	require.Len(t, rs, 1, "the attempt is recorded even without its payload")
	assert.Nil(t, rs[0].Payload)
	assert.Empty(t, rs[0].PayloadRef)

	// The default cap keeps this payload whole; so does no cap.
	for _, maxPayload := range []int{0, -1} {
		l = evidence.NewMemory()
		_, err = guard.Evidence(guard.EvidenceOptions{Ledger: l, MaxPayload: maxPayload})(ctx, evCall("c1", 1),
			evAnswer(observation.Success("ok", json.RawMessage(payload)), nil))
		require.NoError(t, err)
		assert.Equalf(t, payload, string(evRecords(t, l)[0].Payload), "MaxPayload %d", maxPayload)
	}
}

// evFailing is a ledger whose Append fails.
type evFailing struct{ evidence.Ledger }

var errEVStore = errors.New("ledger down")

func (evFailing) Append(context.Context, string, evidence.Record) error { return errEVStore }

func TestEvidence_StoreErrorIsInfrastructure(t *testing.T) {
	ctx := context.Background()
	success := evAnswer(observation.Success("ok", json.RawMessage(`{"a":"`+strings.Repeat("y", 600)+`"}`)), nil)
	obs, err := guard.Evidence(guard.EvidenceOptions{Ledger: evFailing{evidence.NewMemory()}})(ctx, evCall("c1", 1), success)
	assert.ErrorIs(t, err, errEVStore, "Evidence with a failing ledger = %v; want the ledger's error", err)
	assert.True(t, obs.IsZero(), "Evidence with a failing ledger = %v; want the zero observation", obs)

	obs, err = guard.Evidence(guard.EvidenceOptions{Ledger: evidence.NewMemory(), MaxPayload: 100,
		Offload: func(context.Context, string, evidence.Record, []byte) (string, error) { return "", errEVStore }})(ctx, evCall("c1", 1), success)
	assert.ErrorIs(t, err, errEVStore, "Evidence with a failing Offload = %v; want its error", err)
	assert.True(t, obs.IsZero())
}

// A business failure inside a "successful" body is recorded as the failure
// it is: its values are no evidence a later call could cite.
func TestEvidence_BusinessFailureIsNotEvidence(t *testing.T) {
	ctx := context.Background()
	l := evidence.NewMemory()
	tl := &tool.Tool{Name: "get_site", Contract: &tool.Contract{
		Business: func(result any) (bool, string, string) { return true, "system.50001", "quota exceeded" },
	}}
	h := invoker.Chain(evAnswer(observation.Success("ok", json.RawMessage(`{"code":50001,"id":"s-1"}`)), nil),
		guard.Evidence(guard.EvidenceOptions{Ledger: l}),
		guard.ResponseContract(guard.ResponseContractOptions{}))
	call := evCall("c1", 1)
	call.Tool = tl
	obs, err := h(ctx, call)
	require.NoError(t, err)
	assert.Equal(t, errcode.ToolBusinessFailed, obs.Code())
	rs := evRecords(t, l)
	require.Len(t, rs, 1)
	assert.Equal(t, outcome.Failed, rs[0].Outcome)
	assert.Equal(t, errcode.ToolBusinessFailed, rs[0].Code)
	assert.JSONEq(t, `{"code":50001,"id":"s-1"}`, string(rs[0].Payload), "the failure body is kept")
	has, _ := l.HasResult(ctx, evRun, "get_site")
	assert.False(t, has, "HasResult(get_site) after a business failure = true; want false")
}

func TestEvidence_NilLedgerPanics(t *testing.T) {
	assert.PanicsWithValue(t, "guard.Evidence: EvidenceOptions.Ledger is nil", func() {
		guard.Evidence(guard.EvidenceOptions{})
	})
}

func ExampleEvidence() {
	ctx := context.Background()
	ledger := evidence.NewMemory()
	answers := map[string][]observation.Observation{
		"c1": { // failed once, then succeeded on retry
			observation.Failed(errcode.ToolUnavailable, "the backend is busy", "wait"),
			observation.Success("found", json.RawMessage(`{"id":"s-1"}`)),
		},
		"c2": { // stopped before it ran: never evidence
			observation.Rejected(errcode.ArgRejected, "id is missing", "send id"),
		},
	}
	tool := func(_ context.Context, call invoker.Call) (observation.Observation, error) {
		return answers[call.ID][call.Attempt-1], nil
	}
	h := invoker.Chain(tool, guard.Evidence(guard.EvidenceOptions{Ledger: ledger}))
	for _, c := range []invoker.Call{
		{ID: "c1", Attempt: 1}, {ID: "c1", Attempt: 2}, {ID: "c2", Attempt: 1},
	} {
		c.Name, c.Run, c.Args = "get_site", "run-1", json.RawMessage(`{"id":"s-1"}`)
		_, _ = h(ctx, c)
	}

	records, _ := ledger.Records(ctx, "run-1")
	for _, r := range records {
		fmt.Printf("%s attempt %d %v payload=%s\n", r.CallID, r.Attempt, r.Outcome, r.Payload)
	}
	// Output:
	// c1 attempt 1 FAILED payload=
	// c1 attempt 2 SUCCESS payload={"id":"s-1"}
}

// The observation the evidence guard passes on carries the JSON it
// encoded: reading it again encodes nothing (the loop renders every
// result from it).
func TestEvidence_EncodesOnce(t *testing.T) {
	obs, err := guard.Evidence(guard.EvidenceOptions{Ledger: evidence.NewMemory()})(context.Background(), evCall("c1", 1),
		evAnswer(observation.Success("ok", map[string]any{"sites": []string{"blog", "shop"}}), nil))
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() { _, _ = obs.DataJSON() })
	assert.Zero(t, allocs, "DataJSON after the evidence guard allocates nothing: the encoding is kept")
}

// The size limits are inclusive: a payload of exactly MaxPayload bytes is
// kept whole; a reduced payload of exactly MaxPayload bytes is kept; a
// string of exactly 256 bytes survives the reduction.
func TestEvidence_PayloadLimitsAreInclusive(t *testing.T) {
	ctx := context.Background()
	record := func(maxPayload int, payload string) evidence.Record {
		t.Helper()
		l := evidence.NewMemory()
		_, err := guard.Evidence(guard.EvidenceOptions{Ledger: l, MaxPayload: maxPayload})(ctx, evCall("c1", 1),
			evAnswer(observation.Success("ok", json.RawMessage(payload)), nil))
		require.NoError(t, err)
		rs := evRecords(t, l)
		require.Len(t, rs, 1)
		return rs[0]
	}
	whole := `{"id":"s-1","body":"` + strings.Repeat("x", 300) + `"}`
	assert.Equal(t, whole, string(record(len(whole), whole).Payload), "exactly MaxPayload bytes: kept whole")
	assert.Equal(t, `{"id":"s-1"}`, string(record(len(whole)-1, whole).Payload), "one byte more: reduced")

	kept := `{"id":"s-1","note":"` + strings.Repeat("y", 256) + `","body":"` + strings.Repeat("x", 300) + `"}`
	reduced := `{"id":"s-1","note":"` + strings.Repeat("y", 256) + `"}`
	assert.JSONEq(t, reduced, string(record(len(reduced), kept).Payload), "a string of exactly 256 bytes is kept; the reduced payload of exactly MaxPayload bytes too")
	assert.Nil(t, record(len(reduced)-1, kept).Payload, "a reduced payload one byte over the limit is dropped")
	longer := `{"id":"s-1","note":"` + strings.Repeat("y", 257) + `","body":"` + strings.Repeat("x", 300) + `"}`
	assert.JSONEq(t, `{"id":"s-1"}`, string(record(len(reduced), longer).Payload), "a string of 257 bytes is dropped")
}
