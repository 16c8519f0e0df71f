package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

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
	// Provenance says when, from where and in which version the result
	// was obtained. The zero value says nothing (records of ledgers and
	// snapshots written before it existed read so).
	Provenance Provenance `json:"provenance,omitzero"`
}

// Provenance is when, from where and in which version a tool's result was
// obtained: the three layers of success (docs/evaluation.md) ask that "a search result keep its source address
// and fetch time, a database result its object id and data version, a
// write its business voucher and idempotency key; without a verifiable
// voucher the final layer can hardly judge whether a result may serve as
// the task's evidence". A tool's contract says what it knows
// (tool.Contract.Provenance); the evidence guard fills in the fetch time
// (when the tool declares none: the time it recorded the attempt) and a
// write's idempotency key. Every field is optional; the zero value says
// nothing.
type Provenance struct {
	// FetchedAt is when the data was fetched from its source: for a cache
	// hit, when the cache was filled. The zero time means unknown.
	FetchedAt time.Time `json:"fetched_at,omitzero"`
	// Source is where the data came from: a URL, a system, a database.
	Source string `json:"source,omitempty"`
	// ObjectID identifies the object the result is about (a row id, an
	// order number).
	ObjectID string `json:"object_id,omitempty"`
	// Version is the object's data version (a revision, an ETag, an
	// update sequence).
	Version string `json:"version,omitempty"`
	// Voucher is the business receipt a write returned (a confirmation
	// number, a transaction id).
	Voucher string `json:"voucher,omitempty"`
	// IdempotencyKey is the key a write was executed under (the write
	// gate's), so that the write can be verified by it.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// MaxProvenanceText bounds, in bytes, each text field of a [Provenance]
// that [Provenance.Clean] keeps.
const MaxProvenanceText = 2048

// IsZero reports whether p says nothing.
func (p Provenance) IsZero() bool { return p == Provenance{} }

// Clean returns p fit to be stored and sealed by every ledger: each text
// valid UTF-8 (invalid sequences replaced by U+FFFD), without NUL bytes,
// at most [MaxProvenanceText] bytes (cut at a rune boundary); FetchedAt
// in UTC, rounded to the microsecond (what PostgreSQL keeps), and zero
// when it lies outside the years 1000 to 9999. Provenance comes from tool
// results, which nothing else bounds.
func (p Provenance) Clean() Provenance {
	p.Source, p.ObjectID, p.Version = cleanText(p.Source), cleanText(p.ObjectID), cleanText(p.Version)
	p.Voucher, p.IdempotencyKey = cleanText(p.Voucher), cleanText(p.IdempotencyKey)
	if y := p.FetchedAt.Year(); p.FetchedAt.IsZero() || y < 1000 || y > 9999 {
		p.FetchedAt = time.Time{}
	} else {
		p.FetchedAt = p.FetchedAt.UTC().Round(time.Microsecond)
	}
	return p
}

// cleanText is Provenance.Clean for one text.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if len(s) > MaxProvenanceText {
		cut := MaxProvenanceText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
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
	// and returns nil. It stores the record's Provenance as
	// [Provenance.Clean] returns it, and every read returns it so.
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

// StepPrefix starts the call id and the tool name under which a run's
// ledger holds the verified outputs of an earlier step of a task (see
// [StepRef]). No catalog tool may have a name that starts with it.
const StepPrefix = "step:"

// StepRef returns the call id, and the tool name, of the record in which a
// run's ledger holds the outputs that the earlier task step step verified
// and handed on: one successful record whose payload is a JSON object of
// those outputs by key. The run that receives them writes it before its
// first model turn (react.WithInputs); the parameter contract reads it for
// a tool.Step source, and builtin_output_set accepts it as a sourceRef.
func StepRef(step string) string { return StepPrefix + step }

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
