package evidence

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/internal/jsonvalid"
	"github.com/reactguard/reactguard/outcome"
)

// Record is one executed attempt of a tool call: only SUCCESS and FAILED
// observations are recorded (calls stopped before execution never are).
// Records are values; a ledger owns the Payload bytes it stores and callers
// must not modify the Payload of a record a ledger returned.
type Record struct {
	// CallID is the model's tool-call id. Required.
	CallID string `json:"call_id"`
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Fingerprint is the canonical fingerprint of tool and arguments; empty
	// means the record is not counted by [Ledger.Executions].
	Fingerprint string `json:"fingerprint,omitempty"`
	// Outcome is SUCCESS or FAILED.
	Outcome outcome.Outcome `json:"outcome"`
	// Code is the error code of a FAILED attempt; 0 for SUCCESS.
	Code errcode.Code `json:"code,omitempty"`
	// Payload is the JSON of the result (SUCCESS) or response body (FAILED),
	// or nil. It must be valid JSON when not empty.
	Payload json.RawMessage `json:"payload,omitempty"`
	// PayloadRef refers to the full payload where it is stored elsewhere
	// (Payload then holds a reduced copy or nothing).
	PayloadRef string `json:"payload_ref,omitempty"`
	// Attempt numbers executions of the call, from 1.
	Attempt int `json:"attempt"`
	// Round is the loop round.
	Round int `json:"round"`
}

// Errors returned by [Ledger.Append] (wrapped; test with [errors.Is]).
var (
	// ErrNotExecuted: the record's outcome is neither SUCCESS nor FAILED.
	ErrNotExecuted = errors.New("evidence: only SUCCESS and FAILED attempts are recorded")
	// ErrNoCallID: the record has no call id.
	ErrNoCallID = errors.New("evidence: a record needs a call id")
	// ErrInvalidPayload: the record's payload is not empty and not valid
	// JSON.
	ErrInvalidPayload = errors.New("evidence: the payload is not valid JSON")
)

// Check reports whether r may be appended to a ledger: its outcome is
// SUCCESS or FAILED, it has a call id, and its payload is empty or valid
// JSON. The error wraps [ErrNotExecuted], [ErrNoCallID] or
// [ErrInvalidPayload]. Implementations of [Ledger] use it to refuse records
// the same way.
func Check(r Record) error {
	if r.Outcome != outcome.Success && r.Outcome != outcome.Failed {
		return ErrNotExecuted
	}
	if r.CallID == "" {
		return ErrNoCallID
	}
	if len(r.Payload) > 0 && !jsonvalid.Valid(r.Payload) {
		return ErrInvalidPayload
	}
	return nil
}

// Ledger holds the evidence of node runs, keyed by run id: the executed
// attempts of tool calls and the words the user said. Implementations must
// be safe for concurrent use. Lookups ([Ledger.HasValue],
// [Ledger.HasResult], [Ledger.Executions], [Ledger.Lookup]) must not grow
// with the number of records held (O(1) expected); [Ledger.UserSaid] may
// grow with the length of the user's words. A run that was never written
// reads as empty, without error. Errors are infrastructure failures (a store
// that cannot be reached) or records refused by [Check].
//
// Run the conformance tests of package evidencetest against an
// implementation.
type Ledger interface {
	// Append records one executed attempt. It refuses records that [Check]
	// refuses. Appending the same (CallID, Attempt) twice keeps the first
	// and returns nil.
	Append(ctx context.Context, run string, r Record) error
	// Records returns the run's records in the order appended, every
	// attempt included: a retried call keeps its first failure before the
	// later attempts.
	Records(ctx context.Context, run string) ([]Record, error)
	// Lookup returns the latest successful record of callID, or, if it
	// never succeeded, its latest record.
	Lookup(ctx context.Context, run, callID string) (Record, bool, error)
	// HasResult reports whether tool has at least one successful record.
	HasResult(ctx context.Context, run, tool string) (bool, error)
	// HasValue reports whether a successful result of tool holds value at
	// the dotted field path (arrays walked transparently; "" is the path of
	// a payload that is itself a scalar). Values compare by the text
	// [Walk] gives a scalar: a string without quotes, a number in canonical
	// form, true or false; so "42" matches both 42 and "42". JSON null is
	// never held. With tool "", it reports whether any successful result of
	// the run holds value at any path (field is ignored), as a whole scalar
	// or as one of the [Words] of a string: this is how the param contract
	// recognises a value copied out of a tool result.
	HasValue(ctx context.Context, run, tool, field, value string) (bool, error)
	// Executions returns how many distinct calls (by call id) with
	// fingerprint were executed, and the latest record among them. An empty
	// fingerprint counts nothing.
	Executions(ctx context.Context, run, fingerprint string) (calls int, last Record, err error)
	// AddUserText records words the user said in the run (the task, an
	// answer to a follow-up).
	AddUserText(ctx context.Context, run, text string) error
	// UserSaid reports whether value appears in the user's words of the
	// run. See [Memory.UserSaid] for the matching rule of the default
	// implementation; an empty value is never said.
	UserSaid(ctx context.Context, run, value string) (bool, error)
}

// Snapshot is a run's evidence in a form that serialises to JSON, so that a
// loop can persist a suspended run and restore it in another process. Its
// field names are stable API.
type Snapshot struct {
	// Records are the run's records in the order appended.
	Records []Record `json:"records,omitempty"`
	// UserTexts are the user's words in the order added.
	UserTexts []string `json:"user_texts,omitempty"`
}

// Exporter is implemented by ledgers whose state lives in the process (such
// as [Memory]) and must travel with a run's snapshot. A ledger backed by a
// shared store need not implement it: its state outlives the process.
type Exporter interface {
	// Export returns the run's evidence. The snapshot shares no memory with
	// the ledger.
	Export(ctx context.Context, run string) (Snapshot, error)
	// Import merges s into the run's evidence, rebuilding every index, so
	// that every lookup answers at least as it did in the exporting ledger.
	// It never replaces or drops what the run holds: a record whose call id
	// and attempt the run already holds is kept as it is (as
	// [Ledger.Append] does), and a user text is added unless the run already
	// holds it as often as s does. Two resumes of one run in one process
	// therefore never erase each other's evidence. On error the run is
	// unchanged.
	Import(ctx context.Context, run string, s Snapshot) error
}
