package errcode

import (
	"fmt"
	"strconv"
)

// Layer is the layer of success a code belongs to (docs/evaluation.md): was the call
// well-formed and allowed, did the tool execute, did the business goal hold.
// The zero value is invalid.
type Layer uint8

// The three layers.
const (
	LayerCall      Layer = 1 // the call itself: parsing, schema, rules, approval, visibility
	LayerExecution Layer = 2 // the tool ran: timeouts, transport, permissions, result shape
	LayerBusiness  Layer = 3 // the tool answered, but the business goal failed

	minLayer = LayerCall
	maxLayer = LayerBusiness
)

// String returns call, execution or business.
func (l Layer) String() string {
	switch l {
	case LayerCall:
		return "call"
	case LayerExecution:
		return "execution"
	case LayerBusiness:
		return "business"
	}
	return "layer(" + strconv.Itoa(int(l)) + ")"
}

// IsValid reports whether l is one of the three layers.
func (l Layer) IsValid() bool { return l >= minLayer && l <= maxLayer }

// MarshalText implements [encoding.TextMarshaler].
func (l Layer) MarshalText() ([]byte, error) {
	if !l.IsValid() {
		return nil, fmt.Errorf("errcode: cannot marshal invalid layer %d", uint8(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and l is left unchanged.
func (l *Layer) UnmarshalText(text []byte) error {
	for v := minLayer; v <= maxLayer; v++ {
		if v.String() == string(text) {
			*l = v
			return nil
		}
	}
	return fmt.Errorf("errcode: unknown layer %q", text)
}

// Class is the execution status class of a failure (docs/evaluation.md). [ClassNone], the zero
// value, means the code has no execution status (it was decided before the
// tool ran).
type Class uint8

// The status classes.
const (
	ClassNone                   Class = 0  // decided before execution; no execution status
	ClassInvalidRequest         Class = 1  // the request was malformed for the tool
	ClassForbidden              Class = 2  // permission denied; retrying is probing
	ClassNotFound               Class = 3  // the resource does not exist
	ClassTimeout                Class = 4  // no answer in time; effect unknown
	ClassTemporarilyUnavailable Class = 5  // overloaded, rate limited or unreachable
	ClassUnknown                Class = 6  // any other failure
	ClassBusinessRejected       Class = 7  // the service answered and refused the business action
	ClassResultInvalid          Class = 8  // the answer does not have the agreed shape
	ClassEmpty                  Class = 9  // the answer is empty and the contract does not accept that
	ClassTooLarge               Class = 10 // the result is too large to return or to use; ask for less

	maxClass = ClassTooLarge
)

var classNames = [...]string{
	ClassNone:                   "none",
	ClassInvalidRequest:         "invalid_request",
	ClassForbidden:              "forbidden",
	ClassNotFound:               "not_found",
	ClassTimeout:                "timeout",
	ClassTemporarilyUnavailable: "temporarily_unavailable",
	ClassUnknown:                "unknown",
	ClassBusinessRejected:       "business_rejected",
	ClassResultInvalid:          "result_invalid",
	ClassEmpty:                  "empty",
	ClassTooLarge:               "too_large",
}

// String returns the class's snake_case name (e.g. temporarily_unavailable).
func (c Class) String() string {
	if c <= maxClass {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// IsValid reports whether c is a defined class (ClassNone included).
func (c Class) IsValid() bool { return c <= maxClass }

// MarshalText implements [encoding.TextMarshaler].
func (c Class) MarshalText() ([]byte, error) {
	if !c.IsValid() {
		return nil, fmt.Errorf("errcode: cannot marshal invalid class %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and c is left unchanged.
func (c *Class) UnmarshalText(text []byte) error {
	for v := ClassNone; v <= maxClass; v++ {
		if classNames[v] == string(text) {
			*c = v
			return nil
		}
	}
	return fmt.Errorf("errcode: unknown class %q", text)
}
