package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/internal/jsonvalid"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
)

// DefaultMaxPayload is the payload size, in bytes of JSON, above which the
// [Evidence] guard stores a reduced payload: 1 MiB.
const DefaultMaxPayload = 1 << 20

// maxKeptText is the longest string a reduced payload keeps, in bytes.
// Identifiers, names and codes — the values later calls cite — are shorter.
const maxKeptText = 256

// Offload stores the full payload of a result too large for the ledger and
// returns a reference to it, which goes into [evidence.Record.PayloadRef].
// It must be safe for concurrent use; an error is an infrastructure failure
// and is returned by the guard.
type Offload func(ctx context.Context, run string, r evidence.Record, payload []byte) (ref string, err error)

// EvidenceOptions configures [Evidence]. Only Ledger is required.
type EvidenceOptions struct {
	// Ledger receives one record per executed attempt. Required; the same
	// ledger the [ParamContract] guard and the fingerprint guard read.
	Ledger evidence.Ledger
	// MaxPayload caps the size of a stored payload in bytes of JSON: 0 means
	// [DefaultMaxPayload], a negative value means no cap. A larger payload is
	// stored reduced: the same structure with every string longer than 256
	// bytes dropped, so the identifiers a later call may cite stay evidence;
	// if even that exceeds the cap, no payload is stored and the result's
	// values are not evidence.
	MaxPayload int
	// Offload, when set, receives the full payload of every result larger
	// than MaxPayload; its reference is stored in the record. Nil keeps
	// only the reduced payload.
	Offload Offload
	// Now is the clock of a record's fetch time when the tool's contract
	// declares none; nil means time.Now.
	Now func() time.Time
}

// Evidence returns the evidence guard (see the package documentation for
// its place in the chain). It calls next and records the attempt in the
// ledger when it executed, that is when next answers SUCCESS or FAILED:
// call id, tool name, fingerprint (invoker.Call.Fingerprint, or
// fingerprint.Of of name and arguments when it is empty; "" when they are
// not JSON), outcome, code, the payload's JSON (the
// observation's data; a [json.RawMessage] is kept as is, other values are
// encoded, nil or an unencodable value stores none), attempt
// (call.Attempt, at least 1), round and provenance: what the tool's
// Contract.Provenance says of a SUCCESS's result (a panic there says
// nothing), with the fetch time set to the guard's clock when the contract
// gives none, and the write gate's idempotency key (call.IdempotencyKey),
// cleaned by evidence.Provenance.Clean. REJECTED and DEFERRED observations
// — the call did not run — and errors from next are passed on unrecorded.
// The observation is returned unchanged. Each recorded attempt is also
// noted in call.Execution (when set): the first attempt's verdict, the
// latest one and the count, so the loop can report them after the ledger
// of the run is forgotten.
//
// Inside a write gate whose write ledger stores the evidence of its writes
// itself (a [RecordingWriteLedger] whose RecordsTo reports this guard's
// ledger), the record of the write's execution is handed to the gate
// instead, which stores it with the write's record in one operation.
//
// Each attempt of a retried call passes through the guard (the retry guard
// is outside it), so the ledger keeps every attempt in order, the first
// failure included. A ledger or Offload error is returned as a Go error
// with the zero observation: the run's evidence would otherwise be wrong.
// It panics if opts.Ledger is nil (a programming error). The interceptor is
// safe for concurrent use.
func Evidence(opts EvidenceOptions) invoker.Interceptor {
	if opts.Ledger == nil {
		panic("guard.Evidence: EvidenceOptions.Ledger is nil")
	}
	ev := &evidenceGuard{ledger: opts.Ledger, max: opts.MaxPayload, offload: opts.Offload, now: opts.Now}
	if ev.max == 0 {
		ev.max = DefaultMaxPayload
	}
	if ev.now == nil {
		ev.now = time.Now
	}
	return ev.intercept
}

type evidenceGuard struct {
	ledger  evidence.Ledger
	max     int
	offload Offload
	now     func() time.Time
}

func (ev *evidenceGuard) intercept(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
	obs, err := next(ctx, call)
	if err != nil {
		return obs, err
	}
	if o := obs.Outcome(); o != outcome.Success && o != outcome.Failed {
		return obs, nil
	}
	fp, _ := callFingerprint(&call) // "" for arguments that are not JSON: not counted
	r := evidence.Record{
		CallID:      call.ID,
		Tool:        call.Name,
		Fingerprint: fp,
		Outcome:     obs.Outcome(),
		Code:        obs.Code(),
		Attempt:     max(call.Attempt, 1),
		Round:       call.Round,
		Provenance:  ev.provenance(&call, obs),
	}
	payload := encodePayload(obs.Data())
	if _, raw := obs.Data().(json.RawMessage); payload != nil && !raw {
		obs = obs.WithDataJSON(payload) // json.Marshal's bytes: nobody encodes them again
	}
	if ev.max > 0 && len(payload) > ev.max {
		if ev.offload != nil {
			ref, err := ev.offload(ctx, call.Run, r, payload)
			if err != nil {
				return observation.Observation{}, fmt.Errorf("guard: evidence: offload payload of call %q: %w", call.ID, err)
			}
			r.PayloadRef = ref
		}
		payload = reducePayload(payload, ev.max)
	}
	r.Payload = payload
	if s := sinkFor(ctx, ev.ledger, call.Run); s != nil {
		// Inside a write gate that stores the record with the write's:
		// hand it over (an earlier attempt's record is appended now).
		if s.held {
			if err := ev.ledger.Append(ctx, call.Run, s.rec); err != nil {
				return observation.Observation{}, fmt.Errorf("guard: evidence: record call %q attempt %d: %w", s.rec.CallID, s.rec.Attempt, err)
			}
		}
		s.rec, s.held = r, true
		call.Execution.Executed(fp, r.Outcome, r.Code)
		return obs, nil
	}
	if err := ev.ledger.Append(ctx, call.Run, r); err != nil {
		return observation.Observation{}, fmt.Errorf("guard: evidence: record call %q attempt %d: %w", call.ID, r.Attempt, err)
	}
	call.Execution.Executed(fp, r.Outcome, r.Code)
	call.Execution.NoteProvenance(r.Provenance)
	return obs, nil
}

// provenance is the provenance of the attempt that produced obs: what the
// tool's contract says of a successful result, the fetch time (the
// guard's clock when the contract gives none) and the write gate's
// idempotency key, cleaned for every ledger.
func (ev *evidenceGuard) provenance(call *invoker.Call, obs observation.Observation) evidence.Provenance {
	var p evidence.Provenance
	if t := call.Tool; obs.Outcome() == outcome.Success && t != nil && t.Contract != nil && t.Contract.Provenance != nil {
		p = contractProvenance(t.Contract.Provenance, obs.Data())
	}
	if p.FetchedAt.IsZero() {
		p.FetchedAt = ev.now()
	}
	if call.IdempotencyKey != "" {
		p.IdempotencyKey = call.IdempotencyKey
	}
	return p.Clean()
}

// contractProvenance calls a contract's Provenance; a panic (host code
// meeting a result it did not expect) gives nothing.
func contractProvenance(f func(any) evidence.Provenance, data any) (p evidence.Provenance) {
	defer func() {
		if recover() != nil {
			p = evidence.Provenance{}
		}
	}()
	return f(data)
}

// resultJSON returns the JSON of obs's payload as encodePayload does,
// reusing the encoding an inner guard recorded.
func resultJSON(obs observation.Observation) json.RawMessage {
	if _, raw := obs.Data().(json.RawMessage); !raw && obs.Data() != nil {
		if b, err := obs.DataJSON(); err == nil {
			return b
		}
		return nil
	}
	return encodePayload(obs.Data())
}

// encodePayload returns the JSON of data, or nil when there is none.
func encodePayload(data any) json.RawMessage {
	switch d := data.(type) {
	case nil:
		return nil
	case json.RawMessage:
		if len(bytes.TrimSpace(d)) == 0 || !jsonvalid.Valid(d) {
			return nil
		}
		return d
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	return b
}

// reducePayload returns payload without its long strings, or nil when that
// still exceeds limit.
func reducePayload(payload []byte, limit int) json.RawMessage {
	var v any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	v, _ = prune(v)
	b, err := json.Marshal(v)
	if err != nil || len(b) > limit {
		return nil
	}
	return b
}

// prune drops strings longer than maxKeptText; keep is false for a dropped
// value.
func prune(v any) (out any, keep bool) {
	switch x := v.(type) {
	case string:
		return x, len(x) <= maxKeptText
	case map[string]any:
		for k, e := range x {
			if e, ok := prune(e); ok {
				x[k] = e
			} else {
				delete(x, k)
			}
		}
		return x, true
	case []any:
		kept := x[:0]
		for _, e := range x {
			if e, ok := prune(e); ok {
				kept = append(kept, e)
			}
		}
		return kept, true
	}
	return v, true
}
