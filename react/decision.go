package react

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/reactguard/reactguard/runstore"
)

// Owner is who a run belongs to: a tenant and a user of it (see
// [runstore.Owner] for how an owner covers runs). The host names it when it
// starts a run ([WithOwner]); it is sealed into every snapshot of the run,
// and [Loop.Pending], [Loop.Resume] and [Loop.ResumeRun] refuse a caller
// whose owner does not cover it ([ErrNotOwner]).
type Owner = runstore.Owner

// RunOption is an option of one call of [Loop.Run], [Loop.Resume],
// [Loop.ResumeRun], [Loop.Pending] or [Loop.Inspect].
type RunOption func(*runOptions)

type runOptions struct {
	owner     Owner
	verifier  Verifier // WithVerifier
	inputs    *Inputs  // WithInputs
	hostKind  string   // WithHostState
	hostState []byte
	thread    string // InThread
	inThread  bool
}

func applyOptions(opts []RunOption) runOptions {
	var o runOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithOwner names the owner of the call. For [Loop.Run] it is the new
// run's owner, sealed into its snapshots and kept in Config.Runs; for the
// calls that read or resume a stopped run, it is the caller's owner, which
// must cover the run's ([runstore.Owner.Covers]): a call without
// WithOwner acts as the zero Owner, which covers only the runs started
// without a tenant. An owner that is not valid UTF-8 or longer than
// [runstore.MaxOwnerPart] is refused by Run.
func WithOwner(o Owner) RunOption { return func(r *runOptions) { r.owner = o } }

// ErrNotOwner is returned (wrapped) by [Loop.Pending], [Loop.Inspect],
// [Loop.Resume] and [Loop.ResumeRun] when the caller's owner (see
// [WithOwner]) does not cover the run's: nothing is shown, run or changed.
var ErrNotOwner = errors.New("react: the run belongs to another owner")

// ErrTicket is returned (wrapped) by [Loop.Resume] and [Loop.ResumeRun]
// when a decision's ticket does not name the suspension the run waits for:
// it names another run, another suspension of this run that was never
// decided, or is not a ticket at all. Nothing runs and no store changes.
// A decision whose ticket names a suspension that was decided before gets
// [ErrAlreadyResumed] instead.
var ErrTicket = errors.New("react: the decision's ticket does not name the suspension the run waits for")

// DecidedError is the error (wrapping [ErrAlreadyResumed]) of a decision
// on a suspension that was decided before: Decided is the decision the
// audit recorded for it (who, what, when). [Loop.Resume] and
// [Loop.ResumeRun] return it for a decision delivered twice, on every
// path: the same snapshot resumed again, a ticket whose suspension is no
// longer the run's current one (the run went on and stopped again, or
// ended), or a resume racing another one that recorded its decision
// first.
type DecidedError struct {
	Decided runstore.Decision
}

func (e *DecidedError) Error() string {
	d := e.Decided
	by := d.By
	if by == "" {
		by = "an unnamed person"
	}
	return fmt.Sprintf("%v: suspension %s of run %s was %s by %s at %s", ErrAlreadyResumed, d.Suspension, d.Run, d.Kind, by,
		d.At.UTC().Format("2006-01-02T15:04:05.000000Z"))
}

// Unwrap returns [ErrAlreadyResumed].
func (e *DecidedError) Unwrap() error { return ErrAlreadyResumed }

type decisionKind uint8

const (
	decideApprove  decisionKind = 1
	decideDecline  decisionKind = 2
	decideAnswer   decisionKind = 3
	decideContinue decisionKind = 4
)

func (k decisionKind) String() string {
	switch k {
	case decideApprove:
		return "approve"
	case decideDecline:
		return "decline"
	case decideAnswer:
		return "answer"
	case decideContinue:
		return "continue"
	}
	return "none"
}

// audited returns the audit kind of a person's decision, 0 for Continue.
func (k decisionKind) audited() runstore.DecisionKind {
	switch k {
	case decideApprove:
		return runstore.Approved
	case decideDecline:
		return runstore.Declined
	case decideAnswer:
		return runstore.Answered
	case decideContinue: // not a person's decision on anything shown
	}
	return 0
}

// Decision is what the host passes to [Loop.Resume] and [Loop.ResumeRun]:
// a person's verdict on an approval or answer to a follow-up, each naming
// the suspension it answers by its ticket, or [Continue] for an
// interrupted run. Build it with [Approve], [Decline], [Answer] or
// [Continue], and say who decided with [Decision.DecidedBy]; the zero
// value is refused. A Decision is a small value: copy it freely.
type Decision struct {
	kind   decisionKind
	text   string
	ticket string
	by     string
}

// Approve grants, once, the write call of the suspension that ticket
// names ([Suspension].Ticket, as the person was shown it). There is no way
// to approve "whatever the run waits for now": a decision without the
// ticket of the run's current suspension is refused ([ErrTicket]).
func Approve(ticket string) Decision { return Decision{kind: decideApprove, ticket: ticket} }

// Decline refuses the write call of the suspension that ticket names;
// reason (may be empty) is shown to the model and kept in the audit.
func Decline(ticket, reason string) Decision {
	return Decision{kind: decideDecline, ticket: ticket, text: reason}
}

// Answer is the user's answer to the follow-up question of the suspension
// that ticket names. It becomes part of the user's words of the run.
func Answer(ticket, text string) Decision {
	return Decision{kind: decideAnswer, ticket: ticket, text: text}
}

// Continue resumes an [Interrupted] run where it stopped. It is not a
// person's decision on anything shown, so it has no ticket and is not
// audited.
func Continue() Decision { return Decision{kind: decideContinue} }

// MaxDecider bounds the length in bytes of [Decision.DecidedBy]'s id.
const MaxDecider = 256

// DecidedBy returns d with who made it: the person's id as the host
// authenticated them (never a name a client typed). It is kept in the
// audit record, the resume's log line and its trace span, and never in
// metrics. An id that is not valid UTF-8 or longer than [MaxDecider]
// bytes is refused by Resume with [ErrDecision].
func (d Decision) DecidedBy(id string) Decision {
	d.by = id
	return d
}

// Decider returns who made the decision ([Decision.DecidedBy]); "" when
// the host did not say.
func (d Decision) Decider() string { return d.by }

// Ticket returns the ticket the decision was given.
func (d Decision) Ticket() string { return d.ticket }

// String returns the decision's kind, for logs.
func (d Decision) String() string { return d.kind.String() }

// ticketPrefix starts every ticket; it names the ticket format.
const ticketPrefix = "rgt1."

// ticket returns the ticket of the suspension s sealed in the snapshot
// with state st under key k: the snapshot id in clear (so that a ticket
// of an earlier suspension can be looked up in the audit) and a MAC over
// everything the suspension names.
func (k sealKey) ticket(st *snapState) string {
	if st.Suspension == nil {
		return ""
	}
	return ticketPrefix + st.ID + "." + base64.RawURLEncoding.EncodeToString(k.ticketMAC(st))
}

func (k sealKey) ticketMAC(st *snapState) []byte {
	s := st.Suspension
	var callID, fp string
	if s.Approval != nil {
		callID, fp = s.Approval.CallID, s.Approval.Fingerprint
	}
	h := hmac.New(sha256.New, k.key)
	for _, f := range [...]string{"reactguard ticket", st.Run, st.ID, s.Kind.String(), s.CallID, callID, fp, st.Owner.Tenant, st.Owner.User} {
		_, _ = fmt.Fprintf(h, "%d:%s\x00", len(f), f) // length-prefixed: no two field lists share an encoding
	}
	return h.Sum(nil)[:16]
}

// ticketSnapshot returns the snapshot id a ticket names, and false when
// the text is not a ticket.
func ticketSnapshot(t string) (string, []byte, bool) {
	rest, ok := strings.CutPrefix(t, ticketPrefix)
	if !ok {
		return "", nil, false
	}
	id, mac64, ok := strings.Cut(rest, ".")
	if !ok || id == "" {
		return "", nil, false
	}
	mac, err := base64.RawURLEncoding.DecodeString(mac64)
	if err != nil || len(mac) != 16 {
		return "", nil, false
	}
	return id, mac, true
}
