package tool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
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
	// Provenance tells where, when and in which version a result was
	// obtained (a search result keeps its source address and
	// fetch time, a database result its object id and data version, a
	// write its business voucher). The evidence guard stores it with the
	// result's record, and the response contract reads its FetchedAt for
	// MaxAge. Nil means nothing beyond what the runtime knows (the time
	// it recorded the result, a write's idempotency key). A panic stores
	// nothing.
	Provenance func(result any) evidence.Provenance
	// MaxAge is how old a result may be and still count as the latest
	// data: a node that requires the tool's latest data
	// ([RequireLatest]) finds a result whose Provenance fetch time is
	// older insufficient (stale), with a next step asking for fresh data.
	// A result without a fetch time was fetched by the call itself. 0
	// means results never go stale. A catalog refuses a MaxAge without
	// Provenance.
	MaxAge time.Duration
	// Paging says how a result announces more pages. A node that requires
	// the tool's complete data ([RequireComplete]) finds a page followed
	// by more insufficient until the last one was read, with a next step
	// naming the cursor. Nil means results are complete.
	Paging *Paging
	// Async says how a result announces an accepted job that is not done
	// (an HTTP 202 with a job id, a status "running"): such a result is
	// never the job's completion (business status accepted), and the next
	// step names the tool that polls it. Nil means every result is final.
	Async *Async
	// Blocked recognises a result that is a wall instead of the content —
	// a captcha, a login page, a rate-limit page (a visit that
	// got a captcha page is blocked, never a successful body) — and says
	// which, with a detail for the model. A wall other than [NoWall] turns
	// the result into FAILED TOOL_BLOCKED. Nil means no check; a panic is
	// treated like one in Business.
	Blocked func(result any) (wall Wall, detail string)

	resolved *jsonschema.Resolved
}

// Paging is how a paged result says that more pages follow.
type Paging struct {
	// Next returns the cursor of the next page, or "" when result is the
	// last page. Required.
	Next func(result any) (cursor string)
	// Param is the tool's argument that takes the cursor. Required; a
	// top-level property of the tool's input schema.
	Param string
}

// Async is how a result says that the tool accepted a job that is not
// done yet.
type Async struct {
	// Pending reports whether result is an accepted job that is not done,
	// and the job's id. Required.
	Pending func(result any) (job string, pending bool)
	// Poll is the tool that reports the job's status (it may be the tool
	// itself, or a status tool with an Async contract of its own, whose
	// results stay pending until the job is done). Required; it must be
	// in the same catalog.
	Poll string
	// Param is Poll's argument that takes the job id. Required.
	Param string
}

// Wall is what blocked a tool from the content it was asked for. The zero
// value, [NoWall], means the result is no wall.
type Wall uint8

// The walls.
const (
	NoWall      Wall = 0 // the result is the content
	WallCaptcha Wall = 1 // a captcha page: a person must solve it
	WallLogin   Wall = 2 // a login page: a person must sign in
	WallRate    Wall = 3 // a rate-limit page: it clears later
)

// String returns none, captcha, login or rate_limit.
func (w Wall) String() string {
	switch w {
	case NoWall:
		return "none"
	case WallCaptcha:
		return "captcha"
	case WallLogin:
		return "login"
	case WallRate:
		return "rate_limit"
	}
	return "wall(" + strconv.Itoa(int(w)) + ")"
}

// IsValid reports whether w is one of the walls (NoWall included).
func (w Wall) IsValid() bool { return w <= WallRate }

// Requirement says what a node needs from a tool's results beyond what the
// tool's contract checks for every call: the latest data, every page. A
// node declares it per tool (react.Node.Require); the response contract
// applies it. The zero value requires nothing more. Values combine with |.
type Requirement uint8

// The requirements.
const (
	// RequireLatest: a result older than the contract's MaxAge is
	// insufficient (stale).
	RequireLatest Requirement = 1 << 0
	// RequireComplete: a page followed by more pages is insufficient
	// until the last page was read.
	RequireComplete Requirement = 1 << 1

	allRequirements = RequireLatest | RequireComplete
)

// Has reports whether r includes every requirement of q.
func (r Requirement) Has(q Requirement) bool { return r&q == q }

// IsValid reports whether r combines only defined requirements.
func (r Requirement) IsValid() bool { return r&^allRequirements == 0 }

// String returns the requirements joined by "+" ("latest", "complete",
// "latest+complete"), "none" for the zero value.
func (r Requirement) String() string {
	if r == 0 {
		return "none"
	}
	var parts []string
	if r.Has(RequireLatest) {
		parts = append(parts, "latest")
	}
	if r.Has(RequireComplete) {
		parts = append(parts, "complete")
	}
	if rest := r &^ allRequirements; rest != 0 {
		parts = append(parts, "requirement("+strconv.Itoa(int(rest))+")")
	}
	return strings.Join(parts, "+")
}

// MarshalText implements [encoding.TextMarshaler]; an undefined bit is an
// error.
func (r Requirement) MarshalText() ([]byte, error) {
	if !r.IsValid() {
		return nil, fmt.Errorf("tool: cannot marshal invalid requirement %d", uint8(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]: "none", or names
// joined by "+"; unknown names are rejected and r is unchanged.
func (r *Requirement) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "none" {
		*r = 0
		return nil
	}
	var v Requirement
	for _, part := range strings.Split(s, "+") {
		switch part {
		case "latest":
			v |= RequireLatest
		case "complete":
			v |= RequireComplete
		default:
			return fmt.Errorf("tool: unknown requirement %q (want latest, complete, or both joined by +)", part)
		}
	}
	*r = v
	return nil
}

// check reports a contract that cannot work: a field set without what it
// needs. prop reports whether the tool's input schema has a top-level
// property.
func (c *Contract) check(prop func(string) bool) error {
	if c.MaxAge < 0 {
		return errors.New("negative MaxAge")
	}
	if c.MaxAge > 0 && c.Provenance == nil {
		return errors.New("MaxAge needs Provenance to tell when a result was fetched")
	}
	if p := c.Paging; p != nil {
		if p.Next == nil || p.Param == "" {
			return errors.New("Paging needs Next and Param")
		}
		if !prop(p.Param) {
			return fmt.Errorf("Paging.Param %q is not a parameter of the input schema", p.Param)
		}
	}
	if a := c.Async; a != nil && (a.Pending == nil || a.Poll == "" || a.Param == "") {
		return errors.New("Async needs Pending, Poll and Param")
	}
	if c.Empty > EmptyAnswers {
		return fmt.Errorf("unknown Empty policy %d", c.Empty)
	}
	return nil
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
	// EmptyAllowed: an empty result is a legal answer, SUCCESS, that does
	// not serve the goal by itself (business status insufficient: "found
	// nothing"); the default.
	EmptyAllowed EmptyPolicy = 0
	// EmptyFails: an empty result is a business failure: FAILED
	// TOOL_RESULT_EMPTY.
	EmptyFails EmptyPolicy = 1
	// EmptyAnswers: an empty result is the answer (an empty
	// database result may be a legitimate fact — no open invoices, no
	// conflicting booking): SUCCESS that serves the goal (business status
	// evidence), and the model is told that nothing matching is the
	// answer.
	EmptyAnswers EmptyPolicy = 2
)

// SourceKind says where a parameter's value must come from.
type SourceKind uint8

// The source kinds.
const (
	FromAny    SourceKind = 0 // free: any value
	FromUser   SourceKind = 1 // the user's own words in this node
	FromResult SourceKind = 2 // a field of an earlier successful result of a given tool
	FromStep   SourceKind = 3 // an output an earlier step of a task verified and handed on
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
	case FromStep:
		return "step"
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
	// walked transparently ("sites.id" matches every element's id). For
	// FromStep, the output key of the step.
	Field string
	// Step is the task step whose verified output must hold the value
	// (FromStep only).
	Step string
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

// Step returns a source that requires the value to equal output key of
// the task step step, as that step verified it and handed it on (see
// package task): a value the step produced from checked evidence, and
// nothing else — not a value of this step's own tool results, not the
// user's words, not one the model wrote.
func Step(step, key string) Source {
	return Source{Kind: FromStep, Step: step, Field: key}
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
	case FromStep:
		if s.Step == "" || s.Field == "" {
			return errors.New("a step source needs a step and an output key")
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
