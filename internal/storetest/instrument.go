package storetest

import (
	"context"
	"sync"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// Hook sees every call a loop makes to instrumented stores (see
// Instrument), in order, and may end the process at one of them.
type Hook struct {
	mu  sync.Mutex
	ops []string
	// At is the call (1-based) at which Kill is called, before the call
	// reaches the store or, with After, once the store answered; 0 never.
	At    int
	After bool
	// Kill ends the process (SIGKILL); it does not return.
	Kill func()
	// Claimed, when set, is told of every resume claim the store granted.
	Claimed func(run, id string)
}

// Ops returns the names of the calls so far.
func (h *Hook) Ops() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ops...)
}

// do runs the store call op through the hook.
func (h *Hook) do(op string, f func()) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	n := len(h.ops)
	h.mu.Unlock()
	if n == h.At && !h.After {
		h.Kill()
	}
	f()
	if n == h.At && h.After {
		h.Kill()
	}
}

func (h *Hook) claimed(run, id string, ok bool) {
	if ok && h.Claimed != nil {
		h.Claimed(run, id)
	}
}

// Instrument returns s with every call through h. The stores keep the
// optional interfaces of s's stores that the loop and the guards use
// (evidence.Loader and TextLoader, guard.ApprovingWriteLedger,
// GatingWriteLedger, RecordingWriteLedger and LeasedWriteLedger,
// runstore.LeasedClaims, react.ClaimDecider), and their identity checks
// (ConsumesFrom, RecordsTo, DecidesFor) see through the instrumentation, so
// the loop makes the same calls as over s.
func Instrument(s Stores, h *Hook) Stores {
	out := s
	l := &iLedger{in: s.Ledger, h: h}
	switch s.Ledger.(type) {
	case evidence.TextLoader:
		out.Ledger = iTextLoader{l}
	case evidence.Loader:
		out.Ledger = iLoader{l}
	default:
		out.Ledger = l
	}
	out.Approvals = &iApprovals{in: s.Approvals, h: h}
	w := &iWrites{in: s.WriteLedger, h: h}
	_, gating := s.WriteLedger.(guard.GatingWriteLedger)
	_, recording := s.WriteLedger.(guard.RecordingWriteLedger)
	if gating && recording {
		out.WriteLedger = iWritesFull{w}
	} else {
		out.WriteLedger = w
	}
	c := &iClaims{in: s.Claims, h: h}
	if _, ok := s.Claims.(react.ClaimDecider); ok {
		out.Claims = iDecidingClaims{c}
	} else {
		out.Claims = c
	}
	out.Runs = &iRuns{in: s.Runs, h: h}
	if s.Audit != nil {
		out.Audit = &iAudit{in: s.Audit, h: h}
	}
	return out
}

type iAudit struct {
	in runstore.Audit
	h  *Hook
}

// Record passes the call to the store through the hook.
func (a *iAudit) Record(ctx context.Context, d runstore.Decision) (kept runstore.Decision, ok bool, err error) {
	a.h.do("Audit.Record", func() { kept, ok, err = a.in.Record(ctx, d) })
	return kept, ok, err
}

// Decided passes the call to the store through the hook.
func (a *iAudit) Decided(ctx context.Context, run, suspension string) (d runstore.Decision, ok bool, err error) {
	a.h.do("Audit.Decided", func() { d, ok, err = a.in.Decided(ctx, run, suspension) })
	return d, ok, err
}

// History passes the call to the store through the hook.
func (a *iAudit) History(ctx context.Context, run string) (ds []runstore.Decision, err error) {
	a.h.do("Audit.History", func() { ds, err = a.in.History(ctx, run) })
	return ds, err
}

func innerAudit(a runstore.Audit) runstore.Audit {
	if w, ok := a.(*iAudit); ok {
		return w.in
	}
	return a
}

type iLedger struct {
	in evidence.Ledger
	h  *Hook
}

// Append passes the call to the store through the hook.
func (l *iLedger) Append(ctx context.Context, run string, r evidence.Record) (err error) {
	l.h.do("Evidence.Append", func() { err = l.in.Append(ctx, run, r) })
	return err
}

// Records passes the call to the store through the hook.
func (l *iLedger) Records(ctx context.Context, run string) (rs []evidence.Record, err error) {
	l.h.do("Evidence.Records", func() { rs, err = l.in.Records(ctx, run) })
	return rs, err
}

// Lookup passes the call to the store through the hook.
func (l *iLedger) Lookup(ctx context.Context, run, callID string) (r evidence.Record, ok bool, err error) {
	l.h.do("Evidence.Lookup", func() { r, ok, err = l.in.Lookup(ctx, run, callID) })
	return r, ok, err
}

// HasResult passes the call to the store through the hook.
func (l *iLedger) HasResult(ctx context.Context, run, tool string) (ok bool, err error) {
	l.h.do("Evidence.HasResult", func() { ok, err = l.in.HasResult(ctx, run, tool) })
	return ok, err
}

// HasValue passes the call to the store through the hook.
func (l *iLedger) HasValue(ctx context.Context, run, tool, field, value string) (ok bool, err error) {
	l.h.do("Evidence.HasValue", func() { ok, err = l.in.HasValue(ctx, run, tool, field, value) })
	return ok, err
}

// Executions passes the call to the store through the hook.
func (l *iLedger) Executions(ctx context.Context, run, fp string) (n int, r evidence.Record, err error) {
	l.h.do("Evidence.Executions", func() { n, r, err = l.in.Executions(ctx, run, fp) })
	return n, r, err
}

// AddUserText passes the call to the store through the hook.
func (l *iLedger) AddUserText(ctx context.Context, run, text string) (err error) {
	l.h.do("Evidence.AddUserText", func() { err = l.in.AddUserText(ctx, run, text) })
	return err
}

// UserSaid passes the call to the store through the hook.
func (l *iLedger) UserSaid(ctx context.Context, run, value string) (ok bool, err error) {
	l.h.do("Evidence.UserSaid", func() { ok, err = l.in.UserSaid(ctx, run, value) })
	return ok, err
}

type iLoader struct{ *iLedger }

// Load passes the call to the store through the hook.
func (l iLoader) Load(ctx context.Context, run string) (s evidence.Snapshot, err error) {
	l.h.do("Evidence.Load", func() { s, err = l.in.(evidence.Loader).Load(ctx, run) })
	return s, err
}

type iTextLoader struct{ *iLedger }

// Load passes the call to the store through the hook.
func (l iTextLoader) Load(ctx context.Context, run string) (s evidence.Snapshot, err error) {
	l.h.do("Evidence.Load", func() { s, err = l.in.(evidence.Loader).Load(ctx, run) })
	return s, err
}

// AddUserTextAndLoad passes the call to the store through the hook.
func (l iTextLoader) AddUserTextAndLoad(ctx context.Context, run, text string) (s evidence.Snapshot, err error) {
	l.h.do("Evidence.AddUserTextAndLoad", func() { s, err = l.in.(evidence.TextLoader).AddUserTextAndLoad(ctx, run, text) })
	return s, err
}

// innerLedger returns the store under an instrumented ledger, or an
// evidence.Cache over one.
func innerLedger(l evidence.Ledger) evidence.Ledger {
	if c, ok := l.(*evidence.Cache); ok {
		l = c.Ledger()
	}
	switch w := l.(type) {
	case *iLedger:
		return w.in
	case iLoader:
		return w.in
	case iTextLoader:
		return w.in
	}
	return l
}

type iApprovals struct {
	in guard.Approvals
	h  *Hook
}

// Gate passes the call to the store through the hook.
func (a *iApprovals) Gate(ctx context.Context, run string, c guard.GatedCall) (err error) {
	a.h.do("Approvals.Gate", func() { err = a.in.Gate(ctx, run, c) })
	return err
}

// Gated passes the call to the store through the hook.
func (a *iApprovals) Gated(ctx context.Context, run string) (c guard.GatedCall, ok bool, err error) {
	a.h.do("Approvals.Gated", func() { c, ok, err = a.in.Gated(ctx, run) })
	return c, ok, err
}

// Approve passes the call to the store through the hook.
func (a *iApprovals) Approve(ctx context.Context, run, callID, fp string) (err error) {
	a.h.do("Approvals.Approve", func() { err = a.in.Approve(ctx, run, callID, fp) })
	return err
}

// Decline passes the call to the store through the hook.
func (a *iApprovals) Decline(ctx context.Context, run, callID string) (err error) {
	a.h.do("Approvals.Decline", func() { err = a.in.Decline(ctx, run, callID) })
	return err
}

// Consume passes the call to the store through the hook.
func (a *iApprovals) Consume(ctx context.Context, run, fp string) (ok bool, err error) {
	a.h.do("Approvals.Consume", func() { ok, err = a.in.Consume(ctx, run, fp) })
	return ok, err
}

func innerApprovals(a guard.Approvals) guard.Approvals {
	if w, ok := a.(*iApprovals); ok {
		return w.in
	}
	return a
}

type iWrites struct {
	in guard.WriteLedger
	h  *Hook
}

// Begin passes the call to the store through the hook.
func (w *iWrites) Begin(ctx context.Context, key, tool string) (r guard.WriteRecord, ok bool, err error) {
	w.h.do("WriteLedger.Begin", func() { r, ok, err = w.in.Begin(ctx, key, tool) })
	return r, ok, err
}

// Finish passes the call to the store through the hook.
func (w *iWrites) Finish(ctx context.Context, rec guard.WriteRecord) (err error) {
	w.h.do("WriteLedger.Finish", func() { err = w.in.Finish(ctx, rec) })
	return err
}

// Get passes the call to the store through the hook.
func (w *iWrites) Get(ctx context.Context, key string) (r guard.WriteRecord, ok bool, err error) {
	w.h.do("WriteLedger.Get", func() { r, ok, err = w.in.Get(ctx, key) })
	return r, ok, err
}

// ConsumesFrom passes the call to the store through the hook.
func (w *iWrites) ConsumesFrom(a guard.Approvals) bool {
	al, ok := w.in.(guard.ApprovingWriteLedger)
	return ok && al.ConsumesFrom(innerApprovals(a))
}

// BeginApproved passes the call to the store through the hook.
func (w *iWrites) BeginApproved(ctx context.Context, key, tool, run, fp string) (r guard.WriteRecord, ok bool, err error) {
	w.h.do("WriteLedger.BeginApproved", func() {
		r, ok, err = w.in.(guard.ApprovingWriteLedger).BeginApproved(ctx, key, tool, run, fp)
	})
	return r, ok, err
}

// Hold is not a store call: it is passed through unseen.
func (w *iWrites) Hold(ctx context.Context, rec guard.WriteRecord) (context.Context, context.CancelFunc) {
	if lw, ok := w.in.(guard.LeasedWriteLedger); ok {
		return lw.Hold(ctx, rec)
	}
	return ctx, func() {}
}

type iWritesFull struct{ *iWrites }

// BeginApprovedOrGate passes the call to the store through the hook.
func (w iWritesFull) BeginApprovedOrGate(ctx context.Context, key, tool, run string, c guard.GatedCall) (r guard.WriteRecord, ok, gated bool, err error) {
	w.h.do("WriteLedger.BeginApprovedOrGate", func() {
		r, ok, gated, err = w.in.(guard.GatingWriteLedger).BeginApprovedOrGate(ctx, key, tool, run, c)
	})
	return r, ok, gated, err
}

// RecordsTo passes the call to the store through the hook.
func (w iWritesFull) RecordsTo(l evidence.Ledger) bool {
	return w.in.(guard.RecordingWriteLedger).RecordsTo(innerLedger(l))
}

// FinishRecorded passes the call to the store through the hook.
func (w iWritesFull) FinishRecorded(ctx context.Context, rec guard.WriteRecord, run string, r evidence.Record) (err error) {
	w.h.do("WriteLedger.FinishRecorded", func() {
		err = w.in.(guard.RecordingWriteLedger).FinishRecorded(ctx, rec, run, r)
	})
	return err
}

type iClaims struct {
	in runstore.Claims
	h  *Hook
}

// Claim passes the call to the store through the hook.
func (c *iClaims) Claim(ctx context.Context, run, id string) (ok bool, err error) {
	c.h.do("Claims.Claim", func() { ok, err = c.in.Claim(ctx, run, id) })
	c.h.claimed(run, id, ok)
	return ok, err
}

// Release passes the call to the store through the hook.
func (c *iClaims) Release(ctx context.Context, run, id string) (err error) {
	c.h.do("Claims.Release", func() { err = c.in.Release(ctx, run, id) })
	return err
}

// Settle passes the call to the store through the hook.
func (c *iClaims) Settle(ctx context.Context, run, id string) (err error) {
	c.h.do("Claims.Settle", func() { err = c.in.Settle(ctx, run, id) })
	return err
}

// Hold is not a store call: it is passed through unseen.
func (c *iClaims) Hold(ctx context.Context, run, id string) (context.Context, context.CancelFunc) {
	if lc, ok := c.in.(runstore.LeasedClaims); ok {
		return lc.Hold(ctx, run, id)
	}
	return ctx, func() {}
}

type iDecidingClaims struct{ *iClaims }

// DecidesFor passes the call to the store through the hook.
func (c iDecidingClaims) DecidesFor(a guard.Approvals, au runstore.Audit) bool {
	return c.in.(react.ClaimDecider).DecidesFor(innerApprovals(a), innerAudit(au))
}

// ClaimDecided passes the call to the store through the hook.
func (c iDecidingClaims) ClaimDecided(ctx context.Context, rec runstore.Decision) (ok bool, err error) {
	c.h.do("Claims.ClaimDecided", func() { ok, err = c.in.(react.ClaimDecider).ClaimDecided(ctx, rec) })
	c.h.claimed(rec.Run, rec.Suspension, ok)
	return ok, err
}

type iRuns struct {
	in runstore.Store
	h  *Hook
}

// Save passes the call to the store through the hook.
func (r *iRuns) Save(ctx context.Context, run runstore.Run) (err error) {
	r.h.do("Runs.Save", func() { err = r.in.Save(ctx, run) })
	return err
}

// Get passes the call to the store through the hook.
func (r *iRuns) Get(ctx context.Context, id string) (run runstore.Run, ok bool, err error) {
	r.h.do("Runs.Get", func() { run, ok, err = r.in.Get(ctx, id) })
	return run, ok, err
}

// List passes the call to the store through the hook.
func (r *iRuns) List(ctx context.Context, f runstore.Filter) (p runstore.Page, err error) {
	r.h.do("Runs.List", func() { p, err = r.in.List(ctx, f) })
	return p, err
}

// Delete passes the call to the store through the hook.
func (r *iRuns) Delete(ctx context.Context, id string) (err error) {
	r.h.do("Runs.Delete", func() { err = r.in.Delete(ctx, id) })
	return err
}

// Expire passes the call to the store through the hook.
func (r *iRuns) Expire(ctx context.Context, before time.Time) (n int, err error) {
	r.h.do("Runs.Expire", func() { n, err = r.in.Expire(ctx, before) })
	return n, err
}
