package runstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind says what a stopped run waits for. The zero value is invalid in a
// [Run] and means "any kind" in a [Filter].
type Kind uint8

// The kinds of stopped runs.
const (
	// Approval: the user must approve or decline one exact write call.
	Approval Kind = 1
	// FollowUp: the user must answer a question.
	FollowUp Kind = 2
	// Interrupted: the run stopped on an error (cancelled, the model or a
	// store failed) and goes on with a Continue once the cause is gone.
	Interrupted Kind = 3

	minKind = Approval
	maxKind = Interrupted
)

// IsValid reports whether k is one of the kinds.
func (k Kind) IsValid() bool { return k >= minKind && k <= maxKind }

// String returns approval, follow_up or interrupted, or "kind(n)".
func (k Kind) String() string {
	switch k {
	case Approval:
		return "approval"
	case FollowUp:
		return "follow_up"
	case Interrupted:
		return "interrupted"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind returns the kind with the given text form.
func ParseKind(s string) (Kind, error) {
	for k := minKind; k <= maxKind; k++ {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("runstore: unknown kind %q (want approval, follow_up or interrupted)", s)
}

// MarshalText implements [encoding.TextMarshaler]; an invalid kind is an
// error.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.IsValid() {
		return nil, fmt.Errorf("runstore: cannot marshal invalid kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseKind]; on
// error k is unchanged.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Run is a stopped run as a [Store] keeps it: the sealed snapshot that
// resumes it, and what an approvals inbox shows without opening it. A store
// treats every field but ID, Kind and Stopped as opaque.
type Run struct {
	// ID is the run's id. Required; a run has one record.
	ID string
	// Node is the name of the run's node.
	Node string
	// Kind is what the run waits for. Required.
	Kind Kind
	// Tool and Args are the write call waiting for approval (Approval
	// only); Args are the arguments as the model sent them, JSON or not.
	Tool string
	Args []byte
	// Reason is why the model asks for approval, in its words (Approval
	// only; may be empty).
	Reason string
	// Question is what the model asks the user (FollowUp only).
	Question string
	// Snapshot is the run's sealed snapshot. Required in [Store.Save] and
	// returned by [Store.Get]; [Store.List] leaves it nil.
	Snapshot []byte
	// Stopped is when the run stopped. Required; stores keep it to the
	// microsecond, in UTC.
	Stopped time.Time
}

// Errors of [Store.Save] for runs it refuses.
var (
	// ErrInvalidRun: the run has no id, no valid kind, no snapshot or no
	// stop time.
	ErrInvalidRun = errors.New("runstore: invalid run")
	// ErrInvalidCursor: a [Filter] cursor that no [Page] of this store
	// returned.
	ErrInvalidCursor = errors.New("runstore: invalid cursor")
)

// Check reports whether r may be saved; the error wraps [ErrInvalidRun] and
// names the missing field. Implementations of [Store] use it to refuse runs
// the same way.
func Check(r Run) error {
	switch {
	case r.ID == "":
		return fmt.Errorf("%w: no id", ErrInvalidRun)
	case !r.Kind.IsValid():
		return fmt.Errorf("%w %q: kind %d", ErrInvalidRun, r.ID, uint8(r.Kind))
	case len(r.Snapshot) == 0:
		return fmt.Errorf("%w %q: no snapshot", ErrInvalidRun, r.ID)
	case r.Stopped.IsZero():
		return fmt.Errorf("%w %q: no stop time", ErrInvalidRun, r.ID)
	}
	return nil
}

// DefaultLimit is the page size of a [Filter] whose Limit is 0; MaxLimit
// bounds any Limit.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Filter selects the runs [Store.List] returns. The zero value selects every
// run, DefaultLimit at a time. Times are compared to the microsecond, the
// precision stores keep.
type Filter struct {
	// Kind selects runs waiting for one kind of decision; 0 means any.
	Kind Kind
	// Node selects the runs of one node; "" means any.
	Node string
	// StoppedBefore selects runs that stopped before it (older runs); the
	// zero time means no bound.
	StoppedBefore time.Time
	// StoppedAfter selects runs that stopped at or after it; the zero time
	// means no bound.
	StoppedAfter time.Time
	// Limit is the page size: 0 means DefaultLimit; it is capped at
	// MaxLimit.
	Limit int
	// Cursor continues a listing after the last run of a page
	// ([Page].Next); "" starts at the oldest run.
	Cursor string
}

// PageSize returns the number of runs a page of f holds at most.
func (f Filter) PageSize() int {
	switch {
	case f.Limit <= 0:
		return DefaultLimit
	case f.Limit > MaxLimit:
		return MaxLimit
	}
	return f.Limit
}

// Page is one page of [Store.List].
type Page struct {
	// Runs are the runs of the page, oldest first (by Stopped, then ID),
	// without their snapshots.
	Runs []Run
	// Next is the cursor of the next page; "" when this is the last one.
	Next string
}

// Store keeps the latest snapshot of each stopped run. Implementations must
// be safe for concurrent use. Run the conformance tests of package
// runstoretest against an implementation.
type Store interface {
	// Save stores r as the run's record, replacing any earlier one. It
	// refuses a run that [Check] refuses. The store keeps its own copy of
	// the byte slices.
	Save(ctx context.Context, r Run) error
	// Get returns the record of run id, snapshot included.
	Get(ctx context.Context, id string) (Run, bool, error)
	// List returns the runs f selects, oldest first, a page at a time. A
	// cursor from another store or another filter may return
	// [ErrInvalidCursor] or an arbitrary page; it never fails otherwise.
	List(ctx context.Context, f Filter) (Page, error)
	// Delete removes the record of run id; deleting a missing run is a
	// no-op.
	Delete(ctx context.Context, id string) error
	// Expire deletes every run that stopped before the given time (to the
	// microsecond) and returns how many it deleted.
	Expire(ctx context.Context, before time.Time) (int, error)
}

// Cursor is the position after which a listing continues: the stop time and
// id of the last run of a page. Stores encode it with [Cursor.String] and
// read it back with [ParseCursor], so that cursors look the same in every
// implementation.
type Cursor struct {
	Stopped time.Time
	ID      string
}

type wireCursor struct {
	T int64  `json:"t"` // Unix microseconds
	I string `json:"i"`
}

// String returns the cursor's opaque text form.
func (c Cursor) String() string {
	b, _ := json.Marshal(wireCursor{T: c.Stopped.UnixMicro(), I: c.ID}) // cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor reads a cursor written by [Cursor.String]; any other text
// returns an error wrapping [ErrInvalidCursor].
func ParseCursor(s string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: %w", ErrInvalidCursor, err)
	}
	var w wireCursor
	if err := json.Unmarshal(b, &w); err != nil || w.I == "" {
		return Cursor{}, fmt.Errorf("%w: %q", ErrInvalidCursor, s)
	}
	return Cursor{Stopped: time.UnixMicro(w.T).UTC(), ID: w.I}, nil
}

// After reports whether a run with stop time t and id id comes after the
// cursor in listing order.
func (c Cursor) After(t time.Time, id string) bool {
	t, ct := t.UTC().Truncate(time.Microsecond), c.Stopped.UTC().Truncate(time.Microsecond)
	return t.After(ct) || (t.Equal(ct) && id > c.ID)
}
