package threadstore

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/runstore"
)

// MaxID bounds the length in bytes of a thread id; a run id has the same
// bound (react.MaxRunID).
const MaxID = 256

// Thread is a conversation as a [Store] keeps it: who it belongs to, how
// many turns it holds, which run holds it now, and the host's summary of
// its earlier turns. A turn is one user message and everything the run
// that answered it did (see [Turn]).
type Thread struct {
	// ID is the thread's id, chosen by the host.
	ID string
	// Owner is who the thread belongs to; set when the thread is created
	// (by its first [Store.Acquire]) and never changed.
	Owner runstore.Owner
	// Turns is the number of turns committed; the next turn's Index is
	// Turns+1.
	Turns int
	// Run is the run that holds the thread: the one answering its latest
	// message, running or stopped (suspended, interrupted) and waiting to
	// be resumed. "" when the thread is free.
	Run string
	// Held reports that a lease is taken on the thread: the driver of Run
	// (a Run or Resume call) is running it, or died while it did. False
	// with Run set: the run stopped and waits (parked).
	Held bool
	// Summary is the host's summary of the turns up to Summarized, as the
	// loop sealed it; nil when there is none. Opaque to the store.
	Summary []byte
	// Summarized is the number of turns Summary covers (turns 1 to
	// Summarized); 0 without a summary.
	Summarized int
	// Created and Updated are when the thread was created and last
	// changed, to the microsecond, in UTC.
	Created, Updated time.Time
}

// Turn is one committed turn of a thread: the sealed content the loop
// wrote when the run that answered the message ended (the messages, the
// user's words, the answer), with what a history policy selects by.
type Turn struct {
	// Index is the turn's position in its thread, from 1.
	Index int
	// Run is the id of the run that answered the turn's message.
	Run string
	// Tokens is what the turn costs in a prompt: counted from the
	// provider's reported usage where it reported one, else estimated
	// (see react.HistoryPolicy). At least 0.
	Tokens int
	// Content is the turn as the loop sealed it. Required; opaque to the
	// store, which keeps its own copy.
	Content []byte
	// At is when the turn was committed, to the microsecond, in UTC.
	At time.Time
}

// Summary is the host's summary of a thread's earlier turns, as the loop
// sealed it, and how many turns it covers.
type Summary struct {
	// Content is the sealed summary; opaque to the store.
	Content []byte
	// Through is the number of turns it covers (turns 1 to Through).
	Through int
}

// Errors of a [Store]. Each is wrapped: test with [errors.Is].
var (
	// ErrInvalid: an id, run id, owner or turn that no store can keep
	// (empty or too long ids, text that is not valid UTF-8, a turn
	// without content or with negative tokens).
	ErrInvalid = errors.New("threadstore: invalid argument")
	// ErrBusy: another run holds the thread, running (a live lease) or
	// stopped and waiting for a decision. [Store.Acquire] returns it with
	// the thread as it found it, so the caller can say which run.
	ErrBusy = errors.New("threadstore: the thread is held by another run")
	// ErrNotOwner: the thread belongs to another owner. Nothing about it
	// is returned.
	ErrNotOwner = errors.New("threadstore: the thread belongs to another owner")
	// ErrLeaseLost: the lease token does not hold the thread (any more):
	// it was released, committed, parked, or the thread was deleted.
	ErrLeaseLost = errors.New("threadstore: the lease does not hold the thread")
	// ErrTurn: a committed turn's index is not the thread's next one.
	ErrTurn = errors.New("threadstore: the turn is not the thread's next one")
)

// Store keeps threads: their owners, their turns, which run holds each,
// the host's summary, and the evidence of their earlier turns. It is how
// two messages to one thread are kept apart: a run takes the thread with
// [Store.Acquire] (a lease), and every other run is refused with
// [ErrBusy] until the run ended ([Store.Commit]) or the lease was given
// up ([Store.Release]); a run that stops to wait for a person keeps the
// thread ([Store.Park]) and alone may take it again, when it is resumed.
// Implementations must be safe for concurrent use, across processes where
// they are shared, with the database's own atomicity: of any number of
// concurrent Acquires of one free thread, exactly one succeeds. Run the
// conformance tests of package threadstoretest against an implementation.
type Store interface {
	// Acquire takes thread id for run and returns the thread as it is now
	// held, and the lease token that Park, Commit and Release need. It
	// creates the thread, owned by owner, when it does not exist. It
	// takes a free thread; a thread parked on run (run is being resumed);
	// and a thread held by run whose driver the store can prove dead (its
	// process ended; stores that cannot tell never take a lease over). It
	// refuses a thread of another owner (owners must be equal) with
	// [ErrNotOwner], and a thread that another run holds, or that run
	// holds under a live lease, with [ErrBusy] and the thread as found.
	Acquire(ctx context.Context, id string, owner runstore.Owner, run string) (Thread, string, error)
	// Park gives up the lease token on thread id and leaves the thread
	// with its run, which stopped to wait (suspended or interrupted): no
	// other run may take it until the run is resumed (Acquire by the same
	// run), ends, or is released. [ErrLeaseLost] when token does not hold
	// the thread.
	Park(ctx context.Context, id, token string) error
	// Commit appends turn t to thread id and frees the thread, atomically,
	// when token holds it; t.Index must be the thread's Turns+1
	// ([ErrTurn]). A non-nil s replaces the thread's summary. The store
	// keeps its own copies of the byte slices and sets t.At itself.
	// [ErrLeaseLost] when token does not hold the thread.
	Commit(ctx context.Context, id, token string, t Turn, s *Summary) error
	// Release frees thread id from run without a turn: with a token, when
	// that lease holds it ([ErrLeaseLost] otherwise); without one (""),
	// when run holds it parked or under a lease whose driver the store can
	// prove dead ([ErrBusy] under a live lease). Releasing a thread that
	// run does not hold, or that does not exist, is a no-op.
	Release(ctx context.Context, id, run, token string) error
	// Get returns thread id.
	Get(ctx context.Context, id string) (Thread, bool, error)
	// Turns returns the turns of thread id whose Index is in [from, to),
	// in order; from below 1 means 1. Nothing for a missing thread.
	Turns(ctx context.Context, id string, from, to int) ([]Turn, error)
	// Delete removes thread id, its turns and its evidence; deleting a
	// missing thread is a no-op. A run holding the thread then finds its
	// lease lost.
	Delete(ctx context.Context, id string) error
	// Evidence returns the ledger that keeps the evidence of the threads'
	// committed turns, keyed by thread id: the loop appends there what a
	// run that ended in a thread knew (its records under marked call ids,
	// the user's words), and its guards look there when a run's own
	// evidence does not hold a value. Delete removes a thread's.
	Evidence() evidence.Ledger
}

// CheckID reports whether id can be a thread id: not empty, valid UTF-8,
// at most [MaxID] bytes. The error wraps [ErrInvalid].
func CheckID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty thread id", ErrInvalid)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: thread id %q is not valid UTF-8", ErrInvalid, id)
	case len(id) > MaxID:
		return fmt.Errorf("%w: thread id has %d bytes; at most %d", ErrInvalid, len(id), MaxID)
	}
	return nil
}

// CheckAcquire reports whether Acquire may be asked for id, owner and run;
// the error wraps [ErrInvalid]. Implementations call it first.
func CheckAcquire(id string, owner runstore.Owner, run string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if err := owner.Check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	switch {
	case run == "":
		return fmt.Errorf("%w: empty run id", ErrInvalid)
	case !utf8.ValidString(run) || len(run) > MaxID:
		return fmt.Errorf("%w: run id is not valid UTF-8 or longer than %d bytes", ErrInvalid, MaxID)
	}
	return nil
}

// CheckTurn reports whether t can be committed: an Index from 1, Tokens
// not negative, Content not empty, a Run id. The error wraps [ErrInvalid].
func CheckTurn(t Turn, s *Summary) error {
	switch {
	case t.Index < 1:
		return fmt.Errorf("%w: turn index %d", ErrInvalid, t.Index)
	case t.Tokens < 0:
		return fmt.Errorf("%w: turn %d has negative tokens", ErrInvalid, t.Index)
	case len(t.Content) == 0:
		return fmt.Errorf("%w: turn %d has no content", ErrInvalid, t.Index)
	case t.Run == "" || !utf8.ValidString(t.Run) || len(t.Run) > MaxID:
		return fmt.Errorf("%w: turn %d has no valid run id", ErrInvalid, t.Index)
	case s != nil && (s.Through < 0 || s.Through > t.Index || (len(s.Content) == 0) != (s.Through == 0)):
		return fmt.Errorf("%w: a summary through turn %d with %d bytes, committed with turn %d", ErrInvalid, s.Through, len(s.Content), t.Index)
	}
	return nil
}

// Micro returns t in UTC truncated to the microsecond, the precision of
// every time a store keeps.
func Micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
