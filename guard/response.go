package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sync"
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
}

// ResponseContract returns the response-contract guard (see the package
// documentation for its place in the chain). It applies the called tool's
// tool.Contract to a SUCCESS from next — the tool returned, but did it
// succeed? — and passes everything else, and tools without a contract, on
// unchanged. In this order:
//
//  1. Shape: with Contract.Output, the result's JSON encoding must satisfy
//     the schema, else FAILED TOOL_RESULT_INVALID with the violation in the
//     reason and NEXT_RESULT_INVALID. A tool added to a tool.Catalog has
//     its schema resolved already; otherwise it is resolved on first use
//     (an unresolvable schema fails the same way).
//  2. Business: when Contract.Business reports a failure, FAILED
//     TOOL_BUSINESS_FAILED; the downstream code goes into the reason
//     ("business failure [system.50001]: <message>", REASON_BUSINESS_FAILED
//     when there is no downstream code; the message defaults to the tool
//     name) and the next step is NEXT_BUSINESS.
//  3. Empty: when the result is empty (Contract.IsEmpty, or
//     [DefaultIsEmpty]) and Contract.Empty is tool.EmptyFails, FAILED
//     TOOL_RESULT_EMPTY with NEXT_EMPTY; with tool.EmptyAllowed, the
//     default, the SUCCESS stands; with tool.EmptyAnswers the SUCCESS
//     stands and Sufficient is not asked (the empty result is the answer).
//  4. Sufficient: when Contract.Sufficient reports that the result does
//     not serve the goal, the SUCCESS stands and the call is noted in
//     call.Execution as insufficient, with the reason ("executed,
//     business not satisfied").
//
// Why this order: Business and IsEmpty read fields of the result and may
// only trust them once the result has the agreed shape, so the shape comes
// first (describe the whole response envelope in Output, failure bodies
// included, when Business reads an envelope). Business comes before Empty
// because a failure body usually carries no data: reported as "empty", the
// downstream code and message would be lost. A FAILED observation keeps the
// result as its data, so the evidence guard records the body.
//
// A panic in Business, IsEmpty or Sufficient (host code meeting data it did not
// expect) becomes FAILED TOOL_RESULT_INVALID; the host survives. The
// interceptor never returns an error of its own and is safe for concurrent
// use.
func ResponseContract(opts ResponseContractOptions) invoker.Interceptor {
	rc := &responseContract{cat: opts.Catalog, maxDetail: opts.MaxDetail}
	if rc.maxDetail == 0 {
		rc.maxDetail = DefaultMaxDetail
	}
	return rc.intercept
}

type responseContract struct {
	cat       *prompt.Catalog
	maxDetail int
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
	return rc.apply(call.Tool, obs, call.Execution), nil
}

func (rc *responseContract) apply(t *tool.Tool, obs observation.Observation, exec *invoker.Execution) (res observation.Observation) {
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
	if c.Empty == tool.EmptyFails || c.Empty == tool.EmptyAnswers {
		isEmpty := c.IsEmpty
		if isEmpty == nil {
			isEmpty = DefaultIsEmpty
		}
		if isEmpty(data) {
			if c.Empty == tool.EmptyAnswers {
				return obs // the empty result is the answer: nothing falls short
			}
			return observation.Failed(errcode.ToolResultEmpty,
				rc.cat.Reason(errcode.ToolResultEmpty, "tool", t.Name),
				rc.cat.Text(prompt.NextEmpty, "tool", t.Name), data)
		}
	}
	if c.Sufficient != nil {
		if ok, reason := c.Sufficient(data); !ok {
			exec.MarkInsufficient(reason)
		}
	}
	return obs
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
