package guard

import (
	"context"
	"strconv"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
)

// DefaultFingerprintLimit is how many executed calls with the same tool and
// canonical arguments the [Fingerprint] guard lets through before it trips:
// 2, so one repetition (after a transient failure, say) is allowed and the
// third identical call is REJECTED.
const DefaultFingerprintLimit = 2

// maxGist bounds the earlier result quoted in a FINGERPRINT_TRIP reason.
const maxGist = 200

// FingerprintOptions configures [Fingerprint]. Only Ledger is required.
type FingerprintOptions struct {
	// Ledger holds the run's executed calls. Required; the same ledger the
	// [Evidence] guard writes.
	Ledger evidence.Ledger
	// Catalog renders reasons and next steps; nil means English.
	Catalog *prompt.Catalog
	// Limit is how many executed calls with one fingerprint are let
	// through; the next one trips. 0 or less means
	// [DefaultFingerprintLimit].
	Limit int
}

// Fingerprint returns the fingerprint guard (see the package documentation
// for its place in the chain). It takes the call's fingerprint
// (invoker.Call.Fingerprint, computed as [fingerprint.Of] of the tool name
// and arguments when empty and then passed down set, the one the
// [Evidence] guard records) and asks the ledger how many distinct calls with it were
// executed in the run ([evidence.Ledger.Executions]). Once that reaches
// Limit the call is REJECTED FINGERPRINT_TRIP without running: the reason
// carries the count and the gist of the latest record (its outcome, code
// and the start of its payload), the next step is NEXT_FINGERPRINT.
//
// Only executed calls count: REJECTED and DEFERRED calls never reach the
// ledger, and the attempts of one retried call count once. Arguments
// differing only in key order or whitespace share a fingerprint. Tools with
// Pollable set, calls without a tool and calls whose arguments are not
// JSON (the arg policy's job) pass through unchecked.
//
// A ledger error is returned as a Go error with the zero observation. It
// panics if opts.Ledger is nil (a programming error). The interceptor is
// safe for concurrent use.
func Fingerprint(opts FingerprintOptions) invoker.Interceptor {
	if opts.Ledger == nil {
		panic("guard.Fingerprint: FingerprintOptions.Ledger is nil")
	}
	g := &fingerprintGuard{ledger: opts.Ledger, cat: opts.Catalog, limit: opts.Limit}
	if g.limit <= 0 {
		g.limit = DefaultFingerprintLimit
	}
	return g.intercept
}

type fingerprintGuard struct {
	ledger evidence.Ledger
	cat    *prompt.Catalog
	limit  int
}

func (g *fingerprintGuard) intercept(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
	if call.Tool == nil || call.Tool.Pollable {
		return next(ctx, call)
	}
	fp, err := callFingerprint(&call)
	if err != nil {
		return next(ctx, call)
	}
	n, last, err := g.ledger.Executions(ctx, call.Run, fp)
	if err != nil {
		return observation.Observation{}, err
	}
	if n < g.limit {
		return next(ctx, call)
	}
	return observation.Rejected(errcode.FingerprintTrip,
		g.cat.Reason(errcode.FingerprintTrip, "tool", call.Name, "count", strconv.Itoa(n), "gist", gist(last)),
		g.cat.Text(prompt.NextFingerprint, "tool", call.Name)), nil
}

// gist is a short, language-neutral text of a record: its outcome, its
// code when it failed, and for a success the start of its payload or its
// reference. A failure's payload (a response body) is never shown: the
// model did not see it when the call failed either.
func gist(r evidence.Record) string {
	s := r.Outcome.String()
	if r.Code != 0 {
		s += " " + r.Code.String()
	}
	if r.Outcome != outcome.Success {
		return s
	}
	switch {
	case len(r.Payload) > 0:
		s += " " + clipTo(string(r.Payload), maxGist)
	case r.PayloadRef != "":
		s += " " + r.PayloadRef
	}
	return s
}

// callFingerprint returns the call's fingerprint: call.Fingerprint when a
// guard further out computed it, else [fingerprint.Of] of its name and
// arguments, which it stores into call.Fingerprint so that the guards
// further in need not compute it again. Arguments that are not JSON yield
// "" and the error, and leave call.Fingerprint empty.
func callFingerprint(call *invoker.Call) (string, error) {
	if call.Fingerprint != "" {
		return call.Fingerprint, nil
	}
	fp, err := fingerprint.Of(call.Name, call.Args)
	if err != nil {
		return "", err
	}
	call.Fingerprint = fp
	return fp, nil
}
