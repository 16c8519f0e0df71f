package guard

import (
	"bytes"
	"context"
	"fmt"
	"sync"
)

// MemoryApprovals is the in-memory [Approvals] store, the default of
// [Options]. It is safe for concurrent use; its zero value is not usable,
// build it with [NewMemoryApprovals]. State lives only as long as the
// process: a service on several replicas plugs in a shared store instead.
type MemoryApprovals struct {
	mu   sync.Mutex
	runs map[string]*approvalRun
}

type approvalRun struct {
	gated     GatedCall
	hasGated  bool
	decisions map[string]decision // call id -> decision on that gated call
	granted   map[string]int      // fingerprint -> executions granted and not consumed
}

// decision is what the user decided on one gated call.
type decision struct {
	fingerprint string
	approved    bool
}

// NewMemoryApprovals returns an empty in-memory approvals store.
func NewMemoryApprovals() *MemoryApprovals {
	return &MemoryApprovals{runs: make(map[string]*approvalRun)}
}

func (m *MemoryApprovals) run(id string) *approvalRun {
	r := m.runs[id]
	if r == nil {
		r = &approvalRun{decisions: make(map[string]decision), granted: make(map[string]int)}
		m.runs[id] = r
	}
	return r
}

// Gate implements [Approvals.Gate]. It keeps its own copy of c.Args.
func (m *MemoryApprovals) Gate(_ context.Context, run string, c GatedCall) error {
	c.Args = bytes.Clone(c.Args)
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.run(run)
	r.gated, r.hasGated = c, true
	delete(r.decisions, c.CallID) // a call gated again asks anew
	return nil
}

// Gated implements [Approvals.Gated]. The returned Args are a copy.
func (m *MemoryApprovals) Gated(_ context.Context, run string) (GatedCall, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.runs[run]
	if r == nil || !r.hasGated {
		return GatedCall{}, false, nil
	}
	c := r.gated
	c.Args = bytes.Clone(c.Args)
	return c, true, nil
}

// Approve implements [Approvals.Approve].
func (m *MemoryApprovals) Approve(_ context.Context, run, callID, fingerprint string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.decide(run, callID, fingerprint, true)
}

// Decline implements [Approvals.Decline].
func (m *MemoryApprovals) Decline(_ context.Context, run, callID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.decide(run, callID, "", false)
}

// decide records the decision on callID; m.mu is held. A decline does not
// compare fingerprints (it grants nothing).
func (m *MemoryApprovals) decide(run, callID, fingerprint string, approve bool) error {
	r := m.runs[run]
	if r != nil {
		if d, ok := r.decisions[callID]; ok {
			if d.approved == approve && (!approve || d.fingerprint == fingerprint) {
				return nil // the same decision delivered again
			}
			return notPending(run, callID)
		}
	}
	if r == nil || !r.hasGated || r.gated.CallID != callID || (approve && r.gated.Fingerprint != fingerprint) {
		return notPending(run, callID)
	}
	r.decisions[callID] = decision{fingerprint: r.gated.Fingerprint, approved: approve}
	if approve {
		r.granted[fingerprint]++
	}
	r.gated, r.hasGated = GatedCall{}, false
	return nil
}

func notPending(run, callID string) error {
	return fmt.Errorf("%w: call %q of run %q", ErrNotPending, callID, run)
}

// Consume implements [Approvals.Consume].
func (m *MemoryApprovals) Consume(_ context.Context, run, fingerprint string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.runs[run]
	if r == nil || r.granted[fingerprint] == 0 {
		return false, nil
	}
	if r.granted[fingerprint]--; r.granted[fingerprint] == 0 {
		delete(r.granted, fingerprint)
	}
	return true, nil
}

// Forget drops everything held for run (call it when a run has ended and
// will not resume).
func (m *MemoryApprovals) Forget(run string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, run)
}

// MemoryWriteLedger is the in-memory [WriteLedger], the default of
// [Options]. It is safe for concurrent use and Begin is atomic; its zero
// value is not usable, build it with [NewMemoryWriteLedger]. Records live
// only as long as the process. Each claim gets a fencing token from one
// counter of the ledger, and Finish fences records by it (see
// [WriteLedger.Finish]); claims hold as long as the process.
type MemoryWriteLedger struct {
	mu    sync.Mutex
	recs  map[string]WriteRecord
	token uint64 // the last token issued
}

// NewMemoryWriteLedger returns an empty in-memory write ledger.
func NewMemoryWriteLedger() *MemoryWriteLedger {
	return &MemoryWriteLedger{recs: make(map[string]WriteRecord)}
}

// Begin implements [WriteLedger.Begin].
func (m *MemoryWriteLedger) Begin(_ context.Context, key, tool string) (WriteRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.recs[key]
	if ok && rec.State != WriteNone && rec.State != WriteFailed {
		return cloneRecord(rec), false, nil
	}
	m.token++
	rec = WriteRecord{Key: key, Tool: tool, State: WriteRunning, Token: m.token}
	m.recs[key] = rec
	return rec, true, nil
}

// Finish implements [WriteLedger.Finish]. It keeps its own copy of
// rec.Result.
func (m *MemoryWriteLedger) Finish(_ context.Context, rec WriteRecord) error {
	rec = cloneRecord(rec)
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.recs[rec.Key]
	if rec.Token != 0 && (!ok || cur.Token != rec.Token || (cur.State != WriteRunning && cur.State != WriteUncertain)) {
		return fenced(rec, cur, ok)
	}
	rec.Token = cur.Token
	m.recs[rec.Key] = rec
	return nil
}

// fenced is the error of a Finish whose record rec does not close the
// key's current claim cur (found says the key has a record).
func fenced(rec, cur WriteRecord, found bool) error {
	if !found {
		return fmt.Errorf("%w: key %q has no record", ErrFenced, rec.Key)
	}
	return fmt.Errorf("%w: key %q is at token %d in state %d, the record closes token %d", ErrFenced, rec.Key, cur.Token, cur.State, rec.Token)
}

// Get implements [WriteLedger.Get]. The returned Result is a copy.
func (m *MemoryWriteLedger) Get(_ context.Context, key string) (WriteRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.recs[key]
	return cloneRecord(rec), ok, nil
}

func cloneRecord(r WriteRecord) WriteRecord {
	r.Result = bytes.Clone(r.Result)
	return r
}
