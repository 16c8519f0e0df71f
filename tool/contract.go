package tool

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reactguard/reactguard/errcode"
)

// Contract is a tool's response contract: what counts as success for the
// tool (docs/evaluation.md). The response contract guard applies it to every result of a
// tool that returned without error.
type Contract struct {
	// Business inspects a result and reports a business failure inside a
	// successful response (for example code != 0 in an HTTP-200 body):
	// failed true, the downstream code (may be empty) and a message. Nil
	// means no business check.
	Business func(result any) (failed bool, downstream, message string)
	// Output is the JSON Schema the result must satisfy (checked on the
	// result's JSON encoding). Nil means no shape check.
	Output *jsonschema.Schema
	// Empty says whether an empty result is a legal answer.
	Empty EmptyPolicy
	// IsEmpty decides emptiness; nil means the default: nil, JSON null, an
	// empty string, slice, array or map.
	IsEmpty func(result any) bool
	// Sufficient inspects a result that passed every other check and
	// reports whether it serves the business goal of the call (structured
	// facts — result count, required fields, object state — are checked by
	// code). ok false marks the call "executed, business not
	// satisfied" with reason (invoker.Execution.Insufficient; the loop's
	// business status insufficient) while the verdict stays SUCCESS: the
	// model sees the result and chooses the next step. Nil means no check.
	// A panic is treated like one in Business.
	Sufficient func(result any) (ok bool, reason string)

	resolved *jsonschema.Resolved
}

// ResolvedOutput returns the resolved output schema, or nil.
func (c *Contract) ResolvedOutput() *jsonschema.Resolved {
	if c == nil {
		return nil
	}
	return c.resolved
}

// EmptyPolicy says what an empty result means.
type EmptyPolicy uint8

// The empty-result policies.
const (
	EmptyAllowed EmptyPolicy = 0 // an empty result is a legal answer: SUCCESS (the default)
	EmptyFails   EmptyPolicy = 1 // an empty result is a business failure: FAILED TOOL_RESULT_EMPTY
	// EmptyAnswers: an empty result is the answer itself ("no invoice is
	// overdue"): SUCCESS, Sufficient is not asked, and the business layer
	// counts it as evidence, not as "executed, business not satisfied".
	EmptyAnswers EmptyPolicy = 2
)

// SourceKind says where a parameter's value must come from.
type SourceKind uint8

// The source kinds.
const (
	FromAny    SourceKind = 0 // free: any value
	FromUser   SourceKind = 1 // the user's own words in this node
	FromResult SourceKind = 2 // a field of an earlier successful result of a given tool
)

// String returns free, user or result.
func (k SourceKind) String() string {
	switch k {
	case FromAny:
		return "free"
	case FromUser:
		return "user"
	case FromResult:
		return "result"
	}
	return "source(" + strconv.Itoa(int(k)) + ")"
}

// Source is a parameter's provenance contract. Build it with [Free],
// [User] or [Result].
type Source struct {
	// Kind is where the value must come from.
	Kind SourceKind
	// Tool is the tool whose successful result must hold the value
	// (FromResult only).
	Tool string
	// Field is the dotted path of the field within that result; arrays are
	// walked transparently ("sites.id" matches every element's id).
	Field string
}

// Free returns a source that accepts any value.
func Free() Source { return Source{Kind: FromAny} }

// User returns a source that requires the value to appear in the user's
// own words.
func User() Source { return Source{Kind: FromUser} }

// Result returns a source that requires the value to equal field of an
// earlier successful result of toolName.
func Result(toolName, field string) Source {
	return Source{Kind: FromResult, Tool: toolName, Field: field}
}

func (s Source) check() error {
	switch s.Kind {
	case FromAny, FromUser:
		return nil
	case FromResult:
		if s.Tool == "" || s.Field == "" {
			return errors.New("a result source needs a tool and a field")
		}
		return nil
	}
	return errors.New("unknown source kind " + s.Kind.String())
}

// WriteStatus is what a verification learned about an earlier write.
type WriteStatus uint8

// The verification answers.
const (
	WriteUnknown    WriteStatus = 0 // still cannot tell; do not run the write again
	WriteApplied    WriteStatus = 1 // the write took effect; its result is reused
	WriteNotApplied WriteStatus = 2 // the write did not take effect; it may run again
)

// VerifyFunc looks up a write by its idempotency key. For WriteApplied it
// also returns the write's result.
type VerifyFunc func(ctx context.Context, idempotencyKey string) (WriteStatus, any, error)

// RetryPolicy is a tool's retry policy. The retry guard retries a failed
// execution only if its code is retryable (Retryable, or
// [errcode.Code.Retryable] when nil), the tool is not a write without an
// idempotency key, attempts remain, and the caller's context is not done.
type RetryPolicy struct {
	// Attempts is the total number of executions, the first included; 0 or
	// 1 means no retry.
	Attempts int
	// BaseDelay is the delay before the second attempt; it doubles for each
	// later one, up to MaxDelay.
	BaseDelay time.Duration
	// MaxDelay caps the delay; 0 means no cap.
	MaxDelay time.Duration
	// Jitter in [0,1] spreads each delay by up to that fraction, randomly
	// below it ("full jitter" at 1).
	Jitter float64
	// Retryable overrides which codes are retried; nil means
	// errcode.Code.Retryable.
	Retryable func(errcode.Code) bool
}

// Delay returns the delay before attempt n (n >= 2; 0 for n < 2, a nil
// policy or BaseDelay <= 0): BaseDelay doubled for each attempt after the
// second, capped at MaxDelay (when > 0) and at the largest Duration, then
// shortened by a random fraction of up to Jitter (clamped to [0,1]) drawn
// from rnd (nil: math/rand/v2's global source). A seeded rnd makes the
// result deterministic. Safe for concurrent use if rnd is (or is nil).
func (p *RetryPolicy) Delay(n int, rnd *rand.Rand) time.Duration {
	if p == nil || n < 2 || p.BaseDelay <= 0 {
		return 0
	}
	d := p.BaseDelay
	for i := 2; i < n; i++ {
		if d > math.MaxInt64/2 {
			d = math.MaxInt64
			break
		}
		d *= 2
		if p.MaxDelay > 0 && d >= p.MaxDelay {
			break
		}
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	if j := min(max(p.Jitter, 0), 1); j > 0 {
		var f float64
		if rnd != nil {
			f = rnd.Float64()
		} else {
			f = rand.Float64()
		}
		d -= time.Duration(float64(d) * j * f)
	}
	return d
}

// Allows reports whether the policy retries code: Retryable(code) when set,
// otherwise [errcode.Code.Retryable]. A nil policy allows nothing.
func (p *RetryPolicy) Allows(code errcode.Code) bool {
	if p == nil {
		return false
	}
	if p.Retryable != nil {
		return p.Retryable(code)
	}
	return code.Retryable()
}
