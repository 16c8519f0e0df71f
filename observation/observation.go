package observation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
)

// Observation is the result of one tool call. See the package documentation
// for construction rules and the zero value.
type Observation struct {
	outcome outcome.Outcome
	code    errcode.Code
	reason  string // the success message, or what happened
	next    string // empty exactly for Success
	data    any
	cause   error // the raw error behind it, for logs only
}

// Success returns a SUCCESS observation with a summary message and the
// tool's payload (nil allowed).
func Success(message string, data any) Observation {
	return Observation{outcome: outcome.Success, reason: message, data: data}
}

// Failed returns a FAILED observation: the tool ran and failed. data is
// optional (at most one value: the response body). It panics if code is not
// a defined [errcode.Code], if next is empty, or if more than one data value
// is given.
func Failed(code errcode.Code, reason, next string, data ...any) Observation {
	if len(data) > 1 {
		panic("observation: Failed takes at most one data value")
	}
	o := mustNonSuccess("Failed", outcome.Failed, code, reason, next)
	if len(data) == 1 {
		o.data = data[0]
	}
	return o
}

// Rejected returns a REJECTED observation: the call broke a rule and did not
// run. It panics if code is not a defined [errcode.Code] or next is empty.
func Rejected(code errcode.Code, reason, next string) Observation {
	return mustNonSuccess("Rejected", outcome.Rejected, code, reason, next)
}

// Deferred returns a DEFERRED observation: the call is legitimate but next
// names the step that must come first. It panics if code is not a defined
// [errcode.Code] or next is empty.
func Deferred(code errcode.Code, reason, next string) Observation {
	return mustNonSuccess("Deferred", outcome.Deferred, code, reason, next)
}

func mustNonSuccess(factory string, o outcome.Outcome, code errcode.Code, reason, next string) Observation {
	if err := checkNonSuccess(code, next); err != nil {
		panic("observation: " + factory + ": " + err.Error())
	}
	return Observation{outcome: o, code: code, reason: reason, next: next}
}

var (
	errNoCode = errors.New("a non-success observation needs a defined error code")
	errNoNext = errors.New("a non-success observation needs a next step")
)

func checkNonSuccess(code errcode.Code, next string) error {
	if !code.IsValid() {
		return fmt.Errorf("%w (got %v)", errNoCode, code)
	}
	if next == "" {
		return errNoNext
	}
	return nil
}

// Outcome returns the verdict; the zero Observation returns the invalid zero
// outcome.
func (o Observation) Outcome() outcome.Outcome { return o.outcome }

// Code returns the error code; 0 for a success.
func (o Observation) Code() errcode.Code { return o.code }

// Reason returns what happened (for a success, its summary message).
func (o Observation) Reason() string { return o.reason }

// Next returns the next step the model must take; "" for a success.
func (o Observation) Next() string { return o.next }

// Data returns the payload. After a JSON round trip it is a
// [json.RawMessage] holding the payload's JSON.
func (o Observation) Data() any { return o.data }

// IsZero reports whether o is the zero Observation (no verdict).
func (o Observation) IsZero() bool { return o.outcome == 0 }

// WithNext returns a copy of o with its next step replaced. It panics if o is
// not a non-success observation or next is empty: a success has no next
// step, and a non-success must keep one.
func (o Observation) WithNext(next string) Observation {
	if o.outcome == outcome.Success || o.IsZero() {
		panic("observation: WithNext on " + o.outcome.String() + " observation")
	}
	if next == "" {
		panic("observation: WithNext: " + errNoNext.Error())
	}
	o.next = next
	return o
}

// WithCause returns a copy of o carrying err as its cause: the raw error
// behind the observation (a tool's error, with every secret it may hold),
// kept for logs, traces and observers. The cause is never part of what the
// model reads ([Observation.Message]), of the JSON form, or of anything
// persisted; a nil err removes it.
func (o Observation) WithCause(err error) Observation {
	o.cause = err
	return o
}

// Cause returns the raw error behind o (see [Observation.WithCause]), or
// nil. Do not show it to the model.
func (o Observation) Cause() error { return o.cause }

// WithData returns a copy of o carrying data as its payload.
func (o Observation) WithData(data any) Observation {
	o.data = data
	return o
}

// Message renders o for the model in English: the summary for a success,
// "<reason>. Next: <next>" otherwise.
func (o Observation) Message() string { return o.MessageIn(prompt.Default()) }

// MessageIn renders o with the message format of catalog c (nil: English).
func (o Observation) MessageIn(c *prompt.Catalog) string {
	if o.outcome == outcome.Success {
		return o.reason
	}
	return c.Message(o.reason, o.next)
}

// String returns a one-line form for logs: OUTCOME CODE: message.
func (o Observation) String() string {
	if o.code == 0 {
		return o.outcome.String() + ": " + o.Message()
	}
	return o.outcome.String() + " " + o.code.String() + ": " + o.Message()
}

// wire is the JSON form. Field names are stable API.
type wire struct {
	Outcome outcome.Outcome `json:"outcome"`
	Code    *errcode.Code   `json:"code,omitempty"`
	Reason  string          `json:"reason"`
	Next    string          `json:"next,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// MarshalJSON encodes o as
// {"outcome":"FAILED","code":"TOOL_TIMEOUT","reason":"…","next":"…","data":…}.
// code and next are omitted for a success, data when nil; the cause is
// never encoded. The zero Observation and unencodable payloads are errors.
func (o Observation) MarshalJSON() ([]byte, error) {
	if o.IsZero() {
		return nil, errors.New("observation: cannot marshal the zero Observation")
	}
	w := wire{Outcome: o.outcome, Reason: o.reason, Next: o.next}
	if o.code != 0 {
		c := o.code
		w.Code = &c
	}
	if o.data != nil {
		raw, err := json.Marshal(o.data)
		if err != nil {
			return nil, fmt.Errorf("observation: payload: %w", err)
		}
		w.Data = raw
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes the form written by [Observation.MarshalJSON] under
// the factories' rules: unknown fields, an unknown outcome or code, a
// success with a code or next step, and a non-success without a code or next
// step are errors, and o is left unchanged. The payload becomes a
// [json.RawMessage], so encoding the result again gives the same bytes.
func (o *Observation) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var w wire
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("observation: %w", err)
	}
	if dec.More() {
		return errors.New("observation: trailing data after object")
	}
	var v Observation
	switch w.Outcome {
	case outcome.Success:
		if w.Code != nil || w.Next != "" {
			return errors.New("observation: a SUCCESS observation has no code and no next step")
		}
		v = Observation{outcome: outcome.Success, reason: w.Reason}
	case outcome.Failed, outcome.Rejected, outcome.Deferred:
		var code errcode.Code
		if w.Code != nil {
			code = *w.Code
		}
		if err := checkNonSuccess(code, w.Next); err != nil {
			return fmt.Errorf("observation: %s: %w", w.Outcome, err)
		}
		v = Observation{outcome: w.Outcome, code: code, reason: w.Reason, next: w.Next}
	default:
		return errors.New("observation: missing outcome")
	}
	if len(w.Data) > 0 && !bytes.Equal(w.Data, []byte("null")) {
		v.data = w.Data
	}
	*o = v
	return nil
}
