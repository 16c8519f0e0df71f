package guard

import (
	"bytes"
	"context"
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
	gated    GatedCall
	hasGated bool
	granted  map[string]int // fingerprint -> executions granted and not consumed
}

// NewMemoryApprovals returns an empty in-memory approvals store.
func NewMemoryApprovals() *MemoryApprovals {
	return &MemoryApprovals{runs: make(map[string]*approvalRun)}
}

func (m *MemoryApprovals) run(id string) *approvalRun {
	r := m.runs[id]
	if r == nil {
		r = &approvalRun{granted: make(map[string]int)}
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

// Approve implements [Approvals.Approve]. Each call grants one more
// execution of fingerprint.
func (m *MemoryApprovals) Approve(_ context.Context, run, fingerprint string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.run(run)
	r.granted[fingerprint]++
	r.gated, r.hasGated = GatedCall{}, false
	return nil
}

// Decline implements [Approvals.Decline].
func (m *MemoryApprovals) Decline(_ context.Context, run string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.runs[run]; r != nil {
		r.gated, r.hasGated = GatedCall{}, false
	}
	return nil
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
// only as long as the process.
type MemoryWriteLedger struct {
	mu   sync.Mutex
	recs map[string]WriteRecord
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
	rec = WriteRecord{Key: key, Tool: tool, State: WriteRunning}
	m.recs[key] = rec
	return rec, true, nil
}

// Finish implements [WriteLedger.Finish]. It keeps its own copy of
// rec.Result.
func (m *MemoryWriteLedger) Finish(_ context.Context, rec WriteRecord) error {
	rec = cloneRecord(rec)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[rec.Key] = rec
	return nil
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
