package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
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
	"github.com/reactguard/reactguard/tool"
)

// oneDatabase is an approvingFake that also gates in the same operation
// (GatingWriteLedger) and stores a write's record with its evidence
// (RecordingWriteLedger), over an evidence ledger of its own, as the
// stores of one database do. It counts what it was asked.
type oneDatabase struct {
	*approvingFake
	ev       *countingLedger
	store    guard.Approvals // what it gates through
	gates    atomic.Int32    // BeginApprovedOrGate calls that gated
	recorded atomic.Int32    // FinishRecorded calls
}

var (
	_ guard.GatingWriteLedger    = (*oneDatabase)(nil)
	_ guard.RecordingWriteLedger = (*oneDatabase)(nil)
)

// countingLedger counts the Appends of its evidence.Memory; with fail set
// every Append fails with errEvidenceDown.
type countingLedger struct {
	*evidence.Memory
	appends atomic.Int32
	fail    atomic.Bool
}

// errEvidenceDown is the error of a countingLedger whose fail is set.
var errEvidenceDown = errors.New("evidence ledger down")

func (c *countingLedger) Append(ctx context.Context, run string, r evidence.Record) error {
	c.appends.Add(1)
	if c.fail.Load() {
		return errEvidenceDown
	}
	return c.Memory.Append(ctx, run, r)
}

func newOneDatabase(a guard.Approvals) *oneDatabase {
	d := &oneDatabase{approvingFake: newApprovingFake(a), ev: &countingLedger{Memory: evidence.NewMemory()}}
	d.store = a
	if g, ok := a.(*gateCounting); ok {
		d.consume, d.store = g.MemoryApprovals, g.MemoryApprovals
	}
	return d
}

func (d *oneDatabase) BeginApprovedOrGate(ctx context.Context, key, tl, run string, c guard.GatedCall) (guard.WriteRecord, bool, bool, error) {
	rec, ok, err := d.BeginApproved(ctx, key, tl, run, c.Fingerprint)
	if err != nil || ok || (rec.State != guard.WriteNone && rec.State != guard.WriteFailed) {
		return rec, ok, false, err
	}
	d.gates.Add(1)
	return rec, false, true, d.store.Gate(ctx, run, c)
}

func (d *oneDatabase) RecordsTo(l evidence.Ledger) bool {
	if c, ok := l.(*evidence.Cache); ok {
		l = c.Ledger()
	}
	return l == evidence.Ledger(d.ev)
}

func (d *oneDatabase) FinishRecorded(ctx context.Context, rec guard.WriteRecord, run string, r evidence.Record) error {
	d.recorded.Add(1)
	if err := d.Finish(ctx, rec); err != nil {
		return err
	}
	return d.ev.Memory.Append(ctx, run, r)
}

// A ledger that gates in the same operation answers every call of the
// write story as Begin, Consume and Gate do, and never asks Approvals.Gate.
func TestWriteGate_GatingLedgerAnswersTheSame(t *testing.T) {
	var slowExecs, fastExecs atomic.Int32
	slow := writeStory(t, guard.NewMemoryWriteLedger(), guard.NewMemoryApprovals(), &slowExecs)
	approvals := &gateCounting{countingApprovals: &countingApprovals{MemoryApprovals: guard.NewMemoryApprovals()}}
	db := newOneDatabase(approvals)
	fast := writeStory(t, db, approvals, &fastExecs)
	require.Equal(t, strings.Join(slow, "\n"), strings.Join(fast, "\n"), "the same answers, call by call")
	assert.Equal(t, slowExecs.Load(), fastExecs.Load())
	assert.EqualValues(t, 6, db.gates.Load(), "each of the 6 APPROVAL_REQUIRED answers was gated by the ledger (blog twice, fail twice, slow twice)")
	assert.Zero(t, approvals.gates.Load(), "the gate never called Approvals.Gate itself")
}

// gateCounting counts Approvals.Gate calls made by the write gate (the
// oneDatabase fake gates through the embedded store, not through this).
type gateCounting struct {
	*countingApprovals
	gates atomic.Int32
}

func (g *gateCounting) Gate(ctx context.Context, run string, c guard.GatedCall) error {
	g.gates.Add(1)
	return g.countingApprovals.Gate(ctx, run, c)
}

// Through the default chain, an approved write's evidence record is stored
// with the write's record (FinishRecorded), not appended on its own, and
// the run's cached evidence holds it at once; a read still appends.
func TestWriteGate_RecordingLedgerStoresTheEvidenceWithTheRecord(t *testing.T) {
	ctx := context.Background()
	approvals := guard.NewMemoryApprovals()
	db := newOneDatabase(approvals)
	cache := evidence.NewCache(db.ev)
	read := catalogued(t, &tool.Tool{Name: "get_site", Effect: tool.Read, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return map[string]string{"id": "s-1"}, nil }})
	create := catalogued(t, &tool.Tool{Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return map[string]string{"id": "s-2"}, nil }})
	h := invoker.Chain(invoker.New(nil), guard.Default(&guard.Options{Ledger: cache, Approvals: approvals, WriteLedger: db})...)
	call := func(id string, tl *tool.Tool) verdict {
		obs, err := h(ctx, invoker.Call{ID: id, Name: tl.Name, Tool: tl, Args: json.RawMessage(`{"name":"x"}`), Run: wgRun, Round: 1})
		require.NoError(t, err)
		return verdict{obs.Outcome(), obs.Code()}
	}
	assert.Equal(t, verdict{outcome.Success, 0}, call("r1", read))
	assert.EqualValues(t, 1, db.ev.appends.Load(), "a read appends its record")
	assert.Equal(t, verdict{outcome.Deferred, errcode.ApprovalRequired}, call("w1", create))
	gc, ok, err := approvals.Gated(ctx, wgRun)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, approvals.Approve(ctx, wgRun, gc.CallID, gc.Fingerprint))
	assert.Equal(t, verdict{outcome.Success, 0}, call("w2", create))
	assert.EqualValues(t, 1, db.ev.appends.Load(), "the write's record was not appended on its own")
	assert.EqualValues(t, 1, db.recorded.Load(), "it was stored with the write's record")
	r, ok, err := cache.Lookup(ctx, wgRun, "w2")
	require.NoError(t, err)
	require.True(t, ok, "the cached evidence holds the write's record")
	assert.Equal(t, outcome.Success, r.Outcome)
	r, ok, err = db.ev.Lookup(ctx, wgRun, "w2")
	require.NoError(t, err)
	require.True(t, ok, "the ledger holds it")
	assert.JSONEq(t, `{"id":"s-2"}`, string(r.Payload))
}

type verdict struct {
	o outcome.Outcome
	c errcode.Code
}

// When storing the write's record with its evidence fails, neither is
// stored and the gate returns the error; a ledger whose evidence is
// another ledger's is never asked to record.
func TestWriteGate_RecordingLedgerOnlyWhereItFits(t *testing.T) {
	ctx := context.Background()
	create := catalogued(t, &tool.Tool{Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return map[string]string{"id": "s-2"}, nil }})
	noApproval := func(invoker.Call) bool { return false }

	t.Run("another evidence ledger", func(t *testing.T) {
		db := newOneDatabase(guard.NewMemoryApprovals())
		other := evidence.NewMemory()
		h := invoker.Chain(invoker.New(nil), guard.Default(&guard.Options{Ledger: other, WriteLedger: db, RequireApproval: noApproval})...)
		_, err := h(ctx, invoker.Call{ID: "w1", Name: create.Name, Tool: create, Args: json.RawMessage(`{}`), Run: wgRun})
		require.NoError(t, err)
		assert.Zero(t, db.recorded.Load())
		_, ok, _ := other.Lookup(ctx, wgRun, "w1")
		assert.True(t, ok, "the record went to the chain's own ledger")
	})
	t.Run("fenced", func(t *testing.T) {
		db := newOneDatabase(guard.NewMemoryApprovals())
		fenced := &fencedRecording{oneDatabase: db}
		h := invoker.Chain(invoker.New(nil), guard.Default(&guard.Options{Ledger: db.ev, WriteLedger: fenced, RequireApproval: noApproval})...)
		_, err := h(ctx, invoker.Call{ID: "w1", Name: create.Name, Tool: create, Args: json.RawMessage(`{}`), Run: wgRun})
		require.ErrorIs(t, err, guard.ErrFenced)
		_, ok, _ := db.ev.Lookup(ctx, wgRun, "w1")
		assert.False(t, ok, "no evidence of a fenced holder's write")
	})
}

// fencedRecording refuses every FinishRecorded: the claim was taken over.
type fencedRecording struct{ *oneDatabase }

func (f *fencedRecording) FinishRecorded(context.Context, guard.WriteRecord, string, evidence.Record) error {
	return errors.Join(guard.ErrFenced, errors.New("taken over"))
}

// A write retried by its policy inside a write gate whose ledger stores
// the write's record with its evidence: every attempt's record is kept.
// The gate holds an attempt's record until it knows whether another
// follows; the earlier attempts' records are appended on their own, the
// last one is stored with the write's record. When appending an earlier
// attempt's record fails, the call returns that error, not a verdict.
func TestWriteGate_RecordingLedgerKeepsEveryAttempt(t *testing.T) {
	ctx := context.Background()
	noApproval := func(invoker.Call) bool { return false }
	noSleep := guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }}
	newCreate := func(runs *atomic.Int32) *tool.Tool {
		return catalogued(t, &tool.Tool{Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
			Retry: &tool.RetryPolicy{Attempts: 3},
			Func: func(context.Context, tool.Request) (any, error) {
				if runs.Add(1) < 3 {
					return nil, tool.Unavailable("503 before the request was forwarded")
				}
				return map[string]string{"id": "s-2"}, nil
			}})
	}

	t.Run("kept", func(t *testing.T) {
		var runs atomic.Int32
		create := newCreate(&runs)
		db := newOneDatabase(guard.NewMemoryApprovals())
		h := invoker.Chain(invoker.New(nil), guard.Default(&guard.Options{Ledger: db.ev, WriteLedger: db, RequireApproval: noApproval, Retry: noSleep})...)
		obs, err := h(ctx, invoker.Call{ID: "w1", Name: create.Name, Tool: create, Args: json.RawMessage(`{}`), Run: wgRun})
		require.NoError(t, err)
		assert.Equal(t, outcome.Success, obs.Outcome(), "the third attempt succeeded: %v", obs)
		assert.EqualValues(t, 3, runs.Load())
		assert.EqualValues(t, 2, db.ev.appends.Load(), "the two failed attempts were appended on their own")
		assert.EqualValues(t, 1, db.recorded.Load(), "the last attempt was stored with the write's record")
		snap, err := db.ev.Export(ctx, wgRun)
		require.NoError(t, err)
		var got []string
		for _, r := range snap.Records {
			got = append(got, fmt.Sprintf("%s %d %s", r.CallID, r.Attempt, r.Outcome))
		}
		assert.Equal(t, []string{"w1 1 FAILED", "w1 2 FAILED", "w1 3 SUCCESS"}, got, "every attempt, in order")
	})
	t.Run("an earlier attempt's record cannot be appended", func(t *testing.T) {
		var runs atomic.Int32
		create := newCreate(&runs)
		db := newOneDatabase(guard.NewMemoryApprovals())
		db.ev.fail.Store(true)
		h := invoker.Chain(invoker.New(nil), guard.Default(&guard.Options{Ledger: db.ev, WriteLedger: db, RequireApproval: noApproval, Retry: noSleep})...)
		_, err := h(ctx, invoker.Call{ID: "w1", Name: create.Name, Tool: create, Args: json.RawMessage(`{}`), Run: wgRun})
		require.ErrorIs(t, err, errEvidenceDown)
		assert.Contains(t, err.Error(), `record call "w1" attempt 1`)
		assert.EqualValues(t, 2, runs.Load(), "the second attempt ran; its record was never stored")
		assert.Zero(t, db.recorded.Load())
	})
}

// A write whose handler returns a Go error after an earlier attempt failed
// and was held: the held record is appended on its own and the write is
// recorded uncertain; the Go error comes back as it was. When that append
// fails, the error says the write could not be recorded as uncertain.
func TestWriteGate_RecordingLedgerFlushesOnAGoError(t *testing.T) {
	ctx := context.Background()
	create := catalogued(t, &tool.Tool{Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Retry: &tool.RetryPolicy{Attempts: 3}, Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
	broke := errors.New("transport broke")
	for _, down := range []bool{false, true} {
		t.Run(fmt.Sprintf("ledger down=%v", down), func(t *testing.T) {
			db := newOneDatabase(guard.NewMemoryApprovals())
			db.ev.fail.Store(down)
			var runs int
			var key string
			final := func(_ context.Context, call invoker.Call) (observation.Observation, error) {
				runs++
				key = call.IdempotencyKey
				if runs == 1 {
					return observation.Failed(errcode.ToolUnavailable, "503", "later", nil), nil
				}
				return observation.Observation{}, broke
			}
			h := invoker.Chain(final,
				guard.WriteGate(guard.WriteGateOptions{WriteLedger: db, Ledger: db.ev, RequireApproval: func(invoker.Call) bool { return false }}),
				guard.Retry(guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }}),
				guard.Evidence(guard.EvidenceOptions{Ledger: db.ev}))
			_, err := h(ctx, invoker.Call{ID: "w1", Name: create.Name, Tool: create, Args: json.RawMessage(`{}`), Run: wgRun})
			require.ErrorIs(t, err, broke)
			assert.Equal(t, 2, runs)
			rec, ok, gerr := db.Get(ctx, key)
			require.NoError(t, gerr)
			require.True(t, ok)
			if down {
				require.ErrorIs(t, err, errEvidenceDown)
				assert.Contains(t, err.Error(), `recording the write as uncertain: guard: evidence: record call "w1" attempt 1`)
				return
			}
			assert.Equal(t, broke, err, "the Go error comes back unchanged")
			assert.Equal(t, guard.WriteUncertain, rec.State, "nobody knows whether the second attempt applied")
			r, ok, lerr := db.ev.Lookup(ctx, wgRun, "w1")
			require.NoError(t, lerr)
			require.True(t, ok, "the first attempt's record was appended")
			assert.Equal(t, outcome.Failed, r.Outcome)
			assert.Equal(t, 1, r.Attempt)
		})
	}
}
