package react

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/internal/jsonvalid"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// The names of the built-in control tools. They are always visible to the
// model (builtin_output_set only when the node declares outputs) and must
// not be used as catalog tool names in a node.
const (
	// ToolApproval suspends the run for the user's approval of the write
	// call the write gate deferred. Arguments: tool (the gated tool's
	// name), reason.
	ToolApproval = "builtin_node_approval"
	// ToolFollowUp suspends the run for the user's answer. Arguments:
	// question.
	ToolFollowUp = "builtin_node_follow_up"
	// ToolFail ends the run as failed. Arguments: reason.
	ToolFail = "builtin_node_fail"
	// ToolFinish ends the run as finished once every required output is
	// set. Arguments: summary (optional).
	ToolFinish = "builtin_node_finish"
	// ToolOutputSet sets a declared output. Arguments: key, value,
	// sourceType (user, tool_result, model), sourceRef.
	ToolOutputSet = "builtin_output_set"
)

func isBuiltin(name string) bool {
	switch name {
	case ToolApproval, ToolFollowUp, ToolFail, ToolFinish, ToolOutputSet:
		return true
	}
	return false
}

// Builtins returns the names of the built-in tools in the order they are
// offered to the model.
func Builtins() []string {
	return []string{ToolApproval, ToolFollowUp, ToolOutputSet, ToolFinish, ToolFail}
}

type approvalArgs struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason,omitempty"`
}

type followUpArgs struct {
	Question string `json:"question"`
}

type failArgs struct {
	Reason string `json:"reason"`
}

type finishArgs struct {
	Summary string `json:"summary,omitempty"`
}

type outputSetArgs struct {
	Key        string          `json:"key"`
	Value      json.RawMessage `json:"value"`
	SourceType string          `json:"sourceType"`
	SourceRef  string          `json:"sourceRef,omitempty"`
}

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

// builtinSchemas are the input schemas shown to the model, encoded once.
var builtinSchemas = func() map[string]json.RawMessage {
	schemas := map[string]*jsonschema.Schema{
		ToolApproval: object([]string{"tool"}, map[string]*jsonschema.Schema{
			"tool":   str("name of the write tool whose call is waiting for approval"),
			"reason": str("why the write is needed, shown to the user"),
		}),
		ToolFollowUp: object([]string{"question"}, map[string]*jsonschema.Schema{
			"question": str("the question for the user"),
		}),
		ToolFail: object([]string{"reason"}, map[string]*jsonschema.Schema{
			"reason": str("why the task cannot be done"),
		}),
		ToolFinish: object(nil, map[string]*jsonschema.Schema{
			"summary": str("a short summary of the result for the user"),
		}),
		ToolOutputSet: object([]string{"key", "value", "sourceType"}, map[string]*jsonschema.Schema{
			"key":        str("a declared output key"),
			"value":      {Description: "the value, exactly as it appears in its source"},
			"sourceType": {Type: "string", Enum: []any{"user", "tool_result", "model"}, Description: "where the value comes from"},
			"sourceRef":  str("for tool_result: the call id of the successful result holding the value"),
		}),
	}
	out := make(map[string]json.RawMessage, len(schemas))
	for name, s := range schemas {
		b, err := json.Marshal(s)
		if err != nil {
			panic("react: built-in schema " + name + ": " + err.Error())
		}
		out[name] = b
	}
	return out
}()

var builtinDescriptions = map[string]prompt.Key{
	ToolApproval:  prompt.ToolApprovalDescription,
	ToolFollowUp:  prompt.ToolFollowUpDescription,
	ToolFail:      prompt.ToolFailDescription,
	ToolFinish:    prompt.ToolFinishDescription,
	ToolOutputSet: prompt.ToolOutputSetDescription,
}

// builtinSpecs returns the specs of the built-in tools a node sees: without
// builtin_output_set unless the node declares outputs. A Loop renders them
// once (Loop.builtinSpecs).
func builtinSpecs(cat *prompt.Catalog, withOutputs bool) []ToolSpec {
	var specs []ToolSpec
	for _, name := range Builtins() {
		if name == ToolOutputSet && !withOutputs {
			continue
		}
		specs = append(specs, ToolSpec{Name: name, Description: cat.Text(builtinDescriptions[name]), InputSchema: builtinSchemas[name]})
	}
	return specs
}

// effectKind is what an accepted built-in call does to the run.
type effectKind uint8

const (
	effectNone    effectKind = iota // output set: the run goes on
	effectFinish                    // the node finished
	effectFail                      // the node failed
	effectSuspend                   // the run suspends
)

// effect is what a built-in call did, filled by the tool function and read
// by the loop after the invoker returned.
type effect struct {
	kind       effectKind
	message    string       // the SUCCESS message for the model
	summary    string       // finish
	reason     string       // fail
	suspension *Suspension  // suspend
	verdict    *StepVerdict // the step verifier's verdict on a finish
	infra      error        // a store failed: not an outcome, the run is interrupted
}

// errInfra is what a built-in tool function returns to the invoker when a
// store failed; the loop reads the real error from the effect.
var errInfra = errors.New("react: store failure")

// builtinTool builds the tool value of one built-in call. Its Func writes
// what it did into eff.
func (r *run) builtinTool(name string, eff *effect) *tool.Tool {
	return &tool.Tool{
		Name:   name,
		Effect: tool.Read,
		Func: func(ctx context.Context, req tool.Request) (any, error) {
			err := r.builtin(ctx, name, req.CallID, req.Args, eff)
			if eff.infra != nil {
				return nil, errInfra
			}
			return nil, err
		},
	}
}

// decodeArgs decodes a built-in's arguments; empty arguments are {}.
func decodeArgs(name string, raw json.RawMessage, v any) error {
	switch string(bytes.TrimSpace(raw)) {
	case "", "{}": // v stays its zero value, as decoding {} leaves it
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &tool.ArgsError{Tool: name, Err: err}
	}
	return nil
}

// builtin runs one built-in tool. A rejection is a *tool.Rejection; an
// argument that does not decode is a *tool.ArgsError; a store failure is
// put in eff.infra.
func (r *run) builtin(ctx context.Context, name, callID string, raw json.RawMessage, eff *effect) error {
	switch name {
	case ToolApproval:
		var a approvalArgs
		if err := decodeArgs(name, raw, &a); err != nil {
			return err
		}
		return r.approval(ctx, callID, a, eff)
	case ToolFollowUp:
		var a followUpArgs
		if err := decodeArgs(name, raw, &a); err != nil {
			return err
		}
		return r.followUp(ctx, callID, a, eff)
	case ToolFail:
		var a failArgs
		if err := decodeArgs(name, raw, &a); err != nil {
			return err
		}
		eff.kind, eff.reason = effectFail, strings.TrimSpace(a.Reason)
		eff.message = r.cat.Text(prompt.ResultNodeFailed, "reason", eff.reason)
		return nil
	case ToolFinish:
		var a finishArgs
		if err := decodeArgs(name, raw, &a); err != nil {
			return err
		}
		return r.finish(ctx, a, eff)
	case ToolOutputSet:
		var a outputSetArgs
		if err := decodeArgs(name, raw, &a); err != nil {
			return err
		}
		return r.outputSet(ctx, a, eff)
	}
	return errors.New("react: unknown built-in " + name) // unreachable: callers check isBuiltin
}

// approval implements builtin_node_approval (§7.3: "申请确认的工具名与被拦下的
// 不一致：下一步给出实际被拦下的写工具名（APPROVAL_TOOL_MISMATCH）；没有被拦下记录
// 或申请的不是写工具：下一步为先直接调用写工具（APPROVAL_NOT_GATED）"). The order
// of checks: no call waiting for approval → APPROVAL_NOT_GATED; a tool
// the node knows not to be a write (a visible read tool, a built-in) →
// APPROVAL_NOT_GATED, even while a write waits, as the specification
// says; any other name than the waiting call's tool (a typo, an unknown or
// invisible tool, another write) → APPROVAL_TOOL_MISMATCH naming the
// waiting tool; otherwise the run suspends for that exact call.
func (r *run) approval(ctx context.Context, callID string, a approvalArgs, eff *effect) error {
	named := strings.TrimSpace(a.Tool)
	g, ok, err := r.l.approvals.Gated(ctx, r.id)
	if err != nil {
		eff.infra = err
		return nil
	}
	if !ok || r.notAWrite(named) {
		return tool.Reject(errcode.ApprovalNotGated,
			r.cat.Reason(errcode.ApprovalNotGated, "tool", named),
			r.cat.Text(prompt.NextCallWriteFirst))
	}
	if named != g.Tool {
		return tool.Reject(errcode.ApprovalToolMismatch,
			r.cat.Reason(errcode.ApprovalToolMismatch, "tool", named, "gated", g.Tool),
			r.cat.Text(prompt.NextApprovalTool, "gated", g.Tool))
	}
	eff.kind = effectSuspend
	eff.suspension = &Suspension{
		Kind:   SuspendApproval,
		CallID: callID,
		Approval: &PendingWrite{
			CallID:      g.CallID,
			Tool:        g.Tool,
			Args:        jsonOrText(g.Args),
			Fingerprint: g.Fingerprint,
		},
		Reason: strings.TrimSpace(a.Reason),
	}
	return nil
}

// notAWrite reports whether name is a tool the node knows not to be a
// write: a visible read tool or a built-in tool. An unknown name is not
// known either way (it may be a misspelt write).
func (r *run) notAWrite(name string) bool {
	if isBuiltin(name) {
		return true
	}
	t, ok := r.visible[name]
	return ok && !t.Effect.IsWrite()
}

// followUp implements builtin_node_follow_up; see the package
// documentation for the order of checks and the detection rules.
func (r *run) followUp(ctx context.Context, callID string, a followUpArgs, eff *effect) error {
	q := strings.TrimSpace(a.Question)
	if q == "" {
		return r.emptyArg(ToolFollowUp, "question")
	}
	if ans, ok := r.answered[normalize(q)]; ok {
		return tool.Reject(errcode.FollowUpAnswered,
			r.cat.Reason(errcode.FollowUpAnswered, "answer", ans),
			r.cat.Text(prompt.NextUseAnswer, "answer", ans))
	}
	gated, err := r.writeGated(ctx)
	if err != nil {
		eff.infra = err
		return nil
	}
	switch ungrounded(q, r.userTexts, r.followUpContext(gated)) {
	case groundConfirmsWrite:
		return tool.Reject(errcode.FollowUpUngrounded,
			r.cat.Reason(errcode.FollowUpUngrounded, "detail", r.cat.Text(prompt.ReasonConfirmsWrite)),
			r.cat.Text(prompt.NextWriteDirectly))
	case groundEchoesUser:
		next := r.cat.Text(prompt.NextUseUserWords)
		if r.seesWrite {
			next = r.cat.Text(prompt.NextWriteDirectly)
		}
		return tool.Reject(errcode.FollowUpUngrounded,
			r.cat.Reason(errcode.FollowUpUngrounded, "detail", r.cat.Text(prompt.ReasonEchoesUser)), next)
	case grounded:
	}
	eff.kind = effectSuspend
	eff.suspension = &Suspension{Kind: SuspendFollowUp, CallID: callID, Question: q}
	return nil
}

// writeGated reports whether a write call of the run waits for approval.
func (r *run) writeGated(ctx context.Context) (bool, error) {
	_, ok, err := r.l.approvals.Gated(ctx, r.id)
	return ok, err
}

func (r *run) emptyArg(toolName, field string) *tool.Rejection {
	return tool.Reject(errcode.ArgRejected,
		r.cat.Reason(errcode.ArgRejected, "tool", toolName, "field", field, "detail", r.cat.Text(prompt.ReasonArgumentEmpty)),
		r.cat.Text(prompt.NextFixArgs, "tool", toolName, "field", field, "expect", r.cat.Text(prompt.ExpectNonEmptyText)))
}

// finish implements builtin_node_finish: refused while required outputs
// are missing (FINISH_OUTPUTS_MISSING) or while the step verifier does not
// find the step satisfied (its code, or STEP_NOT_SATISFIED).
func (r *run) finish(ctx context.Context, a finishArgs, eff *effect) error {
	var missing []string
	for _, k := range r.required {
		if _, ok := r.outputs[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		keys := r.cat.List(missing)
		return tool.Reject(errcode.FinishOutputsMissing,
			r.cat.Reason(errcode.FinishOutputsMissing, "keys", keys),
			r.cat.Text(prompt.NextFinishMissing, "keys", keys))
	}
	summary := strings.TrimSpace(a.Summary)
	v, rej := r.verifyEnd(ctx, summary, eff)
	eff.verdict = v
	if rej != nil {
		return rej
	}
	if eff.infra != nil {
		return nil
	}
	eff.kind, eff.summary = effectFinish, summary
	eff.message = r.cat.Text(prompt.ResultNodeFinished)
	return nil
}

// outputSet implements builtin_output_set with the checks of §7.3, in
// this order, each with its own code: the key is declared
// (OUTPUT_KEY_UNDECLARED); the source type is given and known
// (OUTPUT_SOURCE_TYPE_MISSING); the key accepts it
// (OUTPUT_SOURCE_TYPE_NOT_ACCEPTED); a value is given (ARG_REJECTED);
// for tool_result, sourceRef is given (OUTPUT_SOURCE_REF_MISSING) and names
// a call with a successful recorded result (OUTPUT_SOURCE_REF_UNKNOWN) that
// holds the value (OUTPUT_VALUE_MISMATCH): at the output's declared Field,
// and from its declared Tool, when it declares them, anywhere in the
// result otherwise; for user, the value appears in
// the user's words (OUTPUT_VALUE_MISMATCH). For an optional output every
// next step also says it may be skipped (NEXT_OUTPUT_OPTIONAL).
func (r *run) outputSet(ctx context.Context, a outputSetArgs, eff *effect) error {
	key := strings.TrimSpace(a.Key)
	o, ok := r.node.output(key)
	if !ok {
		keys := make([]string, len(r.node.Outputs))
		for i, o := range r.node.Outputs {
			keys[i] = o.Key
		}
		return tool.Reject(errcode.OutputKeyUndeclared,
			r.cat.Reason(errcode.OutputKeyUndeclared, "key", key),
			r.cat.Text(prompt.NextOutputKeys, "keys", r.cat.List(keys)))
	}
	reject := func(code errcode.Code, reason, next string) error {
		if !o.Required {
			next = r.join(next, r.cat.Text(prompt.NextOutputOptional, "key", key))
		}
		return tool.Reject(code, reason, next)
	}
	accepted := o.accepted()
	names := make([]string, len(accepted))
	for i, s := range accepted {
		names[i] = s.String()
	}
	sourcesNext := r.cat.Text(prompt.NextOutputSourceTypes, "key", key, "sources", r.cat.List(names))
	given := strings.TrimSpace(a.SourceType)
	st, err := ParseSourceType(given)
	if err != nil {
		if given == "" {
			given = `""`
		}
		return reject(errcode.OutputSourceTypeMissing, r.cat.Reason(errcode.OutputSourceTypeMissing, "key", key, "source", given), sourcesNext)
	}
	if !o.accepts(st) {
		return reject(errcode.OutputSourceTypeNotAccepted, r.cat.Reason(errcode.OutputSourceTypeNotAccepted, "key", key, "source", given), sourcesNext)
	}
	value := strings.TrimSpace(string(a.Value))
	if value == "" || value == "null" {
		rej := r.emptyArg(ToolOutputSet, "value")
		return reject(rej.Code(), rej.Reason(), rej.Next())
	}
	if rej := r.checkType(key, value); rej != nil {
		return reject(rej.Code(), rej.Reason(), rej.Next())
	}
	ref := strings.TrimSpace(a.SourceRef)
	switch st {
	case SourceToolResult:
		if ref == "" {
			return reject(errcode.OutputSourceRefMissing, r.cat.Reason(errcode.OutputSourceRefMissing, "key", key), r.cat.Text(prompt.NextOutputSourceRef))
		}
		rec, found, err := r.l.lookup.Lookup(ctx, r.id, ref)
		if err != nil {
			eff.infra = err
			return nil
		}
		if !found || rec.Outcome != outcome.Success {
			return reject(errcode.OutputSourceRefUnknown, r.cat.Reason(errcode.OutputSourceRefUnknown, "key", key, "ref", ref), r.cat.Text(prompt.NextOutputSourceRef))
		}
		matched := false
		switch {
		case o.Tool != "" && rec.Tool != o.Tool:
		case o.sourced():
			matched = holdsAt(rec.Payload, o.Field, []byte(value))
		default:
			matched = holds(rec.Payload, []byte(value))
		}
		if !matched {
			return reject(errcode.OutputValueMismatch, r.cat.Reason(errcode.OutputValueMismatch, "key", key, "ref", ref), r.cat.Text(prompt.NextOutputValue, "ref", ref))
		}
	case SourceUser:
		words := r.cat.Text(prompt.SourceUser)
		text, scalar := evidence.ScalarText([]byte(value))
		said := false
		if scalar {
			var err error
			if said, err = r.l.lookup.UserSaid(ctx, r.id, text); err != nil {
				eff.infra = err
				return nil
			}
		}
		if !said {
			return reject(errcode.OutputValueMismatch, r.cat.Reason(errcode.OutputValueMismatch, "key", key, "ref", words), r.cat.Text(prompt.NextOutputValue, "ref", words))
		}
		ref = ""
	case SourceModel:
		ref = ""
	}
	r.setOutput(key, OutputValue{Value: compact([]byte(value)), Source: st, Ref: ref})
	eff.message = r.cat.Text(prompt.ResultOutputSet, "key", key)
	return nil
}

// join appends a second next step to a first one.
func (r *run) join(a, b string) string {
	if r.cat.Lang() == prompt.Chinese {
		return strings.TrimRight(a, "。；") + "；" + b
	}
	return strings.TrimRight(a, ".; ") + "; " + b
}

// builtinObservation turns what the invoker returned for a built-in call
// into the observation the model sees: the invoker classifies rejections,
// argument errors and panics; a success carries the built-in's own
// message.
func builtinObservation(obs observation.Observation, eff *effect) observation.Observation {
	if obs.Outcome() == outcome.Success {
		return observation.Success(eff.message, nil)
	}
	return obs
}

// jsonOrText returns raw when it is valid JSON (or empty), else raw as a
// JSON string, so that it can always be encoded.
func jsonOrText(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	if jsonvalid.Valid(raw) {
		return append(json.RawMessage(nil), raw...)
	}
	b, _ := json.Marshal(string(raw))
	return b
}
