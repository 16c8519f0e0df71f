package runstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// DecisionKind is what a person decided. The zero value is invalid.
type DecisionKind uint8

// The decision kinds.
const (
	// Approved: the person approved the gated write.
	Approved DecisionKind = 1
	// Declined: the person declined the gated write.
	Declined DecisionKind = 2
	// Answered: the person answered a follow-up question.
	Answered DecisionKind = 3

	minDecision = Approved
	maxDecision = Answered
)

// IsValid reports whether k is one of the kinds.
func (k DecisionKind) IsValid() bool { return k >= minDecision && k <= maxDecision }

// String returns approved, declined or answered, or "decision(n)".
func (k DecisionKind) String() string {
	switch k {
	case Approved:
		return "approved"
	case Declined:
		return "declined"
	case Answered:
		return "answered"
	}
	return "decision(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText implements [encoding.TextMarshaler]; an invalid kind is an
// error.
func (k DecisionKind) MarshalText() ([]byte, error) {
	if !k.IsValid() {
		return nil, fmt.Errorf("runstore: cannot marshal invalid decision kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and k is unchanged.
func (k *DecisionKind) UnmarshalText(b []byte) error {
	for v := minDecision; v <= maxDecision; v++ {
		if v.String() == string(b) {
			*k = v
			return nil
		}
	}
	return fmt.Errorf("runstore: unknown decision kind %q (want approved, declined or answered)", b)
}

// Decision is one person's decision on one suspension of a run, as the
// audit record keeps it. The loop (package react) fills it from the run's
// sealed snapshot and the host's [react.Decision], never from what a
// client sent, so the record says what the person was shown.
type Decision struct {
	// Run is the run's id.
	Run string `json:"run"`
	// Suspension is the id of the suspension the decision answers (the id
	// of the snapshot that recorded it).
	Suspension string `json:"suspension"`
	// Kind is what was decided.
	Kind DecisionKind `json:"kind"`
	// CallID is the call the decision answers: the gated write (approved,
	// declined) or the follow-up call (answered).
	CallID string `json:"call_id"`
	// Tool and Fingerprint are the gated write's tool and fingerprint
	// (approved, declined; "" for an answer).
	Tool        string `json:"tool,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// Owner is the run's owner.
	Owner Owner `json:"owner"`
	// By is who decided, as the host identified them; "" when the host did
	// not say.
	By string `json:"by,omitempty"`
	// At is when the decision was recorded; stores keep it to the
	// microsecond, in UTC.
	At time.Time `json:"at"`
	// Reason is the reason given with a decline, or the answer's text.
	Reason string `json:"reason,omitempty"`
}

// ErrDecidedOtherwise is wrapped by the error of a store that records a
// decision together with other work (react's ClaimDecider) when the audit
// already holds a decision of another kind on the same suspension: nothing
// was recorded or done.
var ErrDecidedOtherwise = errors.New("runstore: another decision was recorded on the suspension")

// ErrInvalidDecision is wrapped by the error of [CheckDecision].
var ErrInvalidDecision = errors.New("runstore: invalid decision")

// CheckDecision reports whether d may be recorded; the error wraps
// [ErrInvalidDecision] and names the missing field. Implementations of
// [Audit] use it to refuse decisions the same way.
func CheckDecision(d Decision) error {
	switch {
	case d.Run == "":
		return fmt.Errorf("%w: no run", ErrInvalidDecision)
	case d.Suspension == "":
		return fmt.Errorf("%w of run %q: no suspension", ErrInvalidDecision, d.Run)
	case !d.Kind.IsValid():
		return fmt.Errorf("%w of run %q: kind %d", ErrInvalidDecision, d.Run, uint8(d.Kind))
	case d.At.IsZero():
		return fmt.Errorf("%w of run %q: no time", ErrInvalidDecision, d.Run)
	}
	return d.Owner.Check()
}

// Audit is the append-only record of the decisions people made on
// suspended runs: who approved, declined or answered what, when. The loop
// records a decision before it applies it, so no decision takes effect
// without its record, and reads it back to answer a decision delivered
// twice. Records are never changed or removed by the loop; a host that
// must delete them (retention, erasure requests) does so in the database.
// Implementations must be safe for concurrent use, across processes where
// they are shared, and Record must be atomic. Run the conformance tests of
// package runstoretest against an implementation.
type Audit interface {
	// Record appends d, unless a decision on the same run and suspension
	// was recorded before: it returns the decision recorded for that
	// suspension (d, or the earlier one unchanged) and whether it appended
	// d. Of any number of concurrent Records of one suspension, exactly one
	// appends. It refuses a decision that [CheckDecision] refuses.
	Record(ctx context.Context, d Decision) (Decision, bool, error)
	// Decided returns the decision recorded on the run's suspension.
	Decided(ctx context.Context, run, suspension string) (Decision, bool, error)
	// History returns the decisions recorded on run, oldest first.
	History(ctx context.Context, run string) ([]Decision, error)
}

// MemoryAudit is the in-memory [Audit]. It is safe for concurrent use; its
// zero value is not usable, build it with [NewMemoryAudit]. Records live
// as long as the process (a few hundred bytes a decision) and are never
// pruned: a service that must keep them uses a durable store.
type MemoryAudit struct {
	mu   sync.Mutex
	runs map[string][]Decision
}

// NewMemoryAudit returns an empty in-memory audit.
func NewMemoryAudit() *MemoryAudit { return &MemoryAudit{runs: make(map[string][]Decision)} }

var _ Audit = (*MemoryAudit)(nil)

// Record implements [Audit.Record].
func (m *MemoryAudit) Record(_ context.Context, d Decision) (Decision, bool, error) {
	if err := CheckDecision(d); err != nil {
		return Decision{}, false, err
	}
	d.At = micro(d.At)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.runs[d.Run] {
		if e.Suspension == d.Suspension {
			return e, false, nil
		}
	}
	m.runs[d.Run] = append(m.runs[d.Run], d)
	return d, true, nil
}

// Decided implements [Audit.Decided].
func (m *MemoryAudit) Decided(_ context.Context, run, suspension string) (Decision, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.runs[run] {
		if e.Suspension == suspension {
			return e, true, nil
		}
	}
	return Decision{}, false, nil
}

// History implements [Audit.History]. The returned slice is a copy.
func (m *MemoryAudit) History(_ context.Context, run string) ([]Decision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.runs[run]), nil
}
