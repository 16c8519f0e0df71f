package evidence

import (
	"context"
	"encoding/json"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
)

// Record is one executed attempt of a tool call: only SUCCESS and FAILED
// observations are recorded (calls stopped before execution never are).
type Record struct {
	// CallID is the model's tool-call id.
	CallID string `json:"call_id"`
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Fingerprint is the canonical fingerprint of tool and arguments.
	Fingerprint string `json:"fingerprint"`
	// Outcome is SUCCESS or FAILED.
	Outcome outcome.Outcome `json:"outcome"`
	// Code is the error code of a FAILED attempt; 0 for SUCCESS.
	Code errcode.Code `json:"code,omitempty"`
	// Payload is the JSON of the result (SUCCESS) or response body (FAILED),
	// or nil.
	Payload json.RawMessage `json:"payload,omitempty"`
	// PayloadRef refers to the full payload where it is stored elsewhere.
	PayloadRef string `json:"payload_ref,omitempty"`
	// Attempt numbers executions of the call, from 1.
	Attempt int `json:"attempt"`
	// Round is the loop round.
	Round int `json:"round"`
}

// Ledger holds the evidence of node runs, keyed by run id. Implementations
// must be safe for concurrent use. Lookups ([Ledger.HasValue],
// [Ledger.HasResult], [Ledger.Executions], [Ledger.Lookup]) must not grow
// with the number of records held (O(1) expected).
type Ledger interface {
	// Append records one executed attempt. Appending the same (CallID,
	// Attempt) twice keeps the first. Records other than SUCCESS and FAILED
	// are refused with an error.
	Append(ctx context.Context, run string, r Record) error
	// Records returns the run's records in the order appended. A retried
	// call keeps its first failure before the later attempts.
	Records(ctx context.Context, run string) ([]Record, error)
	// Lookup returns the latest successful record of callID, or, if it
	// never succeeded, its latest record.
	Lookup(ctx context.Context, run, callID string) (Record, bool, error)
	// HasResult reports whether tool has at least one successful record.
	HasResult(ctx context.Context, run, tool string) (bool, error)
	// HasValue reports whether a successful result of tool holds value at
	// the dotted field path (arrays walked transparently). Scalars compare
	// by their JSON text without quotes for strings: "42" matches 42.
	HasValue(ctx context.Context, run, tool, field, value string) (bool, error)
	// Executions returns how many distinct calls with fingerprint were
	// executed, and the latest record among them.
	Executions(ctx context.Context, run, fingerprint string) (calls int, last Record, err error)
	// AddUserText records words the user said in the run.
	AddUserText(ctx context.Context, run, text string) error
	// UserSaid reports whether value appears in the user's words of the run.
	UserSaid(ctx context.Context, run, value string) (bool, error)
}
