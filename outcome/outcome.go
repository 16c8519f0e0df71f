package outcome

import (
	"fmt"
	"strconv"
)

// Outcome is the verdict of one tool call. The zero value is invalid; see the
// package documentation.
type Outcome uint8

// The four verdicts. Their numeric values are stable and may be persisted.
const (
	Success  Outcome = 1 // the tool ran and succeeded
	Failed   Outcome = 2 // the tool ran and failed
	Rejected Outcome = 3 // the call broke a rule and did not run
	Deferred Outcome = 4 // the call is legitimate but must wait for another step

	minOutcome = Success
	maxOutcome = Deferred
)

// All returns the four valid verdicts in ascending order. The slice is a
// fresh copy on every call.
func All() []Outcome { return []Outcome{Success, Failed, Rejected, Deferred} }

// IsValid reports whether o is one of the four verdicts.
func (o Outcome) IsValid() bool { return o >= minOutcome && o <= maxOutcome }

// Advances reports whether o resets the no-progress counter. Only [Success]
// advances.
func (o Outcome) Advances() bool { return o == Success }

// Stalls reports whether o counts one no-progress. [Failed] and [Rejected]
// stall; [Success] and [Deferred] do not. An invalid outcome stalls, so that
// an uninitialised result can only stop a loop early.
func (o Outcome) Stalls() bool {
	switch o {
	case Success, Deferred:
		return false
	case Failed, Rejected:
		return true
	default:
		return true
	}
}

// String returns the stable name (SUCCESS, FAILED, REJECTED, DEFERRED), or
// "OUTCOME(n)" for an invalid value.
func (o Outcome) String() string {
	switch o {
	case Success:
		return "SUCCESS"
	case Failed:
		return "FAILED"
	case Rejected:
		return "REJECTED"
	case Deferred:
		return "DEFERRED"
	}
	return "OUTCOME(" + strconv.Itoa(int(o)) + ")"
}

// Parse returns the verdict with the given stable name. Names are
// case-sensitive; anything else is an error.
func Parse(name string) (Outcome, error) {
	switch name {
	case "SUCCESS":
		return Success, nil
	case "FAILED":
		return Failed, nil
	case "REJECTED":
		return Rejected, nil
	case "DEFERRED":
		return Deferred, nil
	}
	return 0, fmt.Errorf("outcome: unknown name %q (want SUCCESS, FAILED, REJECTED or DEFERRED)", name)
}

// MarshalText implements [encoding.TextMarshaler]. An invalid outcome is an
// error, so that it is never persisted.
func (o Outcome) MarshalText() ([]byte, error) {
	if !o.IsValid() {
		return nil, fmt.Errorf("outcome: cannot marshal invalid value %d", uint8(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [Parse]. On error
// o is left unchanged.
func (o *Outcome) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*o = v
	return nil
}
