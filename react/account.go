package react

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

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
		if fp := ex.Fingerprint; fp != "" && !r.evidenced.Add(fp) {
			rep.Business = BusinessRepeated
		}
	}
	return rep
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
			if v, ok := r.outputs[k]; !ok || v.Source == SourceModel {
				return GoalUnverified
			}
		}
		return GoalMet
	case Suspended, Interrupted:
	}
	return GoalNone
}

// restoreEvidenced rebuilds the fingerprints whose result was new evidence
// from the restored call reports.
func (r *run) restoreEvidenced() {
	for _, c := range r.calls {
		if c.Business == BusinessEvidence && c.Fingerprint != "" {
			r.evidenced.Add(c.Fingerprint)
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
