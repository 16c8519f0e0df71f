package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// This file holds what a run does as one step of a task of several
// (package task builds on it): a step verifier that runs after each tool
// result and before builtin_node_finish is accepted, the step's status,
// the verified outputs of earlier steps handed to the run as sources, the
// statuses of the task's steps shown to its final step, and host state
// sealed into the run's snapshots.

// StepStatus is the status of one step of a task ("a step's
// status may be pending, in progress, satisfied, insufficient, blocked or
// failed; only when the step's verification passes does the planner mark
// it done"). The zero value, [StepNone], is no status: a verifier that
// has no opinion returns it.
type StepStatus uint8

// The step statuses.
const (
	// StepNone: no status (a verifier's "no opinion").
	StepNone StepStatus = 0
	// StepPending: the step has not started.
	StepPending StepStatus = 1
	// StepInProgress: the step's run has started and not ended (it may be
	// suspended or interrupted).
	StepInProgress StepStatus = 2
	// StepSatisfied: the step was verified as done: its verifier said so
	// when the model finished it, or, without a verifier, its completion
	// conditions hold (the run's goal is met: every required output set
	// from a checked source).
	StepSatisfied StepStatus = 3
	// StepInsufficient: the step ended, or a check found, that what it has
	// does not meet its goal (an empty or stale result, a missing page, a
	// finish on the model's word alone).
	StepInsufficient StepStatus = 4
	// StepBlocked: a wall (a captcha, a login page, a rate limit) or a
	// verifier stopped the step; a person or time may clear it.
	StepBlocked StepStatus = 5
	// StepFailed: the step's run failed (the model gave up, a limit was
	// hit) or a verifier found it cannot be done.
	StepFailed StepStatus = 6

	maxStepStatus = StepFailed
)

var stepStatusNames = [...]string{
	StepNone:         "none",
	StepPending:      "pending",
	StepInProgress:   "in_progress",
	StepSatisfied:    "satisfied",
	StepInsufficient: "insufficient",
	StepBlocked:      "blocked",
	StepFailed:       "failed",
}

var stepStatusKeys = [...]prompt.Key{
	StepPending:      prompt.StepPending,
	StepInProgress:   prompt.StepInProgress,
	StepSatisfied:    prompt.StepSatisfied,
	StepInsufficient: prompt.StepInsufficient,
	StepBlocked:      prompt.StepBlocked,
	StepFailed:       prompt.StepFailed,
}

// String returns the status's snake_case name (e.g. in_progress).
func (s StepStatus) String() string {
	if s <= maxStepStatus {
		return stepStatusNames[s]
	}
	return "step_status(" + strconv.Itoa(int(s)) + ")"
}

// IsValid reports whether s is a defined status ([StepNone] included).
func (s StepStatus) IsValid() bool { return s <= maxStepStatus }

// Text returns the status in the words of catalog c (nil: English), as the
// model reads it: "in progress", "进行中".
func (s StepStatus) Text(c *prompt.Catalog) string {
	if s == StepNone || !s.IsValid() {
		return s.String()
	}
	return c.Text(stepStatusKeys[s])
}

// MarshalText implements [encoding.TextMarshaler]; an undefined value is an
// error.
func (s StepStatus) MarshalText() ([]byte, error) {
	if !s.IsValid() {
		return nil, fmt.Errorf("react: cannot marshal invalid step status %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and s is unchanged.
func (s *StepStatus) UnmarshalText(b []byte) error {
	for v := StepNone; v <= maxStepStatus; v++ {
		if stepStatusNames[v] == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("react: unknown step status %q", b)
}

// Check is what a step verifier is asked about: the run so far, and either
// the call just processed or the model's finish. The verifier must treat
// it as read-only: its slices and maps share memory with the run.
type Check struct {
	// Run and Node are the run's id and its node's name.
	Run, Node string
	// End reports a check at the step's end: the model called
	// builtin_node_finish (every required output is set) with Summary.
	End     bool
	Summary string
	// Call is the report of the catalog call just processed, with its
	// three layers (nil at the end), and Result the JSON of its result
	// (nil for a failure).
	Call   *CallReport
	Result json.RawMessage
	// Calls are the reports of every processed call of the run, the
	// current one included.
	Calls []CallReport
	// Outputs are the outputs set so far.
	Outputs map[string]OutputValue
	// Transcript is the run's history (the user's task, the turns and the
	// tool messages), for a verifier that reads results as the model saw
	// them (a model judge).
	Transcript []Message
	// HostState is the run's host state ([WithHostState]), as sealed;
	// nil without one.
	HostState []byte
}

// StepVerdict is a step verifier's answer.
type StepVerdict struct {
	// Status is what the verifier found: [StepSatisfied] when the step's
	// goal is met; [StepInsufficient], [StepBlocked] or [StepFailed] when
	// it is not (with Reason); [StepNone] for no opinion. At the end, only
	// StepSatisfied lets the finish through; StepNone leaves the step to
	// its completion conditions.
	Status StepStatus `json:"status"`
	// Reason says what the verifier found, for the model and the reports
	// (its first line, at most tool.MaxDetail bytes, is kept).
	Reason string `json:"reason,omitempty"`
	// Next is what the model must do about it; "" means
	// NEXT_STEP_UNSATISFIED.
	Next string `json:"next,omitempty"`
	// Code is the code a refused finish carries; 0 (or any code that is
	// not one of the call layer's) means STEP_NOT_SATISFIED, whose reason
	// then holds Reason. With another code, Reason is the whole reason
	// the model reads.
	Code errcode.Code `json:"code,omitempty"`
	// Evidence are the call ids the verdict relies on (a judge's
	// citations); may be empty.
	Evidence []string `json:"evidence,omitempty"`
}

// Verifier checks a step of a task ("after a tool result is
// written into the observation, a step-level verifier judges whether the
// current plan item is met"). The loop asks it after every executed call
// of a catalog tool and when the model calls builtin_node_finish; a step
// is satisfied only when it says so at the end, never because a tool
// returned. An error is an infrastructure failure: the run is interrupted
// (resumable with [Continue]), as is a verifier that panics. A Verifier
// must be safe for concurrent use by the runs it serves.
type Verifier interface {
	Verify(ctx context.Context, c Check) (StepVerdict, error)
}

// VerifierFunc adapts a function to [Verifier].
type VerifierFunc func(ctx context.Context, c Check) (StepVerdict, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, c Check) (StepVerdict, error) { return f(ctx, c) }

// WithVerifier makes v the step verifier of the run: of [Loop.Run], and of
// [Loop.Resume] and [Loop.ResumeRun], which must be given it again (a
// verifier is code, not state: it is not in the snapshot). After each
// executed call of a catalog tool, the model reads the verdict after the
// result ("step check: insufficient: <reason>. Next: <next>"); when the
// model calls builtin_node_finish, a verdict other than satisfied refuses
// it (REJECTED, the verdict's code or STEP_NOT_SATISFIED, one stall). A nil
// v verifies nothing.
func WithVerifier(v Verifier) RunOption { return func(r *runOptions) { r.verifier = v } }

// StepReport is the status of the run as a step ([Result].Step).
type StepReport struct {
	// Status is in_progress while the run has not ended; once it ended,
	// satisfied (its verifier said so at the finish, or, without a
	// verifier's verdict, its completion conditions hold and no required
	// output comes from a result whose business status is insufficient or
	// accepted), insufficient (it finished on the model's word alone, or
	// on such a result: stale, one page of several, a job not done; or
	// the model gave up after a result that fell short), blocked (it
	// failed after a wall or a verifier's blocked verdict) or failed.
	Status StepStatus `json:"status"`
	// Reason says why, when the status is not satisfied (may be empty).
	Reason string `json:"reason,omitempty"`
	// Evidence are the call ids a verifier's satisfied verdict relied on.
	Evidence []string `json:"evidence,omitempty"`
}

// Input is what an earlier step of a task hands a run: the outputs it
// verified. The run's ledger holds them as one successful result, under
// the call id and tool name [evidence.StepRef](Step), before the model's
// first turn: a parameter declared tool.Step(Step, key) accepts exactly
// their values, and builtin_output_set accepts them with sourceRef
// evidence.StepRef(Step). The model sees them in its system message.
type Input struct {
	// Step names the earlier step. Required, unique among a run's inputs.
	Step string `json:"step"`
	// Outputs are the step's verified values by output key (JSON).
	Outputs map[string]json.RawMessage `json:"outputs"`
	// Provenance is recorded with the result (the step's run, when it
	// ended).
	Provenance evidence.Provenance `json:"provenance,omitzero"`
}

// StepState is one step of a task as the task's final step is shown it.
type StepState struct {
	// Step names the step.
	Step string `json:"step"`
	// Status is its status.
	Status StepStatus `json:"status"`
	// Reason says why it is not satisfied (may be empty).
	Reason string `json:"reason,omitempty"`
	// MustSay is what the answer must say when the step is missing (the
	// task's partial-success rule); may be empty.
	MustSay string `json:"must_say,omitempty"`
}

// Inputs is what a task hands one run of its steps ([WithInputs]).
type Inputs struct {
	// Steps are the verified outputs of earlier steps.
	Steps []Input `json:"steps,omitempty"`
	// UserTexts are the user's words of earlier steps (answers to their
	// follow-ups): they join the run's user words, so that a value the
	// user gave stays the user's.
	UserTexts []string `json:"-"`
	// Statuses are the statuses of the task's steps, shown to the model
	// (the task's final step receives them).
	Statuses []StepState `json:"statuses,omitempty"`
}

// WithInputs hands [Loop.Run] what earlier steps of a task produced (see
// [Input]); Resume and ResumeRun ignore it (the snapshot keeps it). The
// host is trusted to hand only values its steps verified: nothing the
// model writes can add to them.
func WithInputs(in Inputs) RunOption { return func(r *runOptions) { r.inputs = &in } }

// WithHostState seals state, under kind, into every snapshot of the run
// started by [Loop.Run], and returns it in every [Result] of the run
// (Result.HostState) and in [Pending].HostKind: a host that drives runs
// as parts of something larger (package task) keeps its own state sealed
// like the run's, resumed once with it. A snapshot with host state of
// kind K is resumed only by a [Loop.Resume] or [Loop.ResumeRun] given
// WithHostState(K, …) (whose state is ignored), so a plain resume cannot
// continue the run behind the host's back ([ErrHostState]); likewise a
// resume naming a kind refuses a snapshot without it. kind must not be
// empty; state is at most [MaxHostState] bytes.
func WithHostState(kind string, state []byte) RunOption {
	return func(r *runOptions) { r.hostKind, r.hostState = kind, state }
}

// MaxHostState bounds, in bytes, the state of [WithHostState].
const MaxHostState = 1 << 20

// ErrHostState is returned (wrapped) by [Loop.Run] for host state that is
// out of bounds, and by [Loop.Resume] and [Loop.ResumeRun] when the
// snapshot's host state kind is not the one the caller names (see
// [WithHostState]): nothing runs and no store changes.
var ErrHostState = errors.New("react: the snapshot's host state is not the caller's")

// checkHost refuses a resume whose host kind does not match the
// snapshot's.
func checkHost(s *snapState, o runOptions) error {
	kind := ""
	if s.Host != nil {
		kind = s.Host.Kind
	}
	if kind == o.hostKind {
		return nil
	}
	if kind == "" {
		return fmt.Errorf("%w: run %s has no host state; resume it without WithHostState(%q)", ErrHostState, s.Run, o.hostKind)
	}
	return fmt.Errorf("%w: run %s is driven by a %q host; resume it through it (WithHostState(%q, …))", ErrHostState, s.Run, kind, kind)
}

// startInputs records the run's inputs before its first turn: the steps'
// outputs as results in the ledger, the earlier steps' user words as the
// user's.
func (r *run) startInputs(ctx context.Context, in *Inputs) error {
	if in == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, s := range in.Steps {
		if s.Step == "" || seen[s.Step] {
			return fmt.Errorf("%w: an input without a step name, or two for one step (%q)", ErrInvalidInputs, s.Step)
		}
		seen[s.Step] = true
		payload, err := json.Marshal(s.Outputs)
		if err != nil {
			return fmt.Errorf("%w: step %s: %w", ErrInvalidInputs, s.Step, err)
		}
		ref := evidence.StepRef(s.Step)
		rec := evidence.Record{CallID: ref, Tool: ref, Outcome: outcome.Success, Payload: payload, Attempt: 1, Provenance: s.Provenance}
		if err := r.l.ledger.Append(ctx, r.id, rec); err != nil {
			return fmt.Errorf("react: evidence: %w", err)
		}
		r.ids[ref] = struct{}{} // no model call may take the id
	}
	for _, t := range in.UserTexts {
		t = validText(t)
		if strings.TrimSpace(t) == "" {
			continue
		}
		if err := r.l.ledger.AddUserText(ctx, r.id, t); err != nil {
			return fmt.Errorf("react: evidence: %w", err)
		}
		r.userTexts = append(r.userTexts, t)
	}
	if len(in.Steps) > 0 || len(in.Statuses) > 0 {
		r.inputs = &Inputs{Steps: in.Steps, Statuses: in.Statuses}
	}
	return nil
}

// ErrInvalidInputs is wrapped by the error of [Loop.Run] for inputs that
// cannot be recorded ([WithInputs]): nothing runs.
var ErrInvalidInputs = errors.New("react: invalid inputs")

// inputsPrompt is the part of the system message that shows the inputs
// and the task's step statuses.
func (r *run) inputsPrompt() string {
	in := r.inputs
	if in == nil {
		return ""
	}
	var b strings.Builder
	if len(in.Steps) > 0 {
		b.WriteString(r.cat.Text(prompt.InputsHeader))
		for _, s := range in.Steps {
			v, _ := json.Marshal(s.Outputs)
			b.WriteString("\n")
			b.WriteString(r.cat.Text(prompt.InputLine, "ref", evidence.StepRef(s.Step), "step", s.Step, "values", string(v)))
		}
	}
	if len(in.Statuses) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(r.cat.Text(prompt.StatusesHeader))
		for _, s := range in.Statuses {
			detail := ""
			if s.Reason != "" {
				detail = r.sep() + s.Reason
			}
			if s.MustSay != "" && s.Status != StepSatisfied {
				detail += r.cat.Text(prompt.MustSay, "text", s.MustSay)
			}
			b.WriteString("\n")
			b.WriteString(r.cat.Text(prompt.StatusLine, "step", s.Step, "status", s.Status.Text(r.cat), "detail", detail))
		}
	}
	return b.String()
}

// sep is ": " in English, "：" in Chinese.
func (r *run) sep() string {
	if r.cat.Lang() == prompt.Chinese {
		return "："
	}
	return ": "
}

// verify asks the run's verifier, turning a panic into an error and
// keeping only what a verdict may hold.
func (r *run) verify(ctx context.Context, c Check) (v StepVerdict, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = StepVerdict{}, fmt.Errorf("react: step verifier panicked: %v", p)
		}
	}()
	c.Run, c.Node, c.Outputs, c.Transcript = r.id, r.node.Name, r.outputs, r.msgs[1:len(r.msgs):len(r.msgs)]
	if r.host != nil {
		c.HostState = r.host.State
	}
	v, err = r.verifier.Verify(ctx, c)
	if err != nil {
		return StepVerdict{}, fmt.Errorf("react: step verifier: %w", err)
	}
	if !v.Status.IsValid() || v.Status == StepPending || v.Status == StepInProgress {
		return StepVerdict{}, fmt.Errorf("react: step verifier: status %v is not a verdict (want satisfied, insufficient, blocked, failed or none)", v.Status)
	}
	v.Reason, v.Next = tool.ClipDetail(validText(v.Reason)), validText(strings.TrimSpace(v.Next))
	if !v.Code.IsValid() || v.Code.Layer() != errcode.LayerCall {
		v.Code = 0
	}
	v.Evidence = slices.Clone(v.Evidence)
	for i, e := range v.Evidence {
		v.Evidence[i] = validText(e)
	}
	return v, nil
}

// verifyCall asks the verifier about the executed catalog call of report
// rep and observation obs; nil without a verifier or an opinion.
func (r *run) verifyCall(ctx context.Context, rep CallReport, obs observation.Observation) (*StepVerdict, error) {
	var result json.RawMessage
	if obs.Outcome() == outcome.Success && obs.Data() != nil {
		result, _ = obs.DataJSON()
	}
	calls := slices.Concat(r.calls, []CallReport{rep})
	v, err := r.verify(ctx, Check{Call: &rep, Result: result, Calls: calls})
	if err != nil || v.Status == StepNone {
		return nil, err
	}
	r.check = &v
	return &v, nil
}

// checkNote is what the model reads of a verdict after a call's result.
func (r *run) checkNote(v StepVerdict) string {
	status := v.Status.Text(r.cat)
	if v.Status == StepSatisfied {
		return r.cat.Text(prompt.StepCheckPassed, "status", status)
	}
	next := v.Next
	if next == "" {
		next = r.cat.Text(prompt.NextStepUnsatisfied)
	}
	reason := v.Reason
	if reason == "" {
		reason = status
	}
	return r.cat.Text(prompt.StepCheckNote, "status", status, "reason", reason, "next", next)
}

// verifyEnd asks the verifier about the model's finish; a verdict other
// than satisfied or none refuses it. It returns the verdict to keep with
// the finish call's report (nil without a verifier or an opinion).
func (r *run) verifyEnd(ctx context.Context, summary string, eff *effect) (*StepVerdict, *tool.Rejection) {
	if r.verifier == nil {
		return nil, nil
	}
	v, err := r.verify(ctx, Check{End: true, Summary: summary, Calls: r.calls[:len(r.calls):len(r.calls)]})
	if err != nil {
		eff.infra = err
		return nil, nil
	}
	if v.Status == StepNone {
		return nil, nil
	}
	r.check = &v
	if v.Status == StepSatisfied {
		r.verified = true
		return &v, nil
	}
	next := v.Next
	if next == "" {
		next = r.cat.Text(prompt.NextStepUnsatisfied)
	}
	code, reason := v.Code, v.Reason
	if code == 0 || reason == "" {
		detail := v.Reason
		if detail == "" {
			detail = v.Status.Text(r.cat)
		}
		code, reason = errcode.StepNotSatisfied, r.cat.Reason(errcode.StepNotSatisfied, "status", v.Status.Text(r.cat), "detail", detail)
	}
	return &v, tool.Reject(code, reason, next)
}

// stepReport is the run's status as a step.
func (r *run) stepReport() StepReport {
	switch r.status {
	case Finished:
		if r.verified && r.check != nil {
			return StepReport{Status: StepSatisfied, Evidence: r.check.Evidence}
		}
		if r.goal() == GoalMet {
			if rep, short := r.shortSource(); short {
				detail := rep.Reason
				if rep.Business == BusinessAccepted {
					detail = r.cat.Text(prompt.StatusAccepted) + " " + rep.Reason
				}
				return StepReport{Status: StepInsufficient, Reason: r.cat.Text(prompt.ReasonInsufficient, "tool", rep.Tool, "detail", detail)}
			}
			return StepReport{Status: StepSatisfied}
		}
		return StepReport{Status: StepInsufficient, Reason: r.cat.Text(prompt.ReasonModelWord)}
	case Failed:
		reason := ""
		if r.failure != nil {
			reason = r.failure.Reason
		}
		if c := r.check; c != nil && c.Status == StepBlocked {
			return StepReport{Status: StepBlocked, Reason: firstNonEmpty(c.Reason, reason)}
		}
		if rep, ok := r.lastExecuted(); ok {
			switch rep.Business { //nolint:exhaustive // the other statuses leave the step failed
			case BusinessBlocked:
				return StepReport{Status: StepBlocked, Reason: firstNonEmpty(reason, rep.Tool)}
			case BusinessInsufficient:
				if r.failure != nil && r.failure.Kind == FailedByModel {
					// The model gave up on results that fell short (empty,
					// stale, incomplete): more information may complete it.
					return StepReport{Status: StepInsufficient, Reason: reason}
				}
			}
		}
		return StepReport{Status: StepFailed, Reason: reason}
	case Suspended, Interrupted:
	}
	rep := StepReport{Status: StepInProgress}
	if c := r.check; c != nil && c.Status != StepSatisfied {
		rep.Reason = c.Reason
	}
	return rep
}

// shortSource returns the report of a call whose result a required output
// was set from and whose business status says it does not serve the goal
// (insufficient: stale, a page followed by more, short of the contract;
// accepted: a job not done): a completion condition met by such a value
// does not satisfy the step.
func (r *run) shortSource() (CallReport, bool) {
	for _, k := range r.required {
		v := r.outputs[k]
		if v.Source != SourceToolResult {
			continue
		}
		for i := len(r.calls) - 1; i >= 0; i-- {
			if c := r.calls[i]; c.CallID == v.Ref {
				if c.Business == BusinessInsufficient || c.Business == BusinessAccepted {
					return c, true
				}
				break
			}
		}
	}
	return CallReport{}, false
}

// lastExecuted returns the report of the run's last executed catalog
// call.
func (r *run) lastExecuted() (CallReport, bool) {
	for i := len(r.calls) - 1; i >= 0; i-- {
		if c := r.calls[i]; !c.Builtin && c.Execution != ExecNone {
			return c, true
		}
	}
	return CallReport{}, false
}

// restoreCheck rebuilds the latest verdict from the restored call reports.
func (r *run) restoreCheck() {
	for i := len(r.calls) - 1; i >= 0; i-- {
		if c := r.calls[i].Check; c != nil {
			r.check = c
			return
		}
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// wireHost is the host state of a run ([WithHostState]), as sealed.
type wireHost struct {
	Kind  string `json:"kind"`
	State []byte `json:"state,omitempty"`
}

// host returns the host state the options name, or an error for one out
// of bounds; nil without one.
func (o runOptions) host() (*wireHost, error) {
	if o.hostKind == "" && o.hostState == nil {
		return nil, nil
	}
	switch {
	case o.hostKind == "":
		return nil, fmt.Errorf("%w: WithHostState without a kind", ErrHostState)
	case len(o.hostKind) > MaxToolName:
		return nil, fmt.Errorf("%w: a kind of %d bytes; at most %d", ErrHostState, len(o.hostKind), MaxToolName)
	case len(o.hostState) > MaxHostState:
		return nil, fmt.Errorf("%w: %d bytes of state; at most %d", ErrHostState, len(o.hostState), MaxHostState)
	}
	return &wireHost{Kind: validText(o.hostKind), State: append([]byte(nil), o.hostState...)}, nil
}

// checkInputs refuses inputs that cannot be recorded, before anything
// runs.
func (o runOptions) checkInputs() error {
	if o.inputs == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, s := range o.inputs.Steps {
		if s.Step == "" || seen[s.Step] {
			return fmt.Errorf("%w: an input without a step name, or two for one step (%q)", ErrInvalidInputs, s.Step)
		}
		seen[s.Step] = true
		for k, v := range s.Outputs {
			if !json.Valid(v) {
				return fmt.Errorf("%w: step %s: output %s is not JSON", ErrInvalidInputs, s.Step, k)
			}
		}
	}
	for _, s := range o.inputs.Statuses {
		if s.Step == "" || !s.Status.IsValid() || s.Status == StepNone {
			return fmt.Errorf("%w: a status without a step or a status (%q)", ErrInvalidInputs, s.Step)
		}
	}
	return nil
}

// CheckNode reports whether node can run in l: the checks [Loop.Run]
// makes before anything runs (the node's definition, its tools in the
// catalog, their schemas, what Node.Require asks of their contracts), as
// an error wrapping [ErrInvalidNode]. A host that runs nodes later (the
// steps of a task) checks them up front with it.
func (l *Loop) CheckNode(node Node) error {
	_, err := l.newRun("check", node)
	return err
}
