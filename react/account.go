package react

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

// This file turns what a call produced into its three-layer account
// (layers.go): the verdict, the guards' execution account
// (invoker.Execution), the tool's contract and the run's evidence.

// report returns the report of call c, the i-th of the current wave, with
// its layers. It runs on the loop's goroutine, in call order, so that
// "new evidence" is judged against every earlier call of the run.
func (r *run) report(c ToolCall, i int, out *callResult) CallReport {
	return r.account(c, i, out, true)
}

// account is report; without judge, it reads only what is fixed during a
// wave (so parallel reads may call it) and leaves a result that is new
// evidence or a repeat unjudged (BusinessNone), since that depends on call
// order.
func (r *run) account(c ToolCall, i int, out *callResult, judge bool) CallReport {
	obs := out.obs
	o, code := obs.Outcome(), obs.Code()
	rep := CallReport{CallID: c.ID, Tool: c.Name, Round: r.round, Builtin: out.eff != nil, Outcome: o, Code: code}
	switch o {
	case outcome.Rejected:
		rep.Call = r.rejectedStatus(code, i)
	case outcome.Deferred:
		rep.Call = CallDeferred
	default: // SUCCESS, FAILED: the call was admitted
		rep.Call = CallValid
	}
	if out.eff != nil || (o != outcome.Success && o != outcome.Failed) {
		return rep // a built-in call, or nothing executed
	}
	ex := &out.exec
	if ex.Reused {
		rep.Execution, rep.Business = ExecReused, BusinessRepeated
		return rep
	}
	rep.Fingerprint = ex.Fingerprint
	if !ex.Provenance.IsZero() {
		p := ex.Provenance
		rep.Provenance = &p
	}
	if judge && out.tool != nil && out.tool.Effect.IsWrite() {
		// A write ran (or may have): what reads said before may have
		// changed, so the same read is new evidence again.
		r.evidenced.Clear()
	}
	final := Attempt{Outcome: o, Code: code}
	if o == outcome.Success {
		final.Status = ExecOK
		if r.emptyResult(out.tool, obs.Data()) {
			final.Status = ExecEmpty
		}
	} else {
		final.Status = ExecStatusOf(code)
	}
	rep.Attempts, rep.First, rep.Final, rep.Execution = 1, final, final, final.Status
	if ex.Attempts > 1 {
		// Only the last attempt can succeed: the retry guard stops at the
		// first SUCCESS.
		rep.Attempts = ex.Attempts
		rep.First = Attempt{Outcome: ex.First.Outcome, Code: ex.First.Code, Status: ExecOK}
		if ex.First.Outcome != outcome.Success {
			rep.First.Status = ExecStatusOf(ex.First.Code)
		}
	}
	switch {
	case o == outcome.Failed && code == errcode.ToolBusinessFailed:
		rep.Business = BusinessRejected
	case o == outcome.Failed && code == errcode.ToolBlocked:
		rep.Business = BusinessBlocked
	case ex.Pending:
		rep.Business, rep.Reason = BusinessAccepted, ex.Job
	case final.Status == ExecEmpty && !ex.Answered:
		rep.Business = BusinessInsufficient
	case o == outcome.Failed:
		// the execution failed: no result to judge
	case ex.Insufficient:
		rep.Business, rep.Reason = BusinessInsufficient, ex.Reason
	case !judge:
		// judged in call order, by report
	default:
		rep.Business = BusinessEvidence
		if fp := ex.Fingerprint; fp != "" {
			d := resultDigest(obs.DataJSON())
			rep.ResultDigest = strconv.FormatUint(d, 16)
			if !r.evidenced.Swap(fp, d) {
				rep.Business = BusinessRepeated
			}
		}
	}
	return rep
}

// resultDigest is the FNV-1a 64 digest of a result's JSON (b, err from
// observation.DataJSON; a result that does not encode digests as empty).
// Two results of one fingerprint with the same digest are the same
// answer: the second is no new evidence.
func resultDigest(b []byte, err error) uint64 {
	if err != nil {
		b = nil
	}
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= prime64
	}
	return h
}

// rejectedStatus is the call status of a REJECTED call i with code.
func (r *run) rejectedStatus(code errcode.Code, i int) CallStatus {
	switch code { //nolint:exhaustive // every other rejection is a refusal by a rule
	case errcode.ToolCallInvalid:
		if p, ok := r.wave.invalid[i]; ok && (p.Kind == problemNoName || p.Kind == problemNameTooLong) {
			return CallUnknownTool
		}
		return CallUnpaired
	case errcode.CatalogDenied:
		return CallUnknownTool
	case errcode.ArgJSONInvalid, errcode.ArgRejected, errcode.ToolCallCutOff:
		return CallInvalidArgs
	}
	return CallRefused
}

// emptyResult reports whether a successful result of the catalog tool t
// (nil for any other call) is empty: the tool's Contract.IsEmpty when it
// has one (a panic counts as not empty), else guard.DefaultIsEmpty, which
// judges raw JSON without decoding it.
func (r *run) emptyResult(t *tool.Tool, data any) (empty bool) {
	if t != nil && t.Contract != nil && t.Contract.IsEmpty != nil {
		defer func() {
			if recover() != nil {
				empty = false
			}
		}()
		return t.Contract.IsEmpty(data)
	}
	return guard.DefaultIsEmpty(data)
}

// goal judges the run's goal from its completion conditions once it ended
// (see [GoalStatus]).
func (r *run) goal() GoalStatus {
	switch r.status {
	case Failed:
		return GoalUnmet
	case Finished:
		if len(r.required) == 0 {
			return GoalUnverified
		}
		for _, k := range r.required {
			v, ok := r.outputs[k]
			if !ok || v.Source == SourceModel {
				return GoalUnverified
			}
			if o, _ := r.node.output(k); v.Source == SourceToolResult && !o.sourced() {
				return GoalUnverified // matched some value of the result, not a declared one
			}
		}
		return GoalMet
	case Suspended, Interrupted:
	}
	return GoalNone
}

// restoreEvidenced rebuilds, from the restored call reports in order, the
// digest of each fingerprint's last result since the last write that ran.
func (r *run) restoreEvidenced() {
	for _, c := range r.calls {
		if c.Builtin || c.Attempts == 0 {
			continue // nothing ran (reused writes included)
		}
		if t, ok := r.l.catalog.Lookup(c.Tool); ok && t.Effect.IsWrite() {
			r.evidenced.Clear()
		}
		if c.Fingerprint == "" || c.ResultDigest == "" {
			continue // no result judged by its digest (a report from before digests judges the next result anew)
		}
		if d, err := strconv.ParseUint(c.ResultDigest, 16, 64); err == nil {
			r.evidenced.Swap(c.Fingerprint, d)
		}
	}
}

// schemaEntry is a catalog tool's input schema as sent to the model, and
// its version: the first 12 hex digits of the SHA-256 of that JSON.
type schemaEntry struct {
	schema  json.RawMessage
	version string
}

func newSchemaEntry(b json.RawMessage) schemaEntry {
	sum := sha256.Sum256(b)
	return schemaEntry{schema: b, version: hex.EncodeToString(sum[:6])}
}

// schemaVersion returns the version of the input schema of the visible
// catalog tool name, "" for other names (built-in tools included).
func (r *run) schemaVersion(name string) string {
	return r.versions[name]
}
