package runstore

import (
	"context"
	"crypto/sha256"
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
// resumes it, and the few columns an inbox selects runs by. Nothing a
// person decides on is kept outside the snapshot: the pending call, its
// arguments, the question are read from the sealed snapshot (react's
// Loop.Pending), never from a column anyone with access to the database
// could edit. A store treats every field but ID, Owner, Kind and Stopped
// as opaque.
type Run struct {
	// ID is the run's id. Required; a run has one record.
	ID string
	// Owner is who the run belongs to (see [Owner]). It selects runs in
	// [Filter]; the loop checks the owner sealed in the snapshot, not this
	// copy, before it shows or resumes the run.
	Owner Owner
	// Node is the name of the run's node.
	Node string
	// Kind is what the run waits for. Required.
	Kind Kind
	// Snapshot is the run's sealed snapshot. Required in [Store.Save] and
	// returned by [Store.Get], and by [Store.List] when [Filter].Snapshots
	// is set.
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
	// and filter returned.
	ErrInvalidCursor = errors.New("runstore: invalid cursor")
	// ErrInvalidFilter: a [Filter] time outside [MinTime, MaxTime].
	ErrInvalidFilter = errors.New("runstore: invalid filter")
)

// MinTime and MaxTime bound the times a [Filter] or a cursor may hold: the
// years 1 to 9999 in UTC, which every store can compare. A time outside is
// refused with [ErrInvalidFilter] (or [ErrInvalidCursor] in a cursor),
// never passed to a database that would fail on it.
var (
	MinTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

func inRange(t time.Time) bool { return !t.Before(MinTime) && !t.After(MaxTime) }

// Check reports whether f can be listed: its times, when set, are within
// [MinTime, MaxTime] (the error wraps [ErrInvalidFilter]), and its cursor,
// when set, is one of its own pages' (see [Filter.After]). Stores call it
// at the start of [Store.List].
func (f Filter) Check() error {
	for _, b := range [...]struct {
		name string
		t    time.Time
	}{{"StoppedBefore", f.StoppedBefore}, {"StoppedAfter", f.StoppedAfter}} {
		if !b.t.IsZero() && !inRange(b.t) {
			return fmt.Errorf("%w: %s %s is outside the years 1 to 9999", ErrInvalidFilter, b.name, b.t.Format(time.RFC3339))
		}
	}
	_, _, err := f.After()
	return err
}

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
	if err := r.Owner.Check(); err != nil {
		return fmt.Errorf("%w %q: %w", ErrInvalidRun, r.ID, err)
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
	// Owner, when set, selects the runs it covers ([Owner.Covers]): the
	// runs of its tenant, and of its user when User is set. Nil selects
	// every owner's runs (an operator's view); an inbox always sets it.
	Owner *Owner
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
	// ([Page].Next) of the same filter; "" starts at the oldest run. A
	// cursor is bound to the filter that produced it (every field but
	// Limit, Cursor and Snapshots): with another filter it is refused with
	// [ErrInvalidCursor], so a cursor never continues another owner's
	// listing.
	Cursor string
	// Snapshots asks List to return each run's snapshot too, so that an
	// inbox can open every listed run's sealed state without a Get each.
	Snapshots bool
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
	// with their snapshots only when [Filter].Snapshots is set.
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
	// cursor that no page of this filter returned (another filter's, a
	// forged one) returns [ErrInvalidCursor] (see [Filter].Cursor); a
	// cursor of another store may return it or an arbitrary page of this
	// filter.
	List(ctx context.Context, f Filter) (Page, error)
	// Delete removes the record of run id; deleting a missing run is a
	// no-op.
	Delete(ctx context.Context, id string) error
	// Expire deletes every run that stopped before the given time (to the
	// microsecond) and returns how many it deleted.
	Expire(ctx context.Context, before time.Time) (int, error)
}

// Cursor is the position after which a listing continues: the stop time and
// id of the last run of a page, and the filter it belongs to. Stores encode
// it with [Filter.Next] and read it back with [Filter.After], so that
// cursors look the same in every implementation.
type Cursor struct {
	Stopped time.Time
	ID      string
}

type wireCursor struct {
	T int64  `json:"t"` // Unix microseconds
	I string `json:"i"`
	F string `json:"f"` // the filter's binding
}

// binding is the digest of what f selects by (not Limit, Cursor,
// Snapshots): a cursor carries it, so that it continues only a listing of
// the same filter.
func (f Filter) binding() string {
	h := sha256.New()
	var owner string
	if f.Owner != nil {
		owner = "o\x00" + f.Owner.Tenant + "\x00" + f.Owner.User
	}
	_, _ = fmt.Fprintf(h, "%d\x00%q\x00%q\x00%d\x00%d", f.Kind, f.Node, owner, unixMicro(f.StoppedBefore), unixMicro(f.StoppedAfter))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// unixMicro is t in Unix microseconds, 0 for the zero time.
func unixMicro(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// Next returns the cursor of f's page that ends with last.
func (f Filter) Next(last Run) string {
	b, _ := json.Marshal(wireCursor{T: last.Stopped.UnixMicro(), I: last.ID, F: f.binding()}) // cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// After returns the position f.Cursor continues after, and false when
// f.Cursor is "". A cursor that no page of f returned (another filter's,
// or text that is not a cursor) returns an error wrapping
// [ErrInvalidCursor].
func (f Filter) After() (Cursor, bool, error) {
	if f.Cursor == "" {
		return Cursor{}, false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(f.Cursor))
	if err != nil {
		return Cursor{}, false, fmt.Errorf("%w: %w", ErrInvalidCursor, err)
	}
	var w wireCursor
	if err := json.Unmarshal(b, &w); err != nil || w.I == "" {
		return Cursor{}, false, fmt.Errorf("%w: %q", ErrInvalidCursor, f.Cursor)
	}
	if c := time.UnixMicro(w.T).UTC(); !inRange(c) {
		return Cursor{}, false, fmt.Errorf("%w: its time is outside the years 1 to 9999", ErrInvalidCursor)
	}
	if w.F != f.binding() {
		return Cursor{}, false, fmt.Errorf("%w: the cursor belongs to another filter", ErrInvalidCursor)
	}
	return Cursor{Stopped: time.UnixMicro(w.T).UTC(), ID: w.I}, true, nil
}

// After reports whether a run with stop time t and id id comes after the
// cursor in listing order.
func (c Cursor) After(t time.Time, id string) bool {
	t, ct := t.UTC().Truncate(time.Microsecond), c.Stopped.UTC().Truncate(time.Microsecond)
	return t.After(ct) || (t.Equal(ct) && id > c.ID)
}

// Selects reports whether f selects r by owner, kind, node and stop time
// (not by cursor). Stores that filter in memory use it.
func (f Filter) Selects(r Run) bool {
	switch {
	case f.Owner != nil && !f.Owner.Covers(r.Owner),
		f.Kind != 0 && r.Kind != f.Kind,
		f.Node != "" && r.Node != f.Node,
		!f.StoppedBefore.IsZero() && !r.Stopped.Before(f.StoppedBefore.UTC().Truncate(time.Microsecond)),
		!f.StoppedAfter.IsZero() && r.Stopped.Before(f.StoppedAfter.UTC().Truncate(time.Microsecond)):
		return false
	}
	return true
}
