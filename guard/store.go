package guard

import (
	"context"
	"encoding/json"

	"github.com/reactguard/reactguard/errcode"
)

// GatedCall is a write call the write gate deferred for approval.
type GatedCall struct {
	CallID      string          `json:"call_id"`
	Tool        string          `json:"tool"`
	Args        json.RawMessage `json:"args"`
	Fingerprint string          `json:"fingerprint"`
	Round       int             `json:"round"`
}

// Approvals holds, per run, the write call waiting for approval and the
// approvals granted. An approval binds to one exact call (its fingerprint)
// and is consumed by one execution. Implementations must be safe for
// concurrent use.
type Approvals interface {
	// Gate records c as the call waiting for approval in run, replacing any
	// earlier one.
	Gate(ctx context.Context, run string, c GatedCall) error
	// Gated returns the call waiting for approval in run.
	Gated(ctx context.Context, run string) (GatedCall, bool, error)
	// Approve grants one execution of the call with fingerprint and clears
	// the waiting call.
	Approve(ctx context.Context, run, fingerprint string) error
	// Decline clears the waiting call without granting anything.
	Decline(ctx context.Context, run string) error
	// Consume reports whether an approval for fingerprint exists and removes
	// it, atomically.
	Consume(ctx context.Context, run, fingerprint string) (bool, error)
}

// WriteState is the state of a write in the [WriteLedger].
type WriteState uint8

// The write states.
const (
	WriteNone      WriteState = 0 // never started, or released to run again
	WriteRunning   WriteState = 1 // executing now
	WriteSucceeded WriteState = 2 // succeeded; the result is reused
	WriteFailed    WriteState = 3 // failed definitively; it did not take effect
	WriteUncertain WriteState = 4 // outcome unknown (timeout, dropped connection); verify before running again
)

// WriteRecord is the ledger's entry for one idempotency key.
type WriteRecord struct {
	Key    string          `json:"key"`
	Tool   string          `json:"tool"`
	State  WriteState      `json:"state"`
	Result json.RawMessage `json:"result,omitempty"`
	Code   errcode.Code    `json:"code,omitempty"`
}

// WriteLedger records writes by idempotency key so that a write executes at
// most once across retries, resumes and replicas. Implementations must be
// safe for concurrent use; Begin must be atomic.
type WriteLedger interface {
	// Begin claims key for execution: when the key has no record, or a
	// record in WriteNone or WriteFailed, it stores WriteRunning and returns
	// (that record, true). Otherwise it returns the current record and
	// false.
	Begin(ctx context.Context, key, tool string) (WriteRecord, bool, error)
	// Finish stores the final record of key (WriteSucceeded, WriteFailed,
	// WriteUncertain), or WriteNone to release a claim that did not execute.
	Finish(ctx context.Context, rec WriteRecord) error
	// Get returns the record of key.
	Get(ctx context.Context, key string) (WriteRecord, bool, error)
}
