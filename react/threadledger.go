package react

import (
	"context"

	"github.com/reactguard/reactguard/evidence"
)

// threadScope names, in the context of a run's calls, the run and the
// thread whose earlier turns' evidence its lookups may also read.
type threadScope struct {
	run, thread string
	ledger      evidence.Ledger // the thread store's evidence, keyed by thread id
}

type threadScopeKey struct{}

func withThreadScope(ctx context.Context, s *threadScope) context.Context {
	return context.WithValue(ctx, threadScopeKey{}, s)
}

// scopeOf returns the thread scope of run in ctx; nil outside a thread.
func scopeOf(ctx context.Context, run string) *threadScope {
	s, _ := ctx.Value(threadScopeKey{}).(*threadScope)
	if s == nil || s.run != run {
		return nil
	}
	return s
}

// layered is the evidence the guards and the built-in tools of a loop with
// a thread store read: a run's own evidence, and, for a run in a thread,
// the thread's evidence of its earlier turns when the run's own does not
// hold what is looked up. So a value the user gave, or a tool returned, in
// an earlier message is still a source: the parameter contract accepts it
// from the user (UserSaid), a result of tool X (HasResult, HasValue), or
// refuses it as coming from a tool result (HasValue with no tool); an
// output may name an earlier result (Lookup of a marked call id). Writes,
// Records and Executions are the run's own: the fingerprint guard counts
// a run's repeats, not the thread's, and the write ledger keys writes by
// run, so a write approved in an earlier message is never approved or
// reused for this one. Each lookup costs at most one more lookup of the
// thread's ledger, itself O(1) in the evidence it holds.
type layered struct{ evidence.Ledger }

// Lookup is the run's record of callID, else the thread's.
func (l *layered) Lookup(ctx context.Context, run, callID string) (evidence.Record, bool, error) {
	rec, ok, err := l.Ledger.Lookup(ctx, run, callID)
	if err != nil || ok {
		return rec, ok, err
	}
	if s := scopeOf(ctx, run); s != nil {
		return s.ledger.Lookup(ctx, s.thread, callID)
	}
	return rec, ok, nil
}

// HasResult reports a result of tool in the run, else in the thread.
func (l *layered) HasResult(ctx context.Context, run, tool string) (bool, error) {
	ok, err := l.Ledger.HasResult(ctx, run, tool)
	if err != nil || ok {
		return ok, err
	}
	if s := scopeOf(ctx, run); s != nil {
		return s.ledger.HasResult(ctx, s.thread, tool)
	}
	return false, nil
}

// HasValue reports value in a result of the run, else of the thread.
func (l *layered) HasValue(ctx context.Context, run, tool, field, value string) (bool, error) {
	ok, err := l.Ledger.HasValue(ctx, run, tool, field, value)
	if err != nil || ok {
		return ok, err
	}
	if s := scopeOf(ctx, run); s != nil {
		return s.ledger.HasValue(ctx, s.thread, tool, field, value)
	}
	return false, nil
}

// UserSaid reports value in the user's words of the run, else of the thread.
func (l *layered) UserSaid(ctx context.Context, run, value string) (bool, error) {
	ok, err := l.Ledger.UserSaid(ctx, run, value)
	if err != nil || ok {
		return ok, err
	}
	if s := scopeOf(ctx, run); s != nil {
		return s.ledger.UserSaid(ctx, s.thread, value)
	}
	return false, nil
}
