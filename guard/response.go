package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// DefaultMaxDetail is the default length, in bytes, of the schema
// violation quoted in a TOOL_RESULT_INVALID reason.
const DefaultMaxDetail = 300

// ResponseContractOptions configures [ResponseContract]. The zero value is
// ready to use.
type ResponseContractOptions struct {
	// Catalog renders reasons and next steps; nil means English.
	Catalog *prompt.Catalog
	// MaxDetail caps the schema violation quoted in a TOOL_RESULT_INVALID
	// reason, in bytes; 0 means [DefaultMaxDetail], a negative value no
	// cap.
	MaxDetail int
	// Now is the clock a result's age is measured with (tool.Contract
	// MaxAge); nil means time.Now.
	Now func() time.Time
}

// ResponseContract returns the response-contract guard (see the package
// documentation for its place in the chain). It applies the called tool's
// tool.Contract, and what the node requires of the tool's results
// (invoker.Call.Require), to a SUCCESS from next — the tool returned, but
// did it succeed, and does the result serve the goal? — and passes
// everything else, and tools without a contract, on unchanged. In this
// order:
//
//  1. Shape: with Contract.Output, the result's JSON encoding must satisfy
//     the schema, else FAILED TOOL_RESULT_INVALID with the violation in the
//     reason and NEXT_RESULT_INVALID. A tool added to a tool.Catalog has
//     its schema resolved already; otherwise it is resolved on first use
//     (an unresolvable schema fails the same way).
//  2. Wall: when Contract.Blocked recognises a captcha, a login page or a
//     rate-limit page, FAILED TOOL_BLOCKED naming the wall, with
//     NEXT_BLOCKED (a person must get past it; calling again the same way
//     cannot help) or, for a rate-limit page, NEXT_BLOCKED_RATE (later can
//     help).
//  3. Business: when Contract.Business reports a failure, FAILED
//     TOOL_BUSINESS_FAILED; the downstream code goes into the reason
//     ("business failure [system.50001]: <message>", REASON_BUSINESS_FAILED
//     when there is no downstream code; the message defaults to the tool
//     name) and the next step is NEXT_BUSINESS.
//  4. Empty: when the result is empty (Contract.IsEmpty, or
//     [DefaultIsEmpty]): with tool.EmptyFails, FAILED TOOL_RESULT_EMPTY
//     with NEXT_EMPTY; with tool.EmptyAnswers the SUCCESS stands as the
//     answer (noted in call.Execution as answered); with
//     tool.EmptyAllowed, the default, the SUCCESS stands and serves no
//     goal by itself.
//  5. Accepted: when Contract.Async reports a pending job, the SUCCESS
//     stands and the call is noted in call.Execution as pending: the job
//     is not done, and the next step names the poll tool.
//  6. Stale: when the node requires the latest data (tool.RequireLatest)
//     and the result's fetch time (Contract.Provenance) is older than
//     Contract.MaxAge, the SUCCESS stands and the call is noted
//     insufficient; calling again can help.
//  7. More pages: when the node requires complete data
//     (tool.RequireComplete) and Contract.Paging names a next page, the
//     SUCCESS stands and the call is noted insufficient until the last
//     page; the next step names the cursor.
//  8. Sufficient: when Contract.Sufficient reports that the result does
//     not serve the goal, the SUCCESS stands and the call is noted
//     insufficient, with the reason ("executed, business not
//     satisfied", docs/evaluation.md).
//
// The business verdict reaches the model (the business status, its reason
// and whether a retry can help; docs/observation-contract.md): a SUCCESS of steps 4 to 8 is
// answered with its message followed by BUSINESS_NOTE — "business status
// insufficient: <reason>; calling it again with the same arguments cannot
// help. Next: <next step>" — in the catalog's language; a FAILED carries
// them in its reason and next step. The first of steps 4 to 8 that applies
// decides.
//
// Why this order: Blocked, Business and IsEmpty read fields of the result
// and may only trust them once the result has the agreed shape, so the
// shape comes first (describe the whole response envelope in Output,
// failure bodies and walls included, when Business reads an envelope). A
// wall comes before Business: a captcha page is no business answer.
// Business comes before Empty because a failure body usually carries no
// data: reported as "empty", the downstream code and message would be
// lost. A FAILED observation keeps the result as its data, so the evidence
// guard records the body.
//
// A panic in a contract function (host code meeting data it did not
// expect) becomes FAILED TOOL_RESULT_INVALID; the host survives. The
// interceptor never returns an error of its own and is safe for concurrent
// use.
func ResponseContract(opts ResponseContractOptions) invoker.Interceptor {
	rc := &responseContract{cat: opts.Catalog, maxDetail: opts.MaxDetail, now: opts.Now}
	if rc.maxDetail == 0 {
		rc.maxDetail = DefaultMaxDetail
	}
	if rc.now == nil {
		rc.now = time.Now
	}
	return rc.intercept
}

type responseContract struct {
	cat       *prompt.Catalog
	maxDetail int
	now       func() time.Time
	schemas   sync.Map // *tool.Contract -> resolvedSchema, for contracts outside a catalog
}

type resolvedSchema struct {
	rs  *jsonschema.Resolved
	err error
}

func (rc *responseContract) intercept(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
	obs, err := next(ctx, call)
	if err != nil || obs.Outcome() != outcome.Success || call.Tool == nil || call.Tool.Contract == nil {
		return obs, err
	}
	return rc.apply(call.Tool, obs, call.Require, call.Execution), nil
}

func (rc *responseContract) apply(t *tool.Tool, obs observation.Observation, need tool.Requirement, exec *invoker.Execution) (res observation.Observation) {
	c := t.Contract
	data := obs.Data()
	defer func() {
		if recover() != nil {
			res = rc.invalid(t.Name, "the contract check could not read the result", data)
		}
	}()
	if c.Output != nil {
		if detail, ok, cause := rc.checkShape(c, data); !ok {
			return rc.invalid(t.Name, detail, data).WithCause(cause)
		}
	}
	if c.Blocked != nil {
		if wall, detail := c.Blocked(data); wall != tool.NoWall {
			return rc.blocked(t.Name, wall, detail, data)
		}
	}
	if c.Business != nil {
		if failed, downstream, message := c.Business(data); failed {
			message, downstream = tool.ClipDetail(message), tool.ClipDetail(downstream)
			if message == "" {
				message = t.Name
			}
			var reason string
			if downstream != "" {
				reason = rc.cat.Reason(errcode.ToolBusinessFailed, "code", downstream, "detail", message, "tool", t.Name)
			} else {
				reason = rc.cat.Text(prompt.ReasonBusinessFailed, "detail", message, "tool", t.Name)
			}
			return observation.Failed(errcode.ToolBusinessFailed, reason, rc.cat.Text(prompt.NextBusiness, "tool", t.Name), data)
		}
	}
	isEmpty := c.IsEmpty
	if isEmpty == nil {
		isEmpty = DefaultIsEmpty
	}
	if isEmpty(data) {
		switch c.Empty {
		case tool.EmptyFails:
			return observation.Failed(errcode.ToolResultEmpty,
				rc.cat.Reason(errcode.ToolResultEmpty, "tool", t.Name),
				rc.cat.Text(prompt.NextEmpty, "tool", t.Name), data)
		case tool.EmptyAnswers:
			exec.MarkAnswered()
			return rc.note(obs, prompt.StatusAnswered, rc.cat.Text(prompt.ReasonEmptyAnswer, "tool", t.Name),
				prompt.RetryUseless, rc.cat.Text(prompt.NextEmptyAnswer, "tool", t.Name))
		default: // tool.EmptyAllowed: a legal answer that serves no goal by itself
			return rc.note(obs, prompt.StatusInsufficient, rc.cat.Text(prompt.ReasonEmptyResult, "tool", t.Name),
				prompt.RetryUseless, rc.cat.Text(prompt.NextEmpty, "tool", t.Name))
		}
	}
	if a := c.Async; a != nil {
		if job, pending := a.Pending(data); pending {
			job = tool.ClipDetail(job)
			exec.MarkPending(job)
			return rc.note(obs, prompt.StatusAccepted, rc.cat.Text(prompt.ReasonAccepted, "tool", t.Name, "job", job),
				prompt.RetryHelps, rc.cat.Text(prompt.NextPoll, "poll", a.Poll, "param", a.Param, "job", strconv.Quote(job)))
		}
	}
	if need.Has(tool.RequireLatest) && c.MaxAge > 0 && c.Provenance != nil {
		if fetched := c.Provenance(data).FetchedAt; !fetched.IsZero() {
			if age := rc.now().Sub(fetched); age > c.MaxAge {
				reason := rc.cat.Text(prompt.ReasonStale, "tool", t.Name, "age", age.Round(time.Second).String(), "max", c.MaxAge.String())
				exec.MarkInsufficient(reason)
				return rc.note(obs, prompt.StatusInsufficient, reason, prompt.RetryHelps, rc.cat.Text(prompt.NextStale, "tool", t.Name))
			}
		}
	}
	if p := c.Paging; p != nil && need.Has(tool.RequireComplete) {
		if cursor := p.Next(data); cursor != "" {
			reason := rc.cat.Text(prompt.ReasonMorePages, "tool", t.Name)
			exec.MarkInsufficient(reason)
			return rc.note(obs, prompt.StatusInsufficient, reason, prompt.RetryUseless,
				rc.cat.Text(prompt.NextMorePages, "tool", t.Name, "param", p.Param, "cursor", strconv.Quote(tool.ClipDetail(cursor))))
		}
	}
	if c.Sufficient != nil {
		if ok, reason := c.Sufficient(data); !ok {
			exec.MarkInsufficient(reason)
			if reason == "" {
				reason = rc.cat.Text(prompt.StatusInsufficient)
			}
			return rc.note(obs, prompt.StatusInsufficient,
				rc.cat.Text(prompt.ReasonInsufficient, "tool", t.Name, "detail", tool.ClipDetail(reason)),
				prompt.RetryUseless, rc.cat.Text(prompt.NextInsufficient, "tool", t.Name))
		}
	}
	return obs
}

// note returns the SUCCESS obs with the business verdict (status, reason,
// whether a retry helps, next step) after its message: what the model
// reads of a result that executed and does not serve the goal as it is.
func (rc *responseContract) note(obs observation.Observation, status prompt.Key, reason string, retry prompt.Key, next string) observation.Observation {
	note := rc.cat.Text(prompt.BusinessNote, "status", rc.cat.Text(status), "reason", reason, "retry", rc.cat.Text(retry), "next", next)
	msg := obs.Reason()
	if msg != "" {
		msg += "\n"
	}
	return observation.Success(msg+note, obs.Data())
}

// blocked is the FAILED TOOL_BLOCKED of a result that is a wall.
func (rc *responseContract) blocked(name string, wall tool.Wall, detail string, data any) observation.Observation {
	var what prompt.Key
	next := rc.cat.Text(prompt.NextBlocked, "tool", name)
	switch wall {
	case tool.WallLogin:
		what = prompt.WallLogin
	case tool.WallRate:
		what = prompt.WallRate
		next = rc.cat.Text(prompt.NextBlockedRate, "tool", name)
	default: // tool.WallCaptcha, and any value a host made up: a person must look
		what = prompt.WallCaptcha
	}
	detail = tool.ClipDetail(detail)
	if detail == "" {
		detail = name
	}
	return observation.Failed(errcode.ToolBlocked,
		rc.cat.Reason(errcode.ToolBlocked, "tool", name, "wall", rc.cat.Text(what), "detail", detail), next, data)
}

func (rc *responseContract) invalid(name, detail string, data any) observation.Observation {
	return observation.Failed(errcode.ToolResultInvalid,
		rc.cat.Reason(errcode.ToolResultInvalid, "tool", name, "detail", detail),
		rc.cat.Text(prompt.NextResultInvalid, "tool", name), data)
}

// checkShape validates the JSON encoding of data against c's output
// schema. On failure it returns the detail for the model (the location and
// tool.SchemaDetail's words, never Go renderings of the result) and the
// raw error for the log.
func (rc *responseContract) checkShape(c *tool.Contract, data any) (string, bool, error) {
	rs := c.ResolvedOutput()
	if rs == nil {
		v, ok := rc.schemas.Load(c)
		if !ok {
			r, err := c.Output.Resolve(nil)
			v, _ = rc.schemas.LoadOrStore(c, resolvedSchema{r, err})
		}
		s := v.(resolvedSchema)
		if s.err != nil {
			return "the output schema cannot be used", false, s.err
		}
		rs = s.rs
	}
	var b []byte
	if raw, ok := data.(json.RawMessage); ok {
		b = raw
	} else {
		var err error
		if b, err = json.Marshal(data); err != nil {
			return "the result cannot be encoded as JSON", false, err
		}
	}
	var instance any
	if err := json.Unmarshal(b, &instance); err != nil {
		return "the result is not JSON", false, err
	}
	if err := rs.Validate(instance); err != nil {
		path, detail := splitValidation(err.Error())
		detail = tool.SchemaDetail(detail)
		if path != "root" {
			detail = path + ": " + detail
		}
		return rc.clip(detail), false, err
	}
	return "", true, nil
}

// clip shortens s to the configured detail length on a rune boundary.
func (rc *responseContract) clip(s string) string {
	if rc.maxDetail < 0 || len(s) <= rc.maxDetail {
		return s
	}
	cut := rc.maxDetail
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// DefaultIsEmpty is the emptiness test of a response contract without its
// own IsEmpty: true for nil, a nil pointer or interface, an empty string,
// slice, array or map, and for a [json.RawMessage] holding nothing, null,
// "", [] or {}. Anything else, including a struct of zero fields' values,
// is not empty.
func DefaultIsEmpty(result any) bool {
	if raw, ok := result.(json.RawMessage); ok {
		return emptyJSON(raw)
	}
	if result == nil {
		return true
	}
	v := reflect.ValueOf(result)
	switch v.Kind() { //nolint:exhaustive // other kinds are never empty
	case reflect.String, reflect.Slice, reflect.Array, reflect.Map:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// emptyJSON reports whether raw holds nothing, null, "", [] or {} (with any
// white space), without decoding it: a result's emptiness is judged for
// every successful call, and a large payload must not be parsed for it.
// Bytes that are not valid JSON are not empty.
func emptyJSON(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return true
	case string(raw) == "null", string(raw) == `""`:
		return true
	case raw[0] == '[' && raw[len(raw)-1] == ']', raw[0] == '{' && raw[len(raw)-1] == '}':
		return len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
	}
	return false
}
